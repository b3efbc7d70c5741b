package dstest

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
)

// Kind is a lock-like primitive, made on a Client as a distsync.Locker, for
// tests that compose lockers (multilock, redlock) and run over every kind.
type Kind struct {
	Name string
	New  func(c *distsync.Client, name string) (distsync.Locker, error)
}

// Kinds are the exclusive lock-like primitives of distsync. Every primitive
// that satisfies distsync.Locker and excludes other owners belongs here; the
// read side of the read-write lock does not (readers share), so Contend
// would fail on it.
var Kinds = []Kind{
	{"mutex", func(c *distsync.Client, name string) (distsync.Locker, error) {
		m, err := c.Mutex(name)
		if err != nil {
			return nil, err
		}
		return m, nil
	}},
	{"fairlock", func(c *distsync.Client, name string) (distsync.Locker, error) {
		f, err := c.FairLock(name)
		if err != nil {
			return nil, err
		}
		return f, nil
	}},
	{"rwlock-write", func(c *distsync.Client, name string) (distsync.Locker, error) {
		rw, err := c.RWLock(name)
		if err != nil {
			return nil, err
		}
		return rw.Write(), nil
	}},
}

// Contend runs one goroutine per locker (lockers of one lock, made on any
// Clients), each taking it rounds times with TryLock(ctx, wait, 0) and
// incrementing a counter that only the lock protects, then checks that no
// increment was lost: mutual exclusion.
func Contend(tb testing.TB, lockers []distsync.Locker, rounds int, wait time.Duration) {
	tb.Helper()
	var counter int // deliberately not atomic
	var wg sync.WaitGroup
	for g, l := range lockers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				held, err := l.TryLock(context.Background(), wait, 0)
				if err != nil {
					tb.Errorf("goroutine %d round %d: %v", g, r, err)
					return
				}
				v := counter
				runtime.Gosched()
				counter = v + 1
				if err := l.Unlock(held); err != nil {
					tb.Errorf("goroutine %d round %d: unlock: %v", g, r, err)
				}
			}
		}()
	}
	wg.Wait()
	if want := len(lockers) * rounds; counter != want {
		tb.Errorf("counter %d, want %d: mutual exclusion failed", counter, want)
	}
}

// TakeOver makes on the mutex name of c the three acquisitions an observer
// of c then sees, in order: a Lock of the free lock, a ForceLock (of
// another owner) that takes it over, and a ForceLock of the lock once free
// again. Each ends released, the first by the take-over.
func TakeOver(t testing.TB, c *distsync.Client, name string) {
	t.Helper()
	ctx := context.Background()
	m, err := c.Mutex(name)
	require.NoError(t, err)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	took, err := m.ForceLock(distsync.NewOwner(ctx))
	require.NoError(t, err)
	require.NoError(t, m.Unlock(took))
	<-held.Done()
	free, err := m.ForceLock(distsync.NewOwner(ctx))
	require.NoError(t, err)
	require.NoError(t, m.Unlock(free))
}
