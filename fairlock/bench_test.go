package fairlock_test

import (
	"context"
	"testing"

	"github.com/distsync/distsync/internal/dstest"
)

// BenchmarkHandoff is lock+unlock of one fair lock from parallel goroutines:
// nearly every acquisition is a hand-off to the head of the queue, woken by
// one message addressed to it.
func BenchmarkHandoff(b *testing.B) {
	c := dstest.Client(b)
	f := newFair(b, c, dstest.Name(b))
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			held, err := f.Lock(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			if err := f.Unlock(held); err != nil {
				b.Error(err)
				return
			}
		}
	})
	st := c.Stats()
	msgs, wakes := st.NotifierMessages, st.NotifierWakes
	b.ReportMetric(float64(wakes)/float64(b.N), "wakes/op")
	b.ReportMetric(float64(msgs)/float64(b.N), "msgs/op")
}

// BenchmarkUncontended is lock+unlock of a free fair lock, one goroutine:
// two round trips a pair.
func BenchmarkUncontended(b *testing.B) {
	c := dstest.Client(b)
	f := newFair(b, c, dstest.Name(b))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		held, err := f.Lock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Unlock(held); err != nil {
			b.Fatal(err)
		}
	}
}
