package integration_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// A waiter one of whose attempts had an unknown outcome (its request was
// lost, as when the server restarts under it), then was refused and kept
// waiting, takes the lock when it is released long after that attempt: the
// lease is counted from the attempt that answered, which renews it (see
// TestRepeatedAttemptRenewsTheLease), not from the lost attempt. Counting
// it from the lost attempt refused the grant as late ("the reply came 3s
// after the request"), and `distsync run` gave up after a Redis restart.
func TestWaiterAfterUnknownAttemptTakesTheLock(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	const lease = time.Second
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, f := faultyClient(t, s, lease)
			name := dstest.Name(t)
			l := k.make(t, c, name)
			holder := k.rival(t, dstest.ClientOn(t, s), name)
			held, err := holder.TryLock(ctx, 0, 0)
			require.NoError(t, err)

			lost := f.Inject(&dstest.Rule{Match: dstest.Script(k.acquire), Fault: dstest.LoseRequest, Times: 1})
			type result struct {
				ctx context.Context
				err error
			}
			done := make(chan result, 1)
			go func() {
				got, err := l.TryLock(ctx, 20*time.Second, 0)
				done <- result{got, err}
			}()
			<-lost.Hit()
			lostAt := time.Now()
			waiting := l.(interface {
				Waiting(ctx context.Context) (int, error)
			})
			require.Eventually(t, func() bool {
				n, err := waiting.Waiting(ctx)
				return err == nil && n == 1
			}, 10*time.Second, time.Millisecond, "the waiter was refused and queued")
			// The condition under test: the lease counted from the lost
			// attempt has ended before the lock is released.
			time.Sleep(time.Until(lostAt.Add(lease + lease/2)))
			require.NoError(t, holder.Unlock(held))

			r := <-done
			require.NoError(t, r.err, "the grant after the refusal is this acquisition's")
			require.NoError(t, r.ctx.Err())
			n, err := l.HoldCount(r.ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			require.NoError(t, l.Unlock(r.ctx))
		})
	}
}

// leased is a lock kind, or the permit semaphore (with 2 permits), for the
// tests below: take acquires the name on c within wait with an explicit
// lease.
type leased struct {
	name    string
	acquire string // the acquisition script's text (dstest.Script)
	take    func(t *testing.T, c *distsync.Client, name string) func(wait, lease time.Duration) (*taken, error)
}

// taken is what take acquired: its server lease, how many acquisitions of
// the name its Client holds (the hold count, or the permits held), and its
// release.
type taken struct {
	ttl     func() (time.Duration, error)
	count   func() (int, error)
	release func() error
}

// leasedKinds are lockKinds and the permit semaphore.
func leasedKinds() []leased {
	var ks []leased
	for _, k := range lockKinds {
		ks = append(ks, leased{k.name, k.acquire, func(t *testing.T, c *distsync.Client, name string) func(wait, lease time.Duration) (*taken, error) {
			l := k.make(t, c, name)
			return func(wait, lease time.Duration) (*taken, error) {
				held, err := l.TryLock(context.Background(), wait, lease)
				if err != nil {
					return nil, err
				}
				return &taken{
					ttl:     func() (time.Duration, error) { return l.TTL(context.Background()) },
					count:   func() (int, error) { return l.HoldCount(held) },
					release: func() error { return l.Unlock(held) },
				}, nil
			}
		}})
	}
	return append(ks, leased{"permit", "Take n permits of the permit semaphore", func(t *testing.T, c *distsync.Client, name string) func(wait, lease time.Duration) (*taken, error) {
		ps := permitSem(t, c, name, 2)
		return func(wait, lease time.Duration) (*taken, error) {
			p, err := ps.TryAcquire(context.Background(), wait, lease)
			if err != nil {
				return nil, err
			}
			return &taken{
				ttl: func() (time.Duration, error) { return p.TTL(context.Background()) },
				count: func() (int, error) {
					n, err := ps.Held(context.Background())
					return int(n), err
				},
				release: func() error { return ps.Release(context.Background(), p) },
			}, nil
		}
	}})
}

// A repeated attempt of an acquisition that was granted before (its first
// reply lost) renews the lease from its own run, as a new grant would: the
// caller counts its explicit lease from the repeated attempt's send, so the
// server must not end it earlier.
func TestRepeatedAttemptRenewsTheLease(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	const gap = 800 * time.Millisecond // between the granting attempt and its repeat
	s := redistest.Shared(t)
	for _, k := range leasedKinds() {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			take := k.take(t, c, dstest.Name(t))
			warm, err := take(0, lease) // the script is cached: the lost reply's attempt applies
			require.NoError(t, err)
			require.NoError(t, warm.release())

			var mu sync.Mutex
			var lostAt time.Time
			f.Inject(&dstest.Rule{Match: func(cmd []string) bool {
				if !dstest.Script(k.acquire)(cmd) {
					return false
				}
				mu.Lock()
				lostAt = time.Now()
				mu.Unlock()
				return true
			}, Fault: dstest.LoseReply, Times: 1})
			// The repeats fail on the wire until gap has passed.
			f.Inject(&dstest.Rule{Match: func(cmd []string) bool {
				mu.Lock()
				defer mu.Unlock()
				return dstest.Script(k.acquire)(cmd) && !lostAt.IsZero() && time.Since(lostAt) < gap
			}, Fault: dstest.LoseRequest})
			got, err := take(10*time.Second, lease)
			require.NoError(t, err)
			ttl, err := got.ttl()
			require.NoError(t, err)
			assert.Greater(t, ttl, lease-gap/2, "the repeat renewed the lease from its own run")
			n, err := got.count()
			require.NoError(t, err)
			assert.Equal(t, 1, n, "granted once")
			require.NoError(t, got.release())
		})
	}
}

// A grant whose reply came after its lease could have ended is refused and
// given back; when the wait allows, a new acquisition is tried instead of
// ending the wait, so a blocking lock is not lost to one slow reply.
func TestLateGrantIsTriedAgainWithinTheWait(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	late := func(script string) *dstest.Rule {
		return &dstest.Rule{Match: dstest.Script(script), Fault: dstest.LateReply, Delay: lease + lease/2, Times: 1}
	}
	s := redistest.Shared(t)
	for _, k := range leasedKinds() {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			name := dstest.Name(t)
			take := k.take(t, c, name)

			if k.name != "permit" {
				rule := f.Inject(late(k.acquire))
				_, err := take(0, lease)
				require.ErrorIs(t, err, distsync.ErrNotAcquired, "no wait left: the late grant is refused")
				require.Equal(t, 1, rule.Hits())
				freeWithin(t, kindNamed(k.name).rival(t, dstest.ClientOn(t, s), name), 5*time.Second, "the late grant was given back")
			}

			rule := f.Inject(late(k.acquire))
			got, err := take(10*time.Second, lease)
			require.NoError(t, err, "a new acquisition after the late grant")
			require.Equal(t, 1, rule.Hits())
			const why = "the late grant was given back, not kept beside the new one"
			if k.name == "permit" {
				// Another permit: its give-back may still be on the wire.
				require.Eventually(t, func() bool {
					n, err := got.count()
					return err == nil && n == 1
				}, 5*time.Second, time.Millisecond, why)
			} else {
				n, err := got.count()
				require.NoError(t, err)
				assert.Equal(t, 1, n, why)
			}
			require.NoError(t, got.release())
		})
	}
}
