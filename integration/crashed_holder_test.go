package integration_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// A waiter takes the lock of a holder that crashed (nobody releases, nobody
// publishes) when the holder's lease ends, not half a waiter window later:
// its retry time is the lease left, even when its attempt lands in the
// lease's last millisecond (PTTL 0). The crash is repeated, since landing
// in that millisecond is a matter of timing; a waiter that missed it would
// sleep 15 s (half the default 30 s window).
func TestWaiterTakesCrashedHoldersLockAtLeaseEnd(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "sub-second leases need a server whose Lua keeps up")
	type inspector interface {
		Waiting(context.Context) (int, error)
	}
	const rounds, lease, bound = 12, 100 * time.Millisecond, 3 * time.Second
	short := func(o *distsync.Options) { o.Watchdog.Lease = lease }
	ctx := context.Background()
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			name := dstest.Name(t)
			rival := k
			if k.name == "rwlock-read" {
				rival = kindNamed("rwlock-write") // a reader would share
			}
			waiter := rival.make(t, dstest.ClientOn(t, s), name)
			for i := range rounds {
				hc := dstest.ClientOn(t, s, short)
				holder := k.make(t, hc, name)
				_, err := holder.TryLock(ctx, 0, 0)
				require.NoError(t, err)
				got := make(chan error, 1)
				go func() {
					w, err := waiter.TryLock(ctx, distsync.Forever, 0)
					if err == nil {
						err = waiter.Unlock(w)
					}
					got <- err
				}()
				require.Eventually(t, func() bool {
					n, err := waiter.(inspector).Waiting(ctx)
					return err == nil && n == 1
				}, 10*time.Second, time.Millisecond, "the waiter registered")
				dstest.Crash(hc)
				select {
				case err := <-got:
					require.NoError(t, err)
				case <-time.After(bound):
					t.Fatalf("round %d: the waiter did not take the crashed holder's lock within %v of its %v lease", i, bound, lease)
				}
			}
		})
	}
	t.Run("election", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		for i := range rounds {
			hc := dstest.ClientOn(t, s, short)
			leader, err := hc.Election(name)
			require.NoError(t, err)
			_, _, err = leader.Campaign(ctx, "crashes")
			require.NoError(t, err)
			e, err := dstest.ClientOn(t, s).Election(name)
			require.NoError(t, err)
			next := dstest.CampaignAsync(e, ctx, "next")
			dstest.AwaitCandidates(t, e, 1)
			dstest.Crash(hc)
			c := dstest.Elected(t, next, bound, fmt.Sprintf("round %d: the candidate after a crashed leader", i))
			require.NoError(t, e.Resign(c.Lead))
		}
	})
}
