package latch_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/latch"
)

func TestMain(m *testing.M) {
	options = dstest.ExampleOptions(0)
	redistest.Main(m)
}

var nameSeq atomic.Int64

// newLatch returns a latch whose name no other test or run uses.
func newLatch(t testing.TB, c *distsync.Client) *latch.Latch {
	t.Helper()
	name := dstest.Name(t) + "-" + strconv.FormatInt(nameSeq.Add(1), 10) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	l, err := c.Latch(name)
	require.NoError(t, err)
	return l
}

// waitForWaiters waits until the latch's waiter set has n members.
func waitForWaiters(t *testing.T, c *distsync.Client, l *latch.Latch, n int64) {
	t.Helper()
	dstest.WaitWaiters(t, c, l.Key()+":waiters", n)
}

func count(t *testing.T, l *latch.Latch) int64 {
	t.Helper()
	n, err := l.Count(context.Background())
	require.NoError(t, err)
	return n
}

func TestAwaitersAllReturnAtZero(t *testing.T) {
	t.Parallel()
	// A waiter window of an hour: only the notification can wake them in time.
	long := func(o *distsync.Options) { o.WaiterWindow = time.Hour }
	clients := []*distsync.Client{dstest.Client(t, long), dstest.Client(t, long)}
	l := newLatch(t, clients[0])
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const awaiters, n = 16, 3
	ok, err := l.TrySetCount(ctx, n)
	require.NoError(t, err)
	require.True(t, ok)

	var returned atomic.Int64
	var wg sync.WaitGroup
	for i := range awaiters {
		la, err := clients[i%2].Latch(l.Name())
		require.NoError(t, err)
		wg.Go(func() {
			if assert.NoError(t, la.Await(ctx)) {
				returned.Add(1)
			}
		})
	}
	waitForWaiters(t, clients[0], l, awaiters)
	for i := n - 1; i > 0; i-- {
		left, err := l.CountDown(ctx)
		require.NoError(t, err)
		assert.Equal(t, int64(i), left)
	}
	assert.Zero(t, returned.Load(), "no awaiter returns before zero")
	left, err := l.CountDown(ctx)
	require.NoError(t, err)
	assert.Zero(t, left)
	wg.Wait()
	assert.Equal(t, int64(awaiters), returned.Load())
	assert.Empty(t, keysOf(t, clients[0], l.Key()+"*"), "an open latch leaves no key")
}

func TestOpenLatch(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	l := newLatch(t, c)
	ctx := context.Background()
	require.NoError(t, l.Await(ctx), "a latch never set is open")
	assert.Zero(t, count(t, l))

	ok, err := l.TrySetCount(ctx, 2)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = l.TrySetCount(ctx, 5)
	require.NoError(t, err)
	assert.False(t, ok, "a counting latch is not reset")
	assert.Equal(t, int64(2), count(t, l))

	for range 2 {
		_, err := l.CountDown(ctx)
		require.NoError(t, err)
	}
	require.NoError(t, l.Await(ctx), "a latch at zero is open")
	ok, err = l.TrySetCount(ctx, 1)
	require.NoError(t, err)
	assert.True(t, ok, "an open latch can be set again")
}

func TestCountDownBelowZeroIsHarmless(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	l := newLatch(t, c)
	ctx := context.Background()
	left, err := l.CountDown(ctx)
	require.NoError(t, err)
	assert.Zero(t, left, "counting down a latch never set")
	_, err = l.TrySetCount(ctx, 1)
	require.NoError(t, err)
	for range 3 {
		left, err := l.CountDown(ctx)
		require.NoError(t, err)
		assert.Zero(t, left)
	}
	assert.Zero(t, count(t, l))
	require.NoError(t, l.Await(ctx))
	assert.Empty(t, keysOf(t, c, l.Key()+"*"))
}

func TestAwaitCancelled(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	l := newLatch(t, c)
	ctx := context.Background()
	_, err := l.TrySetCount(ctx, 1)
	require.NoError(t, err)

	done, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, l.Await(done), context.Canceled, "an already cancelled context")

	wctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- l.Await(wctx) }()
	waitForWaiters(t, c, l, 1)
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
	waitForWaiters(t, c, l, 0) // it left the waiter set

	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, l.Await(tctx), context.DeadlineExceeded)
	assert.Equal(t, int64(1), count(t, l))
}

func TestZeroBetweenCheckAndSubscribe(t *testing.T) {
	t.Parallel()
	c, f := dstest.FaultyClientWith(t, redistest.Shared(t), distsync.Options{WaiterWindow: time.Hour})
	l := newLatch(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := l.TrySetCount(ctx, 1)
	require.NoError(t, err)

	// The awaiter's first check finds the latch closed, and it reaches zero
	// before the answer reaches the awaiter, so before it subscribes.
	f.Inject(&dstest.Rule{Match: dstest.Script("Check whether the latch is open"), Fault: dstest.Hook, Times: 1, Then: func() {
		_, err := l.CountDown(ctx)
		assert.NoError(t, err)
	}})
	require.NoError(t, l.Await(ctx), "the zero reached before the subscription is seen")
}

func TestDeleteOpens(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	l := newLatch(t, c)
	ctx := context.Background()
	_, err := l.TrySetCount(ctx, 5)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() { errc <- l.Await(ctx) }()
	waitForWaiters(t, c, l, 1)
	deleted, err := l.Delete(ctx)
	require.NoError(t, err)
	assert.True(t, deleted)
	require.NoError(t, <-errc)
	deleted, err = l.Delete(ctx)
	require.NoError(t, err)
	assert.False(t, deleted)
	assert.Empty(t, keysOf(t, c, l.Key()+"*"))
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	l := newLatch(t, c)
	ctx := context.Background()
	for _, n := range []int64{0, -1, latch.MaxCount + 1} {
		_, err := l.TrySetCount(ctx, n)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "TrySetCount(%d)", n)
	}
	ok, err := l.TrySetCount(ctx, latch.MaxCount)
	require.NoError(t, err)
	require.True(t, ok)
	left, err := l.CountDown(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(latch.MaxCount-1), left)
	for _, name := range []string{"", "a}b"} {
		_, err := c.Latch(name)
		assert.ErrorIs(t, err, distsync.ErrInvalidName)
	}
}

func TestClosedClient(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	l := newLatch(t, c)
	ctx := context.Background()
	_, err := l.TrySetCount(ctx, 1)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() { errc <- l.Await(ctx) }()
	waitForWaiters(t, c, l, 1)
	c.Close()
	assert.ErrorIs(t, <-errc, distsync.ErrClosed)
	assert.ErrorIs(t, l.Await(ctx), distsync.ErrClosed)
	_, err = l.CountDown(ctx)
	assert.ErrorIs(t, err, distsync.ErrClosed)
}

func keysOf(t *testing.T, c *distsync.Client, pattern string) []string {
	t.Helper()
	rc := c.Rueidis()
	keys, err := rc.Do(context.Background(), rc.B().Keys().Pattern(pattern).Build()).AsStrSlice()
	require.NoError(t, err)
	return keys
}
