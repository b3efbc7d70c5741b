package distsync_test

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/mutex"
)

// BenchmarkHeldLeaseMemory reports the client memory a held watchdog lease
// keeps (B/lease): the heap and stack in use while one Client holds
// heldLeases mutexes at once, each made for its Lock, less what was in use
// before, divided by their number (bench/watchdog.go's memory per lease,
// without the harness's own records). It is a count, not a time: run it
// once (-benchtime=1x).
func BenchmarkHeldLeaseMemory(b *testing.B) {
	const heldLeases, goroutines = 100_000, 16
	c := dstest.Client(b)
	prefix := dstest.Name(b) + ":"
	held := make([]context.Context, heldLeases)
	// each runs f on lease i's mutex for every i < n, from goroutines
	// goroutines.
	each := func(n int, f func(m *mutex.Mutex, i int) error) {
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := g; i < n; i += goroutines {
					m, err := c.Mutex(prefix + strconv.Itoa(i))
					if err == nil {
						err = f(m, i)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
	}
	lock := func(m *mutex.Mutex, i int) (err error) {
		held[i], err = m.Lock(context.Background())
		return err
	}
	unlock := func(m *mutex.Mutex, i int) error {
		if held[i] == nil {
			return nil
		}
		defer func() { held[i] = nil }()
		return m.Unlock(held[i])
	}
	defer each(heldLeases, unlock)
	// The connections, the scripts and the watchdog's goroutine come first.
	each(goroutines, lock)
	each(goroutines, unlock)
	var perLease float64
	for b.Loop() {
		base := liveBytes()
		each(heldLeases, lock)
		perLease = float64(liveBytes()-base) / heldLeases
		each(heldLeases, unlock)
	}
	b.ReportMetric(perLease, "B/lease")
}

// liveBytes is the heap and stack in use after a collection.
func liveBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}
