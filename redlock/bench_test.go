package redlock_test

import (
	"context"
	"testing"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/redlock"
)

// BenchmarkAcquireRelease measures one uncontended acquire and release: the
// Redlock over 5 masters asks them in parallel, so it costs about one round
// trip each way, against a mutex on one master and a multilock over the same
// 5 masters, which asks them one after another.
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
	ml, err := multilock.New(distinct...)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		l    distsync.Locker
	}{
		{"redlock-5-masters-parallel", rl},
		{"multilock-5-masters-sequential", ml},
		{"mutex-1-master", mutexes[0]},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				held, err := bc.l.TryLock(ctx, 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				if err := bc.l.Unlock(held); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
