package distsync_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/redlock"
)

// Every call on a closed Client, and on every handle it made, returns an
// error wrapping ErrClosed (never the connection's own "closing" text, nor
// an answer the still open connection gave), before any other error: every
// exported method that returns an error is called, on every kind of handle,
// including the releases and queries of holds taken before Close, Token,
// Inspect, making a handle, and multilocks and redlocks over the Client's
// locks. On a Client made by FromClient the connection stays open after
// Close, so a call that forgot the check would get an answer there.
func TestEveryCallAfterCloseIsErrClosed(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"New", "FromClient"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			o := dstest.Options(redistest.Shared(t))
			var c *distsync.Client
			var err error
			if mode == "New" {
				c, err = distsync.New(o)
			} else {
				rc, rerr := rueidis.NewClient(redistest.Shared(t).ClientOption())
				require.NoError(t, rerr)
				t.Cleanup(rc.Close)
				c, err = distsync.FromClient(rc, o)
			}
			require.NoError(t, err)
			everyCallAfterClose(t, c)
		})
	}
}

func everyCallAfterClose(t *testing.T, c *distsync.Client) {
	s := dstest.Client(t) // another Client on the same server
	ctx := context.Background()
	name := dstest.Name(t)
	lease := time.Minute // Close gives back what it held: checked at cleanup
	m, err := c.Mutex(name + "-m")
	require.NoError(t, err)
	f, err := c.FairLock(name + "-f")
	require.NoError(t, err)
	rw, err := c.RWLock(name + "-rw")
	require.NoError(t, err)
	sem, err := c.Semaphore(name + "-s")
	require.NoError(t, err)
	ps, err := c.PermitSemaphore(name + "-p")
	require.NoError(t, err)
	l, err := c.Latch(name + "-l")
	require.NoError(t, err)
	mm, err := c.Mutex(name + "-ml")
	require.NoError(t, err)
	ml, err := multilock.New([]distsync.Locker{mm})
	require.NoError(t, err)
	rm, err := c.Mutex(name + "-rl")
	require.NoError(t, err)
	rl, err := redlock.New([]distsync.Locker{rm})
	require.NoError(t, err)
	_, err = ps.TrySetPermits(ctx, 2)
	require.NoError(t, err)

	t.Cleanup(func() {
		// Close gave back what it held (and the next run starts free).
		for _, n := range []string{"-m", "-ml", "-rl"} {
			m, err := s.Mutex(name + n)
			require.NoError(t, err)
			ok, err := m.ForceUnlock(ctx)
			require.NoError(t, err)
			assert.False(t, ok, "%s: Close gave it back", n)
		}
		f, err := s.FairLock(name + "-f")
		require.NoError(t, err)
		_, err = f.ForceUnlock(ctx)
		require.NoError(t, err)
		rw, err := s.RWLock(name + "-rw")
		require.NoError(t, err)
		_, err = rw.Write().ForceUnlock(ctx)
		require.NoError(t, err)
		_, err = rw.Read().ForceUnlock(ctx)
		require.NoError(t, err)
	})

	held := func(lk distsync.Locker) context.Context {
		h, err := lk.TryLock(ctx, 0, lease)
		require.NoError(t, err)
		return h
	}
	mHeld, fHeld, wHeld := held(m), held(f), held(rw.Write())
	rHeld, err := rw.Read().TryLock(wHeld, 0, lease) // a downgrade
	require.NoError(t, err)
	mlHeld, rlHeld := held(ml), held(rl)
	released, err := m.TryLock(mHeld, 0, lease) // a re-entry, released before Close
	require.NoError(t, err)
	require.NoError(t, m.Unlock(released))
	permit, err := ps.TryAcquire(ctx, 0, lease)
	require.NoError(t, err)
	sp, err := s.PermitSemaphore(name + "-p")
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.ErrorIs(t, sp.ReleaseID(ctx, permit.ID()), distsync.ErrNotHeld, "Close gave the permit back")
	})
	c.Close()

	calls := map[string]error{}
	callAll(t, calls, "Client", c, ctx, name+"-x", m) // m: SyncLocker's Locker
	calls["mutex.Unlock(released before Close)"] = m.Unlock(released)
	callAll(t, calls, "mutex", m, mHeld, lease, "no-such-hold")
	callAll(t, calls, "fairlock", f, fHeld, lease)
	callAll(t, calls, "rwlock.Write", rw.Write(), wHeld, lease)
	callAll(t, calls, "rwlock.Read", rw.Read(), rHeld, lease)
	callAll(t, calls, "semaphore", sem, ctx, int64(1), time.Second)
	callAll(t, calls, "permit semaphore", ps, ctx, int64(1), time.Second, permit, permit.ID())
	callAll(t, calls, "permit", permit, ctx, lease)
	callAll(t, calls, "latch", l, ctx, int64(1))
	callAll(t, calls, "multilock", ml, mlHeld, time.Second)
	// Grant and Members read what a redlock's hold recorded in its context
	// when it was granted; they make no call on a Client.
	callAll(t, calls, "redlock", rl, rlHeld, time.Second, skip("Grant"))
	for _, call := range []string{
		"Client.Mutex", "Client.RWLock", "Client.Inspect", "Client.SyncLocker", "mutex.Waiting", "mutex.Token",
		"mutex.Holders", "mutex.Unlock", "fairlock.Waiting", "rwlock.Read.Token",
		"permit semaphore.ReleaseID", "latch.Await", "multilock.Unlock", "redlock.Lock",
	} {
		assert.Contains(t, calls, call, "every method is called")
	}
	for call, err := range calls {
		assert.ErrorIs(t, err, distsync.ErrClosed, call)
	}
}

// skip names a method callAll does not call.
type skip string

// callAll calls every exported method of v whose last result is an error,
// but those args skip, giving each parameter the first of args that fits
// its type (a variadic parameter gets nothing), and records the errors in
// calls under "<what>.<method>".
func callAll(t *testing.T, calls map[string]error, what string, v any, args ...any) {
	t.Helper()
	skipped := map[string]bool{}
	for _, a := range args {
		if s, ok := a.(skip); ok {
			skipped[string(s)] = true
		}
	}
	errType := reflect.TypeFor[error]()
	rv := reflect.ValueOf(v)
	for i := range rv.NumMethod() {
		name := rv.Type().Method(i).Name
		fn := rv.Method(i)
		ft := fn.Type()
		if skipped[name] || ft.NumOut() == 0 || ft.Out(ft.NumOut()-1) != errType {
			continue
		}
		n := ft.NumIn()
		if ft.IsVariadic() {
			n--
		}
		in := make([]reflect.Value, n)
		for p := range n {
			for _, a := range args {
				if a != nil && reflect.TypeOf(a).AssignableTo(ft.In(p)) {
					in[p] = reflect.ValueOf(a)
					break
				}
			}
			require.Truef(t, in[p].IsValid(), "%s.%s: no argument of type %v", what, name, ft.In(p))
		}
		out := fn.Call(in)
		err, _ := out[len(out)-1].Interface().(error)
		if err == nil {
			err = errors.New("no error")
		}
		calls[what+"."+name] = err
	}
}
