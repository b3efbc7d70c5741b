package mutex_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distsync/distsync/internal/dstest"
)

// BenchmarkUncontended is lock+unlock of a free lock, one goroutine: two
// round trips a pair.
func BenchmarkUncontended(b *testing.B) {
	c := dstest.Client(b)
	m := newMutex(b, c, dstest.Name(b))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		held, err := m.Lock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Unlock(held); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUncontendedParallel is lock+unlock on distinct names from
// parallel goroutines: rueidis pipelines them on one connection.
func BenchmarkUncontendedParallel(b *testing.B) {
	c := dstest.Client(b)
	var seq atomic.Int64
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		m := newMutex(b, c, dstest.Name(b)+"-"+strconv.FormatInt(seq.Add(1), 10))
		for pb.Next() {
			held, err := m.Lock(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			if err := m.Unlock(held); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkUncontendedRequest is BenchmarkUncontendedParallel with the
// context a request brings: one of its own per pair, with a timeout (here
// 2 s), as a server's handler gets.
func BenchmarkUncontendedRequest(b *testing.B) {
	c := dstest.Client(b)
	var seq atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		m := newMutex(b, c, dstest.Name(b)+"-"+strconv.FormatInt(seq.Add(1), 10))
		for pb.Next() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			held, err := m.Lock(ctx)
			if err != nil {
				cancel()
				b.Error(err)
				return
			}
			err = m.Unlock(held)
			cancel()
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkContended is lock+unlock of one name from parallel goroutines:
// waiters are handed the lock by notification.
func BenchmarkContended(b *testing.B) {
	c := dstest.Client(b)
	m := newMutex(b, c, dstest.Name(b))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			held, err := m.Lock(ctx)
			if err != nil {
				b.Error(err)
				return
			}
			if err := m.Unlock(held); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
