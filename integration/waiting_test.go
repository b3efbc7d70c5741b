package integration_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// Waiting, as DESIGN.md states it: a wake-up given to a waiter that is gone
// reaches a live waiter within a short bound, and a waiter is an
// acquisition, not an owner.

// waitKind is one primitive whose waiters the tests below make: block keeps
// waiters of the name out (on c) and returns what lets them in; take waits
// at most wait (until ctx ends) and gives back what it got.
type waitKind struct {
	name  string
	block func(t *testing.T, c *distsync.Client, name string) (unblock func())
	taker func(t *testing.T, c *distsync.Client, name string) (take func(ctx context.Context, wait time.Duration) error)
}

// lockWaitKind is the waitKind of lock kind k: the rival of k blocks it,
// but readers block a writer (whose wake-up then comes from a read release,
// which wakes one writer).
func lockWaitKind(k lockKind) waitKind {
	blocker := k.rival
	if k.name == "rwlock-write" {
		blocker = lockKinds[slices.IndexFunc(lockKinds, func(k lockKind) bool { return k.name == "rwlock-read" })].make
	}
	return waitKind{
		name: k.name,
		block: func(t *testing.T, c *distsync.Client, name string) func() {
			l := blocker(t, c, name)
			h, err := l.TryLock(context.Background(), 0, 0)
			require.NoError(t, err)
			return func() { require.NoError(t, l.Unlock(h)) }
		},
		taker: func(t *testing.T, c *distsync.Client, name string) func(context.Context, time.Duration) error {
			l := k.make(t, c, name)
			return func(ctx context.Context, wait time.Duration) error {
				h, err := l.TryLock(ctx, wait, 0)
				if err != nil {
					return err
				}
				return l.Unlock(h)
			}
		},
	}
}

var waitKinds = func() []waitKind {
	var ks []waitKind
	for _, k := range lockKinds {
		ks = append(ks, lockWaitKind(k))
	}
	ks = append(ks,
		waitKind{
			name: "semaphore",
			block: func(t *testing.T, c *distsync.Client, name string) func() {
				s, err := c.Semaphore(name)
				require.NoError(t, err)
				_, err = s.TrySetPermits(context.Background(), 1)
				require.NoError(t, err)
				require.NoError(t, s.Acquire(context.Background(), 1))
				return func() { require.NoError(t, s.Release(context.Background(), 1)) }
			},
			taker: func(t *testing.T, c *distsync.Client, name string) func(context.Context, time.Duration) error {
				s, err := c.Semaphore(name)
				require.NoError(t, err)
				return func(ctx context.Context, wait time.Duration) error {
					if err := s.TryAcquire(ctx, 1, wait); err != nil {
						return err
					}
					return s.Release(ctx, 1)
				}
			},
		},
		waitKind{
			name: "permitsemaphore",
			block: func(t *testing.T, c *distsync.Client, name string) func() {
				s, err := c.PermitSemaphore(name)
				require.NoError(t, err)
				_, err = s.TrySetPermits(context.Background(), 1)
				require.NoError(t, err)
				p, err := s.Acquire(context.Background())
				require.NoError(t, err)
				return func() { require.NoError(t, s.Release(context.Background(), p)) }
			},
			taker: func(t *testing.T, c *distsync.Client, name string) func(context.Context, time.Duration) error {
				s, err := c.PermitSemaphore(name)
				require.NoError(t, err)
				return func(ctx context.Context, wait time.Duration) error {
					p, err := s.TryAcquire(ctx, wait, 0)
					if err != nil {
						return err
					}
					return s.Release(ctx, p)
				}
			},
		},
	)
	return ks
}()

// waitersOf waits until name has n registered waiters.
func waitersOf(t *testing.T, c *distsync.Client, name string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		info, err := c.Inspect(context.Background(), name)
		return err == nil && len(info.Waiters) == n
	}, 10*time.Second, time.Millisecond, "%d waiters", n)
}

// long is the lease, and the waiter window, of the tests below: a waiter
// left to its retry timer sleeps that long.
const long = 2 * time.Minute

// A wake-up given to a waiter that vanished (its Client closed without
// leaving) reaches the live waiter behind it within a short bound (the
// hand-off lease, 1 s), not its retry timer, a lease later. The vanished one
// registered first, and for longer: it heads a queue, is the oldest, and is
// the writer whose registration ends last.
func TestWakeUpReachesLiveWaiter(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for _, k := range waitKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			slow := func(o *distsync.Options) { o.Watchdog.Lease, o.WaiterWindow = long, long }
			holder := dstest.ClientOn(t, s, slow)
			live := dstest.ClientOn(t, s, slow)
			doomed := dstest.ClientOn(t, s, slow, func(o *distsync.Options) { o.WaiterWindow = 2 * long })
			name := dstest.Name(t) + uuid.NewString() // a test left waiters
			ctx := context.Background()
			unblock := k.block(t, holder, name)

			gone := make(chan error, 1)
			vanishing := k.taker(t, doomed, name)
			go func() { gone <- vanishing(ctx, distsync.Forever) }()
			waitersOf(t, holder, name, 1)
			got := make(chan error, 1)
			take := k.taker(t, live, name)
			go func() { got <- take(ctx, distsync.Forever) }()
			waitersOf(t, holder, name, 2)
			dstest.Crash(doomed) // it vanishes without leaving
			assert.ErrorIs(t, <-gone, distsync.ErrClosed)

			unblock()
			select {
			case err := <-got:
				require.NoError(t, err)
			case <-time.After(long / 4):
				t.Fatalf("the live waiter was not woken within %v of the release", long/4)
			}
		})
	}
}

// Two waiters of one owner (two goroutines given one context) wait; one
// gives up; the other is still woken by the release, at once, as a waiter
// of another owner would be: the one that left removed its own
// registration, not its sibling's.
func TestSiblingWaiterGivingUp(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for _, k := range waitKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			slow := func(o *distsync.Options) { o.Watchdog.Lease, o.WaiterWindow = long, long }
			holder := dstest.ClientOn(t, s, slow)
			c := dstest.ClientOn(t, s, slow)
			name := dstest.Name(t) + uuid.NewString() // a test left waiters
			unblock := k.block(t, holder, name)

			owner := distsync.NewOwner(context.Background())
			take := k.taker(t, c, name)
			stays := make(chan error, 1)
			go func() { stays <- take(owner, distsync.Forever) }()
			waitersOf(t, holder, name, 1)
			err := take(owner, 300*time.Millisecond)
			require.True(t, errors.Is(err, distsync.ErrNotAcquired), "the sibling gives up: %v", err)

			unblock()
			select {
			case err := <-stays:
				require.NoError(t, err)
			case <-time.After(long / 4):
				t.Fatalf("the waiter whose sibling gave up was not woken within %v of the release", long/4)
			}
		})
	}
}
