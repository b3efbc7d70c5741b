package integration_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/semaphore"
)

// soakLocker is what the soak drives: acquire with a wait and a lease,
// release, and the hold's fencing token (0 where the primitive has none).
type soakLocker struct {
	lock   func(ctx context.Context, wait, lease time.Duration) (context.Context, error)
	unlock func(ctx context.Context) error
	token  func(ctx context.Context) int64
}

// TestFaultSoak drives the acquire, release, renew and leave paths of every
// exclusive primitive through random faults on every script command of three
// Clients: requests lost, replies lost after the server applied them,
// replies late by longer than a short lease. Holders use watchdog leases
// (renewed every 200 ms) and explicit ones, contexts that end while they
// wait or hold, and waits that give up. The history checker then asserts
// that no two holds overlapped: no double grant, and no holder's context
// alive past its hold. At the end, with the faults cleared, the lock is free
// within a second: nothing was left held by nobody.
func TestFaultSoak(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	kinds := map[string]func(t *testing.T, c *distsync.Client, name string) soakLocker{}
	for _, k := range lockKinds[:3] {
		kinds[k.name] = func(t *testing.T, c *distsync.Client, name string) soakLocker {
			l := k.make(t, c, name)
			tokenOf := l.(interface {
				Token(context.Context) (int64, error)
			})
			return soakLocker{
				lock: func(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
					return l.TryLock(ctx, wait, lease)
				},
				unlock: l.Unlock,
				token: func(ctx context.Context) int64 {
					tok, _ := tokenOf.Token(ctx)
					return tok
				},
			}
		}
	}
	kinds["permit"] = func(t *testing.T, c *distsync.Client, name string) soakLocker {
		ps := permitSem(t, c, name, 1)
		type key struct{}
		return soakLocker{
			lock: func(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
				p, err := ps.TryAcquire(ctx, wait, lease)
				if err != nil {
					return nil, err
				}
				return context.WithValue(p.Context(), key{}, p), nil
			},
			unlock: func(ctx context.Context) error { return ps.Release(ctx, ctx.Value(key{}).(*semaphore.Permit)) },
			token:  func(context.Context) int64 { return 0 },
		}
	}
	for name, newLocker := range kinds {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHistory(name)
			lockName := dstest.Name(t)
			var faults []*dstest.Faulty
			var lockers []soakLocker
			for range 3 {
				c, f := faultyClient(t, s, 600*time.Millisecond)
				faults = append(faults, f)
				lockers = append(lockers, newLocker(t, c, lockName))
				chance := func(p float64) func([]string) bool {
					return func(cmd []string) bool { return len(cmd) > 0 && cmd[0] == "EVALSHA" && rand.Float64() < p }
				}
				f.Inject(&dstest.Rule{Match: chance(0.04), Fault: dstest.LoseRequest})
				f.Inject(&dstest.Rule{Match: chance(0.04), Fault: dstest.LoseReply})
				f.Inject(&dstest.Rule{Match: chance(0.04), Fault: dstest.LateReply, Delay: 400 * time.Millisecond})
			}
			end := time.Now().Add(3 * time.Second)
			var wg sync.WaitGroup
			var mu sync.Mutex
			granted := 0
			for i, l := range lockers {
				for g := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						who := fmt.Sprintf("c%d.g%d", i, g)
						for time.Now().Before(end) {
							lease := time.Duration(0)
							if rand.IntN(2) == 0 {
								lease = 300 * time.Millisecond
							}
							ctx, cancel := context.WithTimeout(context.Background(), time.Duration(200+rand.IntN(800))*time.Millisecond)
							held, err := l.lock(ctx, 500*time.Millisecond, lease)
							if err != nil {
								cancel()
								continue
							}
							hd := h.acquired(who, l.token(held))
							mu.Lock()
							granted++
							mu.Unlock()
							stop := make(chan struct{})
							timer := time.AfterFunc(time.Duration(rand.IntN(30))*time.Millisecond, func() { close(stop) })
							hd.work(held, stop)
							timer.Stop()
							_ = hd.release(held, l.unlock) // may fail under the faults; the context ends all the same
							cancel()
						}
					}()
				}
			}
			wg.Wait()
			t.Logf("%d holds granted under faults", granted)
			require.NotZero(t, granted)
			if name == "permit" {
				counted(h)
				require.Empty(t, h.overlaps(), "two permits of a one-permit semaphore at once\n%v", h)
			} else {
				requireExclusive(t, h)
			}
			for _, f := range faults {
				f.Clear()
			}
			// An acquisition held by nobody and renewed would never end; the
			// rest end within a lease, 600 ms, but a loaded server may take
			// longer to grant the lock.
			ctx, err := lockers[0].lock(context.Background(), 3*time.Second, 0)
			require.NoError(t, err, "nothing is left held by nobody (the leases are 600 ms)")
			require.NoError(t, lockers[0].unlock(ctx))
		})
	}
}
