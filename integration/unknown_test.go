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
	"github.com/distsync/distsync/semaphore"
)

// A waiter one of whose attempts had an unknown outcome (its request was
// lost, as when the server restarts under it), then was refused and kept
// waiting, takes the lock when it is released long after that attempt: the
// refusal shows the lost attempt granted nothing, so the lease is counted
// from the refusal on, not from the lost attempt. Counting it from the lost
// attempt refused the grant as late ("the reply came 3s after the
// request"), and `distsync run` gave up after a Redis restart.
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
			holderKind := k
			if k.name == "rwlock-read" {
				holderKind = lockKinds[2] // a writer keeps a reader out
			}
			holder := holderKind.make(t, dstest.ClientOn(t, s), name)
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

// A repeated attempt of an acquisition that was granted before (its first
// reply lost) renews the lease from its own run, as a new grant would: the
// caller counts its explicit lease from the repeated attempt's send, so the
// server must not end it earlier.
func TestRepeatedAttemptRenewsTheLease(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	const gap = 800 * time.Millisecond // between the granting attempt and its repeat
	check := func(t *testing.T, f *dstest.Faulty, script string, acquire func() (ttl func() time.Duration)) {
		t.Helper()
		var mu sync.Mutex
		var lostAt time.Time
		f.Inject(&dstest.Rule{Match: func(cmd []string) bool {
			if !dstest.Script(script)(cmd) {
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
			return dstest.Script(script)(cmd) && !lostAt.IsZero() && time.Since(lostAt) < gap
		}, Fault: dstest.LoseRequest})
		ttl := acquire()
		assert.Greater(t, ttl(), lease-gap/2, "the repeat renewed the lease from its own run")
	}
	s := redistest.Shared(t)
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			l := k.make(t, c, dstest.Name(t))
			ctx := context.Background()
			warm, err := l.TryLock(ctx, 0, lease) // the script is cached: the lost reply's attempt applies
			require.NoError(t, err)
			require.NoError(t, l.Unlock(warm))
			var held context.Context
			check(t, f, k.acquire, func() func() time.Duration {
				held, err = l.TryLock(ctx, 10*time.Second, lease)
				require.NoError(t, err)
				return func() time.Duration {
					ttl, err := l.TTL(ctx)
					require.NoError(t, err)
					return ttl
				}
			})
			n, err := l.HoldCount(held)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "granted once")
			require.NoError(t, l.Unlock(held))
		})
	}
	t.Run("permit", func(t *testing.T) {
		t.Parallel()
		c, f := faultyClient(t, s, 0)
		ps := permitSem(t, c, dstest.Name(t), 1)
		ctx := context.Background()
		warm, err := ps.TryAcquire(ctx, 0, lease)
		require.NoError(t, err)
		require.NoError(t, ps.Release(ctx, warm))
		var p *semaphore.Permit
		check(t, f, "Take n permits of the permit semaphore", func() func() time.Duration {
			p, err = ps.TryAcquire(ctx, 10*time.Second, lease)
			require.NoError(t, err)
			return func() time.Duration {
				ttl, err := p.TTL(ctx)
				require.NoError(t, err)
				return ttl
			}
		})
		require.NoError(t, ps.Release(ctx, p))
	})
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
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c, f := faultyClient(t, s, 0)
			l := k.make(t, c, dstest.Name(t))
			ctx := context.Background()

			rule := f.Inject(late(k.acquire))
			_, err := l.TryLock(ctx, 0, lease)
			require.ErrorIs(t, err, distsync.ErrNotAcquired, "no wait left: the late grant is refused")
			require.Equal(t, 1, rule.Hits())
			freeWithin(t, k.make(t, dstest.ClientOn(t, s), dstest.Name(t)), 5*time.Second, "the late grant was given back")

			rule = f.Inject(late(k.acquire))
			held, err := l.TryLock(ctx, 10*time.Second, lease)
			require.NoError(t, err, "a new acquisition after the late grant")
			require.Equal(t, 1, rule.Hits())
			n, err := l.HoldCount(held)
			require.NoError(t, err)
			assert.Equal(t, 1, n, "the late grant was given back, not kept beside the new one")
			require.NoError(t, l.Unlock(held))
		})
	}
	t.Run("permit", func(t *testing.T) {
		t.Parallel()
		c, f := faultyClient(t, s, 0)
		ps := permitSem(t, c, dstest.Name(t), 2)
		ctx := context.Background()
		f.Inject(late("Take n permits of the permit semaphore"))
		p, err := ps.TryAcquire(ctx, 10*time.Second, lease)
		require.NoError(t, err, "a new acquisition after the late grant")
		require.Eventually(t, func() bool {
			held, err := ps.Held(ctx)
			return err == nil && held == 1
		}, 5*time.Second, time.Millisecond, "the late permit was given back")
		require.NoError(t, ps.Release(ctx, p))
	})
}
