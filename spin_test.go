package distsync_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// With Options.Spin, waiters never subscribe: they poll with back-off (a
// spin lock, Redisson's RSpinLock), and still get the lock once it is free.
func TestSpinWaitersNeverSubscribe(t *testing.T) {
	t.Parallel()
	spin := dstest.Client(t, func(o *distsync.Options) { o.Spin = distsync.Spin{Min: time.Millisecond, Max: 20 * time.Millisecond} })
	holder := dstest.Client(t)
	ctx := context.Background()
	waiterSet := map[string]string{"mutex": ":waiters", "fairlock": ":deadlines", "rwlock-write": ":wwaiters"}
	for _, kind := range dstest.Kinds {
		t.Run(kind.Name, func(t *testing.T) {
			name := dstest.Name(t)
			h, err := kind.New(holder, name)
			require.NoError(t, err)
			w, err := kind.New(spin, name)
			require.NoError(t, err)
			held, err := h.TryLock(ctx, 0, 0)
			require.NoError(t, err)
			got := make(chan error, 1)
			go func() {
				wctx, err := w.TryLock(ctx, 10*time.Second, 0)
				if err == nil {
					err = w.Unlock(wctx)
				}
				got <- err
			}()
			// The waiter registers (a fair queue keeps its place) but has
			// no subscription on the lock's channel.
			dstest.WaitWaiters(t, holder, w.Key()+waiterSet[kind.Name], 1)
			rc := holder.Rueidis()
			subs, err := rc.Do(ctx, rc.B().PubsubNumsub().Channel(w.Key()+":ch").Build()).AsIntMap()
			require.NoError(t, err)
			assert.Zero(t, subs[w.Key()+":ch"], "no subscription")
			require.NoError(t, h.Unlock(held))
			require.NoError(t, <-got, "the spinning waiter gets the lock")
			assert.Zero(t, spin.Stats().NotifierMessages)
		})
	}
	_, err := distsync.New(distsync.Options{Spin: distsync.Spin{Min: time.Second, Max: time.Millisecond}})
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
}
