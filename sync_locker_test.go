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
	"github.com/distsync/distsync/internal/redistest"
)

// Views of the mutex, the fair lock and the write side on two Clients
// exclude one another as sync.Mutex does: no increment of a counter only the
// lock protects is lost.
func TestSyncLockerExcludes(t *testing.T) {
	t.Parallel()
	for _, k := range dstest.Kinds {
		t.Run(k.Name, func(t *testing.T) {
			t.Parallel()
			name := dstest.Name(t)
			var views []sync.Locker
			for range 2 {
				c := dstest.Client(t)
				l, err := k.New(c, name)
				require.NoError(t, err)
				v, err := c.SyncLocker(l)
				require.NoError(t, err)
				views = append(views, v)
			}
			counter := 0
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v := views[g%2] // two goroutines share each view
					for range 20 {
						v.Lock()
						n := counter
						time.Sleep(time.Microsecond)
						counter = n + 1
						v.Unlock()
					}
				}()
			}
			wg.Wait()
			assert.Equal(t, 80, counter)
			assert.Empty(t, dstest.Keys(t, dstest.Client(t), "*{"+name+"}"), "released")
		})
	}
}

// Lock never returns without the lock: while the name is another kind's it
// keeps trying, and it returns once the name is free. Unlock without a
// hold does not panic.
func TestSyncLockerFailures(t *testing.T) {
	t.Parallel()
	redistest.RequireReal(t, redistest.Shared(t), redistest.ErrorTables)
	c := dstest.Client(t)
	name := dstest.Name(t)
	m, err := c.Mutex(name)
	require.NoError(t, err)
	v, err := c.SyncLocker(m)
	require.NoError(t, err)
	v.Unlock() // logged, ignored

	latch, err := c.Latch(name)
	require.NoError(t, err)
	ctx := context.Background()
	ok, err := latch.TrySetCount(ctx, 1)
	require.NoError(t, err)
	require.True(t, ok)
	locked := make(chan struct{})
	go func() {
		v.Lock()
		close(locked)
	}()
	select {
	case <-locked:
		t.Fatal("Lock returned while the name is a latch's")
	case <-time.After(300 * time.Millisecond): // a few of its attempts
	}
	_, err = latch.CountDown(ctx)
	require.NoError(t, err)
	select {
	case <-locked:
	case <-time.After(10 * time.Second):
		t.Fatal("Lock did not take the freed name")
	}
	held, err := m.IsLocked(ctx)
	require.NoError(t, err)
	assert.True(t, held)
	v.Unlock()
	held, err = m.IsLocked(ctx)
	require.NoError(t, err)
	assert.False(t, held)
}

// A sync.Locker view of a lock: for code that takes a sync.Locker.
func ExampleClient_SyncLocker() {
	c, err := distsync.New(options)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	m, err := c.Mutex("example-sync-locker")
	if err != nil {
		panic(err)
	}
	l, err := c.SyncLocker(m) // for any API that takes a sync.Locker
	if err != nil {
		panic(err)
	}
	l.Lock()
	fmt.Println("held")
	l.Unlock()
	// Output: held
}
