package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/redlock"
)

// BenchmarkAcquireRelease measures one uncontended acquire and release: the
// Redlock over 5 masters asks them in parallel, so it costs about one round
// trip each way, against a mutex on one master and a multilock over the same
// 5 masters, which asks them one after another; then the same with 1 ms added
// to every call to a master.
func BenchmarkAcquireRelease(b *testing.B) {
	servers := startMasters(b, 5)
	clients := clientsOn(b, servers)
	name := dstest.Name(b)
	mutexes := lockers(b, dstest.Kinds[0], clients, name)
	rl, err := redlock.New(mutexes)
	if err != nil {
		b.Fatal(err)
	}
	// Different names per master, so that the multilock holds five locks.
	var distinct []distsync.Locker
	for i, c := range clients {
		distinct = append(distinct, lockers(b, dstest.Kinds[0], []*distsync.Client{c}, name+"-multi-"+string(rune('a'+i)))...)
	}
	ml, err := multilock.New(distinct)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, l distsync.Locker) {
		ctx := context.Background()
		for b.Loop() {
			held, err := l.TryLock(ctx, 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Unlock(held); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("redlock-5-masters-parallel", func(b *testing.B) { run(b, rl) })
	b.Run("multilock-5-masters-sequential", func(b *testing.B) { run(b, ml) })
	b.Run("mutex-1-master", func(b *testing.B) { run(b, mutexes[0]) })

	// Loopback answers in microseconds and the servers share the CPUs, which
	// hides what the parallel round saves. With 1 ms added to every call to a
	// master, as a network would, the Redlock costs about one delay each way
	// and the sequential multilock five.
	const rtt = time.Millisecond
	slowRL, err := redlock.New(slow(mutexes, rtt))
	if err != nil {
		b.Fatal(err)
	}
	slowML, err := multilock.New(slow(distinct, rtt))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("rtt-1ms/redlock-5-masters-parallel", func(b *testing.B) { run(b, slowRL) })
	b.Run("rtt-1ms/multilock-5-masters-sequential", func(b *testing.B) { run(b, slowML) })
	b.Run("rtt-1ms/mutex-1-master", func(b *testing.B) { run(b, slow(mutexes[:1], rtt)[0]) })
}

// delayed is a Locker whose calls take delay longer, as over a slower network.
type delayed struct {
	distsync.Locker
	delay time.Duration
}

func (d delayed) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	time.Sleep(d.delay)
	return d.Locker.TryLock(ctx, wait, lease)
}

func (d delayed) Unlock(ctx context.Context) error {
	time.Sleep(d.delay)
	return d.Locker.Unlock(ctx)
}

func slow(ls []distsync.Locker, delay time.Duration) []distsync.Locker {
	out := make([]distsync.Locker, len(ls))
	for i, l := range ls {
		out[i] = delayed{l, delay}
	}
	return out
}
