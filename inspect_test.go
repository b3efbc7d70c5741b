package distsync_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
)

// waitIn starts lock(ctx) in a goroutine: a waiter until the test's
// cleanup cancels ctx (the waiter then returns context.Canceled; what it
// waits for must be released by a cleanup registered before).
func waitIn(t *testing.T, lock func(ctx context.Context) error) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lock(ctx) }()
	t.Cleanup(func() {
		stop()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
}

// named returns a Client whose owners carry the client name "inspected".
func named(t *testing.T) *distsync.Client {
	return dstest.Client(t, func(o *distsync.Options) { o.ClientName = "inspected" })
}

func TestInspectFree(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	info, err := c.Inspect(context.Background(), name)
	require.NoError(t, err)
	assert.Equal(t, distsync.Info{Name: name, Key: "distsync:{" + name + "}"}, info)
}

// The mutex: its owner with the client name, the hold count of a
// re-entered hold, the fencing token, the lease and a waiter of another
// Client.
func TestInspectMutex(t *testing.T) {
	t.Parallel()
	c, other := named(t), dstest.Client(t)
	ctx := context.Background()
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	again, err := m.Lock(held)
	require.NoError(t, err)
	t.Cleanup(func() { m.Unlock(again); m.Unlock(held) }) // after the waiter gave up
	tok, err := m.Token(held)
	require.NoError(t, err)
	mo, err := other.Mutex(m.Name())
	require.NoError(t, err)
	waitIn(t, func(ctx context.Context) error { _, err := mo.Lock(ctx); return err })
	dstest.WaitWaiters(t, c, m.Key()+":waiters", 1)

	info, err := c.Inspect(ctx, m.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.KindMutex, info.Kind)
	assert.Equal(t, m.Key(), info.Key)
	assert.True(t, info.Held)
	assert.Equal(t, tok, info.Token)
	assert.Positive(t, info.TTL)
	assert.LessOrEqual(t, info.TTL, distsync.DefaultLease)
	require.Len(t, info.Owners, 1)
	o := info.Owners[0]
	assert.True(t, strings.HasPrefix(o.ID, c.ID()+":"), o.ID)
	assert.Equal(t, c.ID(), o.Client)
	assert.Equal(t, "inspected", o.ClientName)
	assert.Equal(t, 2, o.Holds)
	assert.Equal(t, "", o.Mode)
	require.Len(t, info.Waiters, 1)
	assert.True(t, strings.HasPrefix(info.Waiters[0].ID, other.ID()+":"), info.Waiters[0].ID)
	assert.Positive(t, info.Waiters[0].Window)
	assert.Nil(t, info.Permits)
	assert.Nil(t, info.Count)
}

// The fair lock: its waiters in queue order.
func TestInspectFairLock(t *testing.T) {
	t.Parallel()
	c, first, second := named(t), dstest.Client(t), dstest.Client(t)
	ctx := context.Background()
	f, err := c.FairLock(dstest.Name(t))
	require.NoError(t, err)
	held, err := f.Lock(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { f.Unlock(held) }) // after the waiters gave up
	tok, err := f.Token(held)
	require.NoError(t, err)
	for i, w := range []*distsync.Client{first, second} {
		fw, err := w.FairLock(f.Name())
		require.NoError(t, err)
		waitIn(t, func(ctx context.Context) error { _, err := fw.Lock(ctx); return err })
		require.Eventually(t, func() bool { n, err := f.Waiting(ctx); return err == nil && n == i+1 }, 10*time.Second, time.Millisecond)
	}

	info, err := c.Inspect(ctx, f.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.KindFairLock, info.Kind)
	assert.True(t, info.Held)
	assert.Equal(t, tok, info.Token)
	assert.Positive(t, info.TTL)
	require.Len(t, info.Owners, 1)
	assert.Equal(t, "inspected", info.Owners[0].ClientName)
	assert.Equal(t, 1, info.Owners[0].Holds)
	require.Len(t, info.Waiters, 2)
	assert.True(t, strings.HasPrefix(info.Waiters[0].ID, first.ID()+":"), "the head first: %v", info.Waiters)
	assert.True(t, strings.HasPrefix(info.Waiters[1].ID, second.ID()+":"), "the tail last: %v", info.Waiters)
}

// The read-write lock: readers, then a writer, each with its mode, token
// and lease; a waiting writer.
func TestInspectRWLock(t *testing.T) {
	t.Parallel()
	c, other := named(t), dstest.Client(t)
	ctx := context.Background()
	rw, err := c.RWLock(dstest.Name(t))
	require.NoError(t, err)
	r1, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	r2, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	rwo, err := other.RWLock(rw.Name())
	require.NoError(t, err)
	granted := make(chan context.Context, 1)
	go func() {
		w, err := rwo.Write().Lock(ctx)
		assert.NoError(t, err)
		granted <- w
	}()
	dstest.WaitWaiters(t, c, "distsync:{"+rw.Name()+"}:wwaiters", 1)

	info, err := c.Inspect(ctx, rw.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.KindRWLock, info.Kind)
	assert.True(t, info.Held)
	assert.Equal(t, "read", info.Mode)
	assert.Positive(t, info.TTL)
	assert.Zero(t, info.Token, "each hold has its own token")
	require.Len(t, info.Owners, 2)
	tokens := map[int64]bool{}
	for _, o := range info.Owners {
		assert.Equal(t, "read", o.Mode)
		assert.Equal(t, c.ID(), o.Client)
		assert.Equal(t, "inspected", o.ClientName)
		assert.Equal(t, 1, o.Holds)
		assert.Positive(t, o.TTL)
		assert.LessOrEqual(t, o.TTL, info.TTL)
		tokens[o.Token] = true
	}
	for _, r := range []context.Context{r1, r2} {
		tok, err := rw.Read().Token(r)
		require.NoError(t, err)
		assert.True(t, tokens[tok], "token %d of a reader not reported: %v", tok, info.Owners)
	}
	assert.Less(t, info.Owners[0].ID, info.Owners[1].ID, "owners in ID order")
	require.Len(t, info.Waiters, 1)
	assert.Equal(t, "write", info.Waiters[0].Mode)
	assert.True(t, strings.HasPrefix(info.Waiters[0].ID, other.ID()+":"), info.Waiters[0].ID)
	require.NoError(t, rw.Read().Unlock(r1))
	require.NoError(t, rw.Read().Unlock(r2))

	// The waiting writer is granted: the lock is held for write by the
	// other Client.
	w := <-granted
	defer rwo.Write().Unlock(w)
	info, err = c.Inspect(ctx, rw.Name())
	require.NoError(t, err)
	assert.Equal(t, "write", info.Mode)
	require.Len(t, info.Owners, 1)
	assert.Equal(t, "write", info.Owners[0].Mode)
	assert.Equal(t, other.ID(), info.Owners[0].Client)
	tok, err := rwo.Write().Token(w)
	require.NoError(t, err)
	assert.Equal(t, tok, info.Owners[0].Token)
	assert.Empty(t, info.Waiters)
}

// Both semaphores, each reported as its own kind: the permits, the permit
// semaphore's held permits with their leases, a waiter.
func TestInspectSemaphore(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	name := dstest.Name(t)

	ps, err := c.PermitSemaphore(name + "-permit")
	require.NoError(t, err)
	defer ps.Delete(ctx)
	_, err = ps.TrySetPermits(ctx, 2)
	require.NoError(t, err)
	p, err := ps.TryAcquire(ctx, 0, time.Minute)
	require.NoError(t, err)
	defer ps.Release(ctx, p)
	info, err := c.Inspect(ctx, ps.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.KindPermitSemaphore, info.Kind)
	assert.True(t, info.Held)
	require.NotNil(t, info.Permits)
	assert.Equal(t, distsync.Permits{Available: 1, Held: 1}, *info.Permits)
	require.Len(t, info.Owners, 1)
	o := info.Owners[0]
	assert.Equal(t, p.ID(), o.ID)
	assert.Equal(t, "", o.Client, "a permit id names no Client")
	assert.Equal(t, 1, o.Holds)
	assert.Positive(t, o.TTL)
	assert.LessOrEqual(t, o.TTL, time.Minute)
	assert.Zero(t, info.TTL)

	s, err := c.Semaphore(name + "-counting")
	require.NoError(t, err)
	t.Cleanup(func() { s.Delete(ctx) }) // after the waiter gave up
	_, err = s.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	require.NoError(t, s.Acquire(ctx, 3))
	waitIn(t, func(ctx context.Context) error { return s.Acquire(ctx, 1) })
	dstest.WaitWaiters(t, c, s.Key()+":waiters", 1)
	info, err = c.Inspect(ctx, s.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.KindSemaphore, info.Kind)
	require.NotNil(t, info.Permits)
	assert.Equal(t, distsync.Permits{Available: 0, Held: 0}, *info.Permits, "a counting semaphore does not record its holders")
	assert.False(t, info.Held)
	assert.Empty(t, info.Owners)
	require.Len(t, info.Waiters, 1)
	assert.NotEmpty(t, info.Waiters[0].ID)
	assert.Positive(t, info.Waiters[0].Window)
}

// A semaphore whose permits were never set has no main key: its waiters'
// needs, which each kind keeps under a key of its own, say what it is.
func TestInspectSemaphoreNeverSet(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	s, err := c.Semaphore(dstest.Name(t))
	require.NoError(t, err)
	t.Cleanup(func() { s.Delete(ctx) }) // after the waiter gave up
	waitIn(t, func(ctx context.Context) error { return s.Acquire(ctx, 2) })
	dstest.WaitWaiters(t, c, s.Key()+":waiters", 1)
	ps, err := c.PermitSemaphore(dstest.Name(t) + "-permits")
	require.NoError(t, err)
	t.Cleanup(func() { ps.Delete(ctx) })
	waitIn(t, func(ctx context.Context) error { _, err := ps.Acquire(ctx); return err })
	dstest.WaitWaiters(t, c, ps.Key()+":waiters", 1)

	for name, kind := range map[string]distsync.Kind{s.Name(): distsync.KindSemaphore, ps.Name(): distsync.KindPermitSemaphore} {
		info, err := c.Inspect(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, kind, info.Kind)
		assert.False(t, info.Held)
		require.NotNil(t, info.Permits)
		assert.Equal(t, distsync.Permits{}, *info.Permits)
		require.Len(t, info.Waiters, 1)
	}
}

// The latch: its count and an awaiter.
func TestInspectLatch(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	l, err := c.Latch(dstest.Name(t))
	require.NoError(t, err)
	t.Cleanup(func() { l.Delete(ctx) }) // after the awaiter gave up: Delete opens the latch
	_, err = l.TrySetCount(ctx, 2)
	require.NoError(t, err)
	waitIn(t, l.Await)
	dstest.WaitWaiters(t, c, l.Key()+":waiters", 1)

	info, err := c.Inspect(ctx, l.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.KindLatch, info.Kind)
	assert.True(t, info.Held, "a closed latch")
	require.NotNil(t, info.Count)
	assert.Equal(t, int64(2), *info.Count)
	assert.Nil(t, info.Permits)
	assert.Empty(t, info.Owners)
	require.Len(t, info.Waiters, 1)
	assert.Positive(t, info.Waiters[0].Window)
}

// The election: its leader (owner, value, term, since when, lease) and its
// candidates in queue order; a value proclaimed; nobody leads and nobody
// campaigns: nothing stored.
func TestInspectElection(t *testing.T) {
	t.Parallel()
	c, first, second := named(t), dstest.Client(t), dstest.Client(t)
	ctx := context.Background()
	e, err := c.Election(dstest.Name(t))
	require.NoError(t, err)
	before := time.Now()
	lead, term, err := e.Campaign(ctx, "v1")
	require.NoError(t, err)
	resigned := false
	t.Cleanup(func() { // after the candidates gave up
		if !resigned {
			e.Resign(lead)
		}
	})
	for i, w := range []*distsync.Client{first, second} {
		ew, err := w.Election(e.Name())
		require.NoError(t, err)
		// A candidate until the test's cleanup ends its context, which
		// also ends (resigns) a leadership it won meanwhile.
		cctx, stop := context.WithCancel(ctx)
		campaigned := make(chan error, 1)
		go func() { _, _, err := ew.Campaign(cctx, "later"); campaigned <- err }()
		t.Cleanup(func() {
			stop()
			if err := <-campaigned; err != nil {
				assert.ErrorIs(t, err, context.Canceled)
			}
		})
		require.Eventually(t, func() bool { n, err := e.Candidates(ctx); return err == nil && n == i+1 }, 10*time.Second, time.Millisecond)
	}
	require.NoError(t, e.Proclaim(lead, "v2"))

	info, err := c.Inspect(ctx, e.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.KindElection, info.Kind)
	assert.Equal(t, e.Key(), info.Key)
	assert.True(t, info.Held)
	assert.Equal(t, term, info.Token)
	assert.Positive(t, info.TTL)
	assert.LessOrEqual(t, info.TTL, distsync.DefaultLease)
	require.Len(t, info.Owners, 1)
	o := info.Owners[0]
	assert.True(t, strings.HasPrefix(o.ID, c.ID()+":"), o.ID)
	assert.Equal(t, "inspected", o.ClientName)
	assert.Equal(t, 1, o.Holds)
	require.NotNil(t, info.Leader)
	assert.Equal(t, "v2", info.Leader.Value)
	assert.Equal(t, term, info.Leader.Term)
	// The server's clock against this process's: the same machine.
	assert.WithinRange(t, info.Leader.Since, before.Add(-time.Second), time.Now().Add(time.Second))
	require.Len(t, info.Waiters, 2)
	assert.True(t, strings.HasPrefix(info.Waiters[0].ID, first.ID()+":"), "the head first: %v", info.Waiters)
	assert.True(t, strings.HasPrefix(info.Waiters[1].ID, second.ID()+":"), "the tail last: %v", info.Waiters)
	assert.Positive(t, info.Waiters[0].Window)
	assert.Nil(t, info.Permits)
	assert.Nil(t, info.Count)

	// Candidates while nobody leads (the instant between a resign and the
	// head's election), as the election's scripts keep them.
	name := dstest.Name(t) + "-vacant"
	rc := c.Rueidis()
	key := "distsync:{" + name + "}"
	t.Cleanup(func() { rc.Do(ctx, rc.B().Del().Key(key+":cands", key+":wins").Build()) })
	require.NoError(t, rc.Do(ctx, rc.B().Rpush().Key(key+":cands").Element("cand").Build()).Error())
	end := time.Now().Add(time.Minute).UnixMilli()
	require.NoError(t, rc.Do(ctx, rc.B().Zadd().Key(key+":wins").ScoreMember().ScoreMember(float64(end), "cand").Build()).Error())
	info, err = c.Inspect(ctx, name)
	require.NoError(t, err)
	assert.Equal(t, distsync.KindElection, info.Kind)
	assert.False(t, info.Held)
	assert.Nil(t, info.Leader)
	assert.Empty(t, info.Owners)
	assert.Zero(t, info.Token)
	require.Len(t, info.Waiters, 1)
	assert.Equal(t, "cand", info.Waiters[0].ID)

	// A resign: the head candidate leads, in a new term; the tail waits.
	require.NoError(t, e.Resign(lead))
	resigned = true
	require.Eventually(t, func() bool {
		info, err = c.Inspect(ctx, e.Name())
		return err == nil && info.Held
	}, 10*time.Second, time.Millisecond)
	assert.Greater(t, info.Token, term)
	require.Len(t, info.Owners, 1)
	assert.Equal(t, first.ID(), info.Owners[0].Client)
	require.NotNil(t, info.Leader)
	assert.Equal(t, "later", info.Leader.Value)
	require.Len(t, info.Waiters, 1)
	assert.True(t, strings.HasPrefix(info.Waiters[0].ID, second.ID()+":"), info.Waiters)

	// Nobody leads or campaigns: nothing stored (the term counter left
	// behind says nothing).
	done, err := c.Election(dstest.Name(t) + "-done")
	require.NoError(t, err)
	l, _, err := done.Campaign(ctx, "")
	require.NoError(t, err)
	require.NoError(t, done.Resign(l))
	info, err = c.Inspect(ctx, done.Name())
	require.NoError(t, err)
	assert.Equal(t, distsync.Info{Name: done.Name(), Key: done.Key()}, info)
}

// Inspect refuses an invalid name before any I/O, keys no primitive makes,
// and every call after Close.
func TestInspectErrors(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	_, err := c.Inspect(ctx, "bad{name}")
	assert.ErrorIs(t, err, distsync.ErrInvalidName)

	name := dstest.Name(t)
	rc := c.Rueidis()
	require.NoError(t, rc.Do(ctx, rc.B().Sadd().Key("distsync:{"+name+"}").Member("x").Build()).Error())
	defer rc.Do(ctx, rc.B().Del().Key("distsync:{"+name+"}").Build())
	_, err = c.Inspect(ctx, name)
	assert.ErrorIs(t, err, distsync.ErrWrongKind)
	assert.ErrorContains(t, err, "is a set that fits no known kind")

	closed := dstest.Client(t)
	closed.Close()
	_, err = closed.Inspect(ctx, name)
	assert.ErrorIs(t, err, distsync.ErrClosed)
}
