package distsync_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// luaWords match what only a script's author could read in an error: a
// script's SHA, Redis's "@user_script" position, a Lua line, a traceback.
var luaWords = regexp.MustCompile(`[0-9a-f]{40}|user_script|traceback|:\d+:`)

// everyCall returns every call that reaches the server of every primitive, on
// the handles of name made by c, for tests that check each of them.
// Unlock, Extend and Token of a lock, and Release of a permit, need an
// acquisition of their own kind, which a foreign name cannot have: they
// return ErrNotHeld without a round trip, and are left out.
func everyCall(t *testing.T, c *distsync.Client, name string) map[string]func(ctx context.Context) error {
	t.Helper()
	m, err := c.Mutex(name)
	must(t, err)
	f, err := c.FairLock(name)
	must(t, err)
	rw, err := c.RWLock(name)
	must(t, err)
	s, err := c.Semaphore(name)
	must(t, err)
	p, err := c.PermitSemaphore(name)
	must(t, err)
	l, err := c.Latch(name)
	must(t, err)
	e := func(_ any, err error) error { return err }
	calls := map[string]func(ctx context.Context) error{}
	type lock interface {
		Lock(context.Context) (context.Context, error)
		TryLock(context.Context, time.Duration, time.Duration) (context.Context, error)
		ForceUnlock(context.Context) (bool, error)
		IsLocked(context.Context) (bool, error)
		Holders(context.Context) (int, error)
		Waiting(context.Context) (int, error)
		HoldCount(context.Context) (int, error)
		TTL(context.Context) (time.Duration, error)
	}
	for kind, l := range map[string]lock{"mutex": m, "fairlock": f, "rwlock.read": rw.Read(), "rwlock.write": rw.Write()} {
		calls[kind+".Lock"] = func(ctx context.Context) error { return e(l.Lock(ctx)) }
		calls[kind+".TryLock"] = func(ctx context.Context) error { return e(l.TryLock(ctx, 0, 0)) }
		calls[kind+".TryLock(wait)"] = func(ctx context.Context) error { return e(l.TryLock(ctx, time.Second, time.Minute)) }
		calls[kind+".ForceUnlock"] = func(ctx context.Context) error { return e(l.ForceUnlock(ctx)) }
		calls[kind+".IsLocked"] = func(ctx context.Context) error { return e(l.IsLocked(ctx)) }
		calls[kind+".Holders"] = func(ctx context.Context) error { return e(l.Holders(ctx)) }
		calls[kind+".Waiting"] = func(ctx context.Context) error { return e(l.Waiting(ctx)) }
		calls[kind+".HoldCount"] = func(ctx context.Context) error { return e(l.HoldCount(ctx)) }
		calls[kind+".TTL"] = func(ctx context.Context) error { return e(l.TTL(ctx)) }
	}
	type pool interface {
		TrySetPermits(context.Context, int64) (bool, error)
		AddPermits(context.Context, int64) error
		SetPermits(context.Context, int64) error
		Available(context.Context) (int64, error)
		Drain(context.Context) (int64, error)
		Delete(context.Context) (bool, error)
	}
	for kind, s := range map[string]pool{"semaphore": s, "permitsemaphore": p} {
		calls[kind+".TrySetPermits"] = func(ctx context.Context) error { return e(s.TrySetPermits(ctx, 1)) }
		calls[kind+".AddPermits"] = func(ctx context.Context) error { return s.AddPermits(ctx, 1) }
		calls[kind+".SetPermits"] = func(ctx context.Context) error { return s.SetPermits(ctx, 1) }
		calls[kind+".Available"] = func(ctx context.Context) error { return e(s.Available(ctx)) }
		calls[kind+".Drain"] = func(ctx context.Context) error { return e(s.Drain(ctx)) }
		calls[kind+".Delete"] = func(ctx context.Context) error { return e(s.Delete(ctx)) }
	}
	calls["semaphore.Acquire"] = func(ctx context.Context) error { return s.Acquire(ctx, 1) }
	calls["semaphore.TryAcquire"] = func(ctx context.Context) error { return s.TryAcquire(ctx, 1, 0) }
	calls["semaphore.TryAcquire(wait)"] = func(ctx context.Context) error { return s.TryAcquire(ctx, 1, time.Second) }
	calls["semaphore.Release"] = func(ctx context.Context) error { return s.Release(ctx, 1) }
	calls["permitsemaphore.Acquire"] = func(ctx context.Context) error { return e(p.Acquire(ctx)) }
	calls["permitsemaphore.TryAcquire"] = func(ctx context.Context) error { return e(p.TryAcquire(ctx, 0, 0)) }
	calls["permitsemaphore.TryAcquireN"] = func(ctx context.Context) error { return e(p.TryAcquireN(ctx, 2, time.Second, 0)) }
	calls["permitsemaphore.ReleaseID"] = func(ctx context.Context) error { return p.ReleaseID(ctx, "no-such-permit") }
	calls["permitsemaphore.Permits"] = func(ctx context.Context) error { return e(p.Permits(ctx)) }
	calls["permitsemaphore.Held"] = func(ctx context.Context) error { return e(p.Held(ctx)) }
	calls["latch.TrySetCount"] = func(ctx context.Context) error { return e(l.TrySetCount(ctx, 1)) }
	calls["latch.CountDown"] = func(ctx context.Context) error { return e(l.CountDown(ctx)) }
	calls["latch.Count"] = func(ctx context.Context) error { return e(l.Count(ctx)) }
	calls["latch.Await"] = func(ctx context.Context) error { return l.Await(ctx) }
	calls["latch.Delete"] = func(ctx context.Context) error { return e(l.Delete(ctx)) }
	return calls
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Every call of every primitive refuses a name another kind uses, read
// calls included, and a key that is no distsync primitive (a plain
// string), with ErrWrongKind in Go's words: the primitive and its name, no
// Lua. The other kind's state is left as it was.
func TestEveryCallRefusesAnotherKind(t *testing.T) {
	t.Parallel()
	redistest.RequireReal(t, redistest.Shared(t), redistest.ErrorTables)
	c := dstest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rc := c.Rueidis()
	base := dstest.Name(t)
	owners := map[string]func(name string) (snapshot func() string){
		"string": func(name string) func() string {
			key := "distsync:{" + name + "}"
			must(t, rc.Do(ctx, rc.B().Set().Key(key).Value("not a primitive").Build()).Error())
			return func() string { v, _ := rc.Do(ctx, rc.B().Get().Key(key).Build()).ToString(); return v }
		},
	}
	snap := func(name string) func() string {
		return func() string {
			v, _ := rc.Do(ctx, rc.B().Hgetall().Key("distsync:{"+name+"}").Build()).AsStrMap()
			return fmt.Sprint(v)
		}
	}
	owners["mutex"] = func(name string) func() string {
		m, _ := c.Mutex(name)
		_, err := m.TryLock(ctx, 0, time.Minute)
		must(t, err)
		return snap(name)
	}
	owners["semaphore"] = func(name string) func() string {
		s, _ := c.Semaphore(name)
		_, err := s.TrySetPermits(ctx, 3)
		must(t, err)
		return snap(name)
	}
	owners["fairlock"] = func(name string) func() string {
		f, _ := c.FairLock(name)
		_, err := f.TryLock(ctx, 0, time.Minute)
		must(t, err)
		return snap(name)
	}
	owners["rwlock"] = func(name string) func() string {
		rw, _ := c.RWLock(name)
		_, err := rw.Read().TryLock(ctx, 0, time.Minute)
		must(t, err)
		return snap(name)
	}
	owners["permitsemaphore"] = func(name string) func() string {
		p, _ := c.PermitSemaphore(name)
		_, err := p.TrySetPermits(ctx, 3)
		must(t, err)
		return snap(name)
	}
	owners["latch"] = func(name string) func() string {
		l, _ := c.Latch(name)
		_, err := l.TrySetCount(ctx, 2)
		must(t, err)
		return snap(name)
	}
	for owner, create := range owners {
		probe := everyCall(t, c, "probe")
		for call := range probe {
			if kind, _, _ := strings.Cut(call, "."); kind == owner {
				continue
			}
			t.Run(owner+"/"+call, func(t *testing.T) {
				name := base + "-" + owner + "-" + call
				before := create(name)
				was := before()
				err := everyCall(t, c, name)[call](ctx)
				if !errors.Is(err, distsync.ErrWrongKind) {
					t.Errorf("%s on a %s's name: %v, want ErrWrongKind", call, owner, err)
				}
				if err != nil && luaWords.MatchString(err.Error()) {
					t.Errorf("%s: the error speaks Lua: %q", call, err)
				}
				if now := before(); now != was {
					t.Errorf("%s changed the %s: %q, was %q", call, owner, now, was)
				}
			})
		}
	}
}
