package integration_test

import (
	"cmp"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/watchdog"
)

// taker takes a lock (or leads) and returns its context, its fencing token
// and its release.
type taker func(ctx context.Context) (context.Context, int64, func(context.Context) error, error)

// A holder cut off from the server learns that its lease is lost before
// its lease ends on the server, with busy goroutines in its process: its
// context ends by a local timer armed from the send of its last confirmed
// renewal, a safety margin early, not when its blocked renewal returns.
//
// During each cut-over four goroutines burn CPU, and one of them samples
// the old context: time.Now(), then Err(). A sample that finds it live
// proves it was live at that instant, so a sample after the successor's
// grant on the server (its key's PEXPIRETIME less its lease, by the same
// host's clock) is an overlap. Sampling can miss an overlap, never invent
// one. The successor, on another Client of this process, also finds the
// old context ended when its Campaign or Lock returns. Each cut-over lasts about a
// lease, so the lease is short (200 ms) to keep 100 of them per kind well
// under a minute; the CPU is burnt only during the cut-overs, so that
// setting each up stays quick.
//
// An explicit lease (mutex-explicit, of the same 200 ms) is no different:
// its context ends at the same deadline (by a local timer, or by Err past
// it), whether or not the holder is cut off, and its successor is granted
// when the server lets the lease go.
func TestLostLeaseEndsBeforeLeaseEndsUnderLoad(t *testing.T) {
	t.Parallel()
	const (
		lease    = 200 * time.Millisecond
		cutovers = 100
		burners  = 4

		successorLease = time.Minute
	)
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	rc := s.Client(t)
	kinds := []struct {
		name  string
		take  func(t *testing.T, c *distsync.Client, name string, lease time.Duration) (taker, string)
		cause error // of the old context's end: ErrLeaseLost when nil
	}{
		{"mutex", func(t *testing.T, c *distsync.Client, name string, lease time.Duration) (taker, string) {
			m := mutexOf(t, c, name)
			return func(ctx context.Context) (context.Context, int64, func(context.Context) error, error) {
				l, err := m.Lock(ctx)
				if err != nil {
					return nil, 0, nil, err
				}
				tok, err := m.Token(l)
				return l, tok, m.Unlock, err
			}, m.Key()
		}, nil},
		{"election", func(t *testing.T, c *distsync.Client, name string, lease time.Duration) (taker, string) {
			e := electionOf(t, c, name)
			return func(ctx context.Context) (context.Context, int64, func(context.Context) error, error) {
				l, term, err := e.Campaign(ctx, "v")
				return l, term, e.Resign, err
			}, e.Key()
		}, nil},
		{"mutex-explicit", func(t *testing.T, c *distsync.Client, name string, lease time.Duration) (taker, string) {
			m := mutexOf(t, c, name)
			return func(ctx context.Context) (context.Context, int64, func(context.Context) error, error) {
				l, err := m.TryLock(ctx, distsync.Forever, lease)
				if err != nil {
					return nil, 0, nil, err
				}
				tok, err := m.Token(l)
				return l, tok, m.Unlock, err
			}, m.Key()
		}, distsync.ErrLeaseExpired},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			p := startCutProxy(t, s.Addr())
			holder, key := k.take(t, connect(t, distsync.Options{Addrs: []string{p.Addr()}, Watchdog: watchdog.Config{Lease: lease}}), k.name, lease)
			// The successor's lease is not what is tested: long, so that
			// nothing renews it before its grant's time is read.
			successor, _ := k.take(t, dstest.ClientOn(t, s, func(o *distsync.Options) { o.Watchdog.Lease = successorLease }), k.name, successorLease)
			ctx := context.Background()
			overlaps, seen := 0, 0
			least := time.Duration(1<<63 - 1) // the smallest lead of a context's end over its key's
			for i := range cutovers {
				p.heal()
				l, tok, _, err := holder(ctx)
				if err != nil { // a late grant under the load: not what is tested
					l, tok, _, err = holder(ctx)
				}
				require.NoError(t, err, "cut-over %d", i)

				var lastLive atomic.Int64 // µs, by the wall clock the server's TIME reads too
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for b := range burners {
					wg.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							for range 1024 {
								if b == 0 {
									if now := time.Now(); l.Err() == nil {
										lastLive.Store(now.UnixMicro())
									}
								}
							}
						}
					})
				}
				p.cut()
				sl, stok, release, err := successor(ctx)
				require.NoError(t, err, "cut-over %d", i)
				assert.Error(t, l.Err(), "cut-over %d: the successor was granted while the old context lived", i)
				close(stop)
				wg.Wait()
				assert.Greater(t, stok, tok)
				// The grant set the key's expiry to the server's ms when
				// the script began, plus the lease: the grant came within
				// the next 2 ms (the ms's rest and the script's run).
				ends, err := rc.Do(ctx, rc.B().Pexpiretime().Key(key).Build()).AsInt64()
				require.NoError(t, err)
				granted := time.UnixMilli(ends).Add(2*time.Millisecond - successorLease)
				awaitEnd(t, l, cmp.Or(k.cause, distsync.ErrLeaseLost))
				require.NoError(t, release(sl))
				if live := lastLive.Load(); live > 0 {
					seen++
					lead := granted.Sub(time.UnixMicro(live))
					least = min(least, lead)
					if lead <= 0 {
						overlaps++
					}
				}
			}
			p.heal()
			t.Logf("%d cut-overs, %d sampled; the old context's last live sample came at least %v before the successor's grant (GOMAXPROCS %d)", cutovers, seen, least, runtime.GOMAXPROCS(0))
			assert.Zero(t, overlaps, "old contexts seen live after the successor's grant, of %d cut-overs", cutovers)
		})
	}
}
