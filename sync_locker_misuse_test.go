package distsync_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/mutex"
)

// lockOutcome runs v.Lock and reports how it ended: nil when it returned,
// the panic's value otherwise; it fails the test when Lock has not ended
// within a bound far above one attempt.
func lockOutcome(t *testing.T, v sync.Locker) any {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		v.Lock()
	}()
	select {
	case p := <-done:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("Lock neither returned nor panicked")
		return nil
	}
}

// Lock of a view whose Client was closed cannot hold and has no error to
// return: it panics, naming the lock and the closed Client, instead of
// trying for ever; so does a Lock that waits when the Client closes.
func TestSyncLockerAfterClose(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	other := dstest.Client(t)
	m2, err := other.Mutex(name)
	require.NoError(t, err)
	held, err := m2.Lock(context.Background())
	require.NoError(t, err)
	defer m2.Unlock(held)

	c := dstest.Client(t)
	m, err := c.Mutex(name)
	require.NoError(t, err)
	v, err := c.SyncLocker(m)
	require.NoError(t, err)
	waiting := make(chan any, 1)
	go func() {
		defer func() { waiting <- recover() }()
		v.Lock() // waits: the other Client holds the lock
	}()
	require.Eventually(t, func() bool {
		n, err := m.Waiting(context.Background())
		return err == nil && n == 1
	}, 10*time.Second, 10*time.Millisecond, "the Lock waits")
	c.Close()
	select {
	case p := <-waiting:
		require.NotNil(t, p, "the waiting Lock returned without the lock")
		assert.Contains(t, fmt.Sprint(p), "closed", "waiting Lock")
		assert.Contains(t, fmt.Sprint(p), m.Key())
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting Lock neither returned nor panicked at Close")
	}

	p := lockOutcome(t, v)
	require.NotNil(t, p, "Lock after Close returned")
	assert.Contains(t, fmt.Sprint(p), "closed")
	assert.ErrorIs(t, p.(error), distsync.ErrClosed)
}

// A view is refused when made of what it cannot serve: no Locker (nil, or
// a typed nil), or a read side, which two owners hold at once (also as a
// member of a multilock).
func TestSyncLockerRefused(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	rw, err := c.RWLock(name)
	require.NoError(t, err)
	m, err := c.Mutex(name + "-mutex")
	require.NoError(t, err)
	both, err := multilock.New([]distsync.Locker{m, rw.Read()})
	require.NoError(t, err)

	for what, l := range map[string]distsync.Locker{
		"nil":                      nil,
		"typed nil":                (*mutex.Mutex)(nil),
		"read side":                rw.Read(),
		"multilock of a read side": both,
	} {
		v, err := c.SyncLocker(l)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, what)
		assert.Nil(t, v, what)
	}
	v, err := c.SyncLocker(rw.Write())
	require.NoError(t, err, "the write side")
	assert.Nil(t, lockOutcome(t, v))
	v.Unlock()

	c.Close()
	_, err = c.SyncLocker(rw.Write())
	assert.ErrorIs(t, err, distsync.ErrClosed, "made on a closed Client")
}
