package rwlock_test

import (
	"context"
	"testing"

	"github.com/distsync/distsync/internal/dstest"
)

// BenchmarkReadHeavy is lock+unlock of one name from parallel goroutines, 95%
// of them reads and 5% writes: readers share the lock, writers are handed it
// by notification.
func BenchmarkReadHeavy(b *testing.B) {
	c := dstest.Client(b)
	rw := newRW(b, c, dstest.Name(b))
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			l := rw.Read()
			if i%20 == 19 {
				l = rw.Write()
			}
			held, err := l.Lock(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Unlock(held); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkReadUncontended is lock+unlock of a read lock nobody else uses,
// one goroutine: two round trips a pair.
func BenchmarkReadUncontended(b *testing.B) {
	c := dstest.Client(b)
	rw := newRW(b, c, dstest.Name(b))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		held, err := rw.Read().Lock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := rw.Read().Unlock(held); err != nil {
			b.Fatal(err)
		}
	}
}
