package distsync_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/redlock"
)

// Redlock's members are independent masters: members that are the same
// locker, the same name on the same Client, or otherwise share one Client
// are refused with ErrInvalidArgument (they granted a fake "3 of 3" quorum
// over one server); one Client per master is accepted.
func TestRedlockRefusesMembersOfOneClient(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	c := dstest.Client(t)
	others := []*distsync.Client{
		dstest.Client(t, func(o *distsync.Options) { o.DB = 7 }),
		dstest.Client(t, func(o *distsync.Options) { o.DB = 8 }),
	}
	m, _ := c.Mutex(name)
	m2, _ := c.Mutex(name)
	f, _ := c.FairLock(name)
	f2, _ := c.FairLock(name)
	rw, _ := c.RWLock(name)
	rw2, _ := c.RWLock(name)
	o1, _ := others[0].Mutex(name)
	o2, _ := others[1].Mutex(name)
	for what, ls := range map[string][]distsync.Locker{
		"the same mutex thrice":         {m, m, m},
		"the name twice on one Client":  {m, m2, o1},
		"the same fair lock":            {f, f2, o1},
		"the same write side":           {rw.Write(), rw2.Write(), o1},
		"a master twice among five":     {o1, m, o2, m2, f},
		"the same locker beside others": {o1, o2, o1},
	} {
		if _, err := redlock.New(ls); !errors.Is(err, distsync.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		}
	}
	l, err := redlock.New([]distsync.Locker{m, o1, o2})
	must(t, err)
	held, err := l.TryLock(context.Background(), time.Second, 0)
	must(t, err)
	must(t, l.Unlock(held))
}
