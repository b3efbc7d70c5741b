package multilock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/mutex"
)

func TestMain(m *testing.M) {
	ordersServer, stockServer = dstest.ExampleOptions(0), dstest.ExampleOptions(1)
	redistest.Main(m)
}

func newMutex(t testing.TB, c *distsync.Client, name string) *mutex.Mutex {
	t.Helper()
	m, err := c.Mutex(name)
	require.NoError(t, err)
	return m
}

func newMulti(t testing.TB, lockers ...distsync.Locker) *multilock.Lock {
	t.Helper()
	l, err := multilock.New(lockers)
	require.NoError(t, err)
	return l
}

// exists reports whether key exists on c's server.
func exists(t testing.TB, c *distsync.Client, key string) bool {
	t.Helper()
	rc := c.Rueidis()
	n, err := rc.Do(context.Background(), rc.B().Exists().Key(key).Build()).AsInt64()
	require.NoError(t, err)
	return n == 1
}

func TestAllOrNone(t *testing.T) {
	t.Parallel()
	c1, c2 := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	a, b := newMutex(t, c1, name+"-a"), newMutex(t, c2, name+"-b")
	ml := newMulti(t, a, b)
	ctx := context.Background()

	// Another owner holds b: the multilock takes a, fails on b and gives a back.
	other, err := b.Lock(ctx)
	require.NoError(t, err)
	_, err = ml.TryLock(ctx, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	assert.False(t, exists(t, c1, a.Key()), "a must be released when b fails")

	// With a wait budget it waits for b.
	got := make(chan error, 1)
	var held context.Context
	go func() {
		var err error
		held, err = ml.TryLock(ctx, time.Minute, 0)
		got <- err
	}()
	require.NoError(t, b.Unlock(other))
	require.NoError(t, <-got)
	assert.True(t, exists(t, c1, a.Key()))
	assert.True(t, exists(t, c2, b.Key()))
	_, err = a.TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)

	members := ml.Members(held)
	require.Len(t, members, 2)
	tok, err := a.Token(members[0])
	require.NoError(t, err)
	assert.Positive(t, tok)

	require.NoError(t, ml.Unlock(held))
	assert.ErrorIs(t, context.Cause(held), distsync.ErrReleased)
	assert.False(t, exists(t, c1, a.Key()))
	assert.False(t, exists(t, c2, b.Key()))
	assert.ErrorIs(t, ml.Unlock(held), distsync.ErrNotHeld, "a second Unlock")
	assert.Nil(t, ml.Members(ctx))
}

// TestOverlappingSetsDoNotDeadlock locks {A,B} and {B,A} from two goroutines
// in a loop: both acquire in key order, so neither waits for the other while
// holding what the other waits for.
func TestOverlappingSetsDoNotDeadlock(t *testing.T) {
	t.Parallel()
	c1, c2 := dstest.Client(t), dstest.Client(t)
	name := dstest.Name(t)
	ab := newMulti(t, newMutex(t, c1, name+"-A"), newMutex(t, c1, name+"-B"))
	ba := newMulti(t, newMutex(t, c2, name+"-B"), newMutex(t, c2, name+"-A"))
	assert.Equal(t, ab.Key(), ba.Key(), "one global order")

	// A deadlock would block both until the test times out.
	dstest.Contend(t, []distsync.Locker{ab, ba}, 50, time.Hour)
}

// TestCompositionAcrossClients runs a multilock whose members live on two
// Clients of two servers (so in different slots of different deployments),
// over every kind of locker, with contending goroutines.
func TestCompositionAcrossClients(t *testing.T) {
	t.Parallel()
	s1, s2 := redistest.Start(t), redistest.Start(t)
	for _, kind := range dstest.Kinds {
		t.Run(kind.Name, func(t *testing.T) {
			name := dstest.Name(t)
			var lockers []distsync.Locker
			for range 8 {
				c1, c2 := dstest.ClientOn(t, s1), dstest.ClientOn(t, s2)
				a, err := kind.New(c1, name+"-x")
				require.NoError(t, err)
				b, err := kind.New(c2, name+"-y")
				require.NoError(t, err)
				lockers = append(lockers, newMulti(t, b, a))
			}
			dstest.Contend(t, lockers, 10, time.Minute)
		})
	}
}

func TestLostMemberCancelsHold(t *testing.T) {
	t.Parallel()
	const lease = time.Second
	c1 := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	c2 := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	name := dstest.Name(t)
	a, b := newMutex(t, c1, name+"-a"), newMutex(t, c2, name+"-b")
	ml := newMulti(t, a, b)
	held, err := ml.Lock(context.Background())
	require.NoError(t, err)

	rc := c2.Rueidis()
	require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key(b.Key()).Build()).Error())
	select {
	case <-held.Done():
	case <-time.After(lease + 10*time.Second):
		t.Fatal("the hold's context was not cancelled after a member was lost")
	}
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	assert.NoError(t, ml.Members(held)[0].Err(), "a's own hold is untouched")
	err = ml.Unlock(held)
	assert.ErrorIs(t, err, distsync.ErrNotHeld, "b was lost")
	assert.False(t, exists(t, c1, a.Key()), "a is released all the same")
}

func TestExplicitLeaseExpires(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	a, b := newMutex(t, c, name+"-a"), newMutex(t, c, name+"-b")
	ml := newMulti(t, a, b)
	held, err := ml.TryLock(context.Background(), 0, 300*time.Millisecond)
	require.NoError(t, err)
	<-held.Done()
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseExpired)
	assert.Zero(t, c.Stats().Renewals, "an explicit lease is not renewed")
}

func TestReentry(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	a, b := newMutex(t, c, name+"-a"), newMutex(t, c, name+"-b")
	ml := newMulti(t, a, b)
	ctx := context.Background()
	outer, err := ml.Lock(ctx)
	require.NoError(t, err)
	inner, err := ml.TryLock(outer, 0, 0)
	require.NoError(t, err, "the hold's context re-enters")
	n, err := b.HoldCount(ml.Members(inner)[1])
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	require.NoError(t, ml.Unlock(inner))
	assert.NoError(t, outer.Err(), "the outer hold stays")
	assert.True(t, exists(t, c, a.Key()))
	require.NoError(t, ml.Unlock(outer))
	assert.False(t, exists(t, c, a.Key()))
	assert.False(t, exists(t, c, b.Key()))
}

func TestCancelWhileWaitingReleasesTaken(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	a, b := newMutex(t, c, name+"-a"), newMutex(t, c, name+"-b")
	other, err := b.Lock(context.Background())
	require.NoError(t, err)
	defer b.Unlock(other)

	ml := newMulti(t, a, b)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := ml.Lock(ctx)
		errc <- err
	}()
	// Wait until the multilock holds a and waits for b.
	dstest.WaitWaiters(t, c, b.Key()+":waiters", 1)
	assert.True(t, exists(t, c, a.Key()))
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
	assert.False(t, exists(t, c, a.Key()), "a released when the wait for b ended")
}

func TestInvalidInput(t *testing.T) {
	t.Parallel()
	_, err := multilock.New(nil)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	c := dstest.Client(t)
	a := newMutex(t, c, dstest.Name(t))
	_, err = multilock.New([]distsync.Locker{a, nil})
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	bad, err := c.Mutex("bad{name}") // a nil *mutex.Mutex, with an error
	require.ErrorIs(t, err, distsync.ErrInvalidName)
	_, err = multilock.New([]distsync.Locker{a, bad})
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument, "a typed nil is refused, not a panic")
	ml := newMulti(t, a)
	_, err = ml.TryLock(context.Background(), -time.Second, 0)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	_, err = ml.TryLock(context.Background(), 0, -time.Second)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	assert.ErrorIs(t, ml.Unlock(context.Background()), distsync.ErrNotHeld)
}
