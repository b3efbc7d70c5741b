package distsync

import (
	"context"
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/core"
)

// Info is what is stored under a name, as Client.Inspect read it at one
// instant of the server's clock: which kind of primitive, who holds it (an
// election's leader), who waits (its candidates). Remaining times are the
// server's.
type Info struct {
	// Name is the primitive's name; Key its main key in Redis.
	Name, Key string
	// Kind is the kind of primitive stored under the name (a Kind
	// constant); "" when nothing is stored (a free lock, an unset semaphore
	// nobody waits for, an open latch, an election nobody leads or
	// campaigns in), and then every other field is zero.
	Kind Kind
	// Held reports whether any owner holds the lock or a permit of the
	// semaphore, whether the latch is closed (its count is above zero), or
	// whether someone leads the election.
	Held bool
	// Mode is how a read-write lock is held: SideWrite, SideRead, or "" when
	// it is free or the primitive is not a read-write lock.
	Mode string
	// TTL is the lock's remaining lease: the key's for the mutex, the fair
	// lock and the election's leader, the longest hold's for the read-write
	// lock; 0 when it is
	// free and for semaphores and latches (a permit's lease is its
	// Owner.TTL), -1 when the key has no expiry.
	TTL time.Duration
	// Token is the fencing token of the mutex's or the fair lock's current
	// hold, or the election leader's term; 0 when none (a read-write lock's
	// holds have their own, Owner.Token).
	Token int64
	// Owners are the live holds, in ID order (then Mode): the lock's owners,
	// the permit semaphore's held permits, or the election's leader.
	Owners []Owner
	// Waiters are the registered waiters whose registration has not ended:
	// in queue order for the fair lock and the election's candidates, the
	// writers before the readers for the read-write lock, else in the order
	// their registrations end.
	Waiters []Waiter
	// Permits are a semaphore's permits; nil for other kinds.
	Permits *Permits
	// Count is a latch's count; nil for other kinds.
	Count *int64
	// Leader is what an election's leader announced; nil when nobody leads
	// and for other kinds. The leader is Owners[0], its term Token, the
	// rest of its lease TTL.
	Leader *Leader
}

// Leader is an election's leader, as Inspect reads it (election.State has
// the same fields for a program that campaigns or observes).
type Leader struct {
	// Value is what the leader announced (Campaign, Proclaim).
	Value string
	// Term is the leader's term, its fencing token (also Info.Token).
	Term int64
	// Since is when it was elected, by the server's clock.
	Since time.Time
}

// Owner is one hold of a lock, or one held permit.
type Owner struct {
	// ID names the owner in Redis: "<Client>:<owner id>" for a lock's
	// owner, the permit's id for a permit.
	ID string
	// Client is the ID (Client.ID) of the Client that made the owner,
	// "<client name>/<random id>"; "" for a permit.
	Client string
	// ClientName is the client name part of Client (Options.ClientName).
	ClientName string
	// Mode is the read-write lock's hold, "read" or "write"; "" for other
	// kinds.
	Mode string
	// Holds is the owner's hold count: its live acquisitions (re-entries
	// included); 1 for a permit.
	Holds int
	// Token is the fencing token of a read-write lock's hold; 0 for other
	// kinds (the mutex's and the fair lock's is Info.Token).
	Token int64
	// TTL is the remaining lease of the hold where each hold has its own
	// (read-write lock holds, permits); 0 where the lease is the lock's
	// (Info.TTL).
	TTL time.Duration
}

// Waiter is one registered waiter.
type Waiter struct {
	// ID is the waiter's id, "<Client>:<waiter id>".
	ID string
	// Mode is what a read-write lock's waiter waits for, "read" or
	// "write"; "" for other kinds.
	Mode string
	// Window is how long its registration lasts unless it tries again: a
	// waiter whose process died disappears when it ends.
	Window time.Duration
}

// Permits are a semaphore's permits (either kind).
type Permits struct {
	// Available is how many permits can be acquired now (held permits whose
	// lease ended included: the next call returns them).
	Available int64
	// Held is how many permits the permit-expiring semaphore has handed
	// out under an id with a live lease; a counting semaphore does not
	// record its holders, and its Held is 0.
	Held int64
}

//go:embed inspect.lua
var inspectLua string

var inspectScript = core.NewScript(inspectLua)

// inspectSuffixes are the keys inspect.lua reads beside the main key, in
// the order of its KEYS.
var inspectSuffixes = []string{"waiters", "queue", "deadlines", "leases", "rwaiters", "wwaiters", "permits", "needs", "waiting", "pneeds", "cands", "wins"}

// Inspect reports what is stored under name, whatever its kind and with no
// handle of it: the kind, owners with their hold counts, modes, tokens and
// leases, waiters, a semaphore's permits, a latch's count, an election's
// leader and candidates (see Info); Kind "" when nothing is stored. It is
// one round trip (a script that changes nothing). An invalid name returns
// ErrInvalidName (with no I/O), a closed Client ErrClosed, and keys of a
// type no primitive makes an error wrapping ErrWrongKind.
func (c *Client) Inspect(ctx context.Context, name string) (Info, error) {
	if err := c.cc().Closed(); err != nil {
		return Info{}, err
	}
	if err := core.ValidateName(name); err != nil {
		return Info{}, err
	}
	info := Info{Name: name, Key: c.core.Key(name, "")}
	keys := []string{info.Key}
	for _, s := range inspectSuffixes {
		keys = append(keys, c.core.Key(name, s))
	}
	r, err := c.core.Eval(ctx, inspectScript, keys, nil).ToArray()
	if err == nil {
		err = info.decode(r)
	}
	if err != nil {
		return Info{}, fmt.Errorf("inspect %q: %w", name, err)
	}
	return info, nil
}

// decode fills i from inspect.lua's reply.
func (i *Info) decode(r []rueidis.RedisMessage) error {
	if len(r) != 10 {
		return fmt.Errorf("unexpected reply of %d elements", len(r))
	}
	var p parser
	kind, typ := p.str(r[0]), p.str(r[1])
	ttl, token, count, avail := p.int(r[2]), p.num(r[3]), p.str(r[4]), p.int(r[5])
	owners, waiters := p.rows(r[6], 5), p.rows(r[7], 3)
	value, since := p.str(r[8]), p.num(r[9])
	if p.err != nil {
		return p.err
	}
	if kind == "" {
		if typ != "none" {
			return fmt.Errorf("%w: %s is a %s that fits no known kind", ErrWrongKind, i.Key, typ)
		}
		return nil
	}
	i.Kind, i.Token = Kind(kind), token
	i.TTL = ms(ttl)
	for _, o := range owners {
		id, mode := p.str(o[0]), p.str(o[1])
		owner := Owner{ID: id, Mode: mode, Holds: int(p.int(o[2])), Token: p.num(o[3]), TTL: ms(p.int(o[4]))}
		if i.Kind != KindPermitSemaphore { // a permit's id names no Client
			owner.Client, _, _ = cutLast(id, ':')
			owner.ClientName, _, _ = strings.Cut(owner.Client, "/")
		}
		i.Owners = append(i.Owners, owner)
		if mode == SideWrite || i.Mode == "" {
			i.Mode = mode
		}
	}
	sort.Slice(i.Owners, func(a, b int) bool {
		x, y := i.Owners[a], i.Owners[b]
		return x.ID < y.ID || (x.ID == y.ID && x.Mode < y.Mode)
	})
	for _, w := range waiters {
		i.Waiters = append(i.Waiters, Waiter{ID: p.str(w[0]), Mode: p.str(w[1]), Window: ms(p.int(w[2]))})
	}
	i.Held = len(i.Owners) > 0
	switch i.Kind {
	case KindSemaphore, KindPermitSemaphore:
		i.Permits = &Permits{Available: avail, Held: int64(len(i.Owners))}
	case KindLatch:
		n, err := strconv.ParseInt(count, 10, 64)
		if err != nil {
			return fmt.Errorf("latch count %q: %w", count, err)
		}
		i.Count, i.Held = &n, n > 0
	case KindElection:
		if i.Held {
			i.Leader = &Leader{Value: value, Term: token, Since: time.UnixMilli(since)}
		}
	}
	return p.err
}

// ms turns a script's milliseconds into a Duration, keeping -1 (no expiry)
// as -1.
func ms(n int64) time.Duration {
	if n < 0 {
		return -1
	}
	return time.Duration(n) * time.Millisecond
}

// cutLast is strings.Cut at the last sep.
func cutLast(s string, sep byte) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// parser reads a script's reply, keeping the first error.
type parser struct{ err error }

func (p *parser) str(m rueidis.RedisMessage) string {
	s, err := m.ToString()
	p.keep(err)
	return s
}

func (p *parser) int(m rueidis.RedisMessage) int64 {
	n, err := m.AsInt64()
	p.keep(err)
	return n
}

// num reads a number the script returns as a string, "" for 0.
func (p *parser) num(m rueidis.RedisMessage) int64 {
	s := p.str(m)
	if s == "" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	p.keep(err)
	return n
}

// rows reads an array of arrays of n elements each.
func (p *parser) rows(m rueidis.RedisMessage, n int) [][]rueidis.RedisMessage {
	a, err := m.ToArray()
	p.keep(err)
	var rows [][]rueidis.RedisMessage
	for _, e := range a {
		row, err := e.ToArray()
		if err == nil && len(row) != n {
			err = fmt.Errorf("unexpected row of %d elements, want %d", len(row), n)
		}
		p.keep(err)
		if err == nil {
			rows = append(rows, row)
		}
	}
	return rows
}

func (p *parser) keep(err error) {
	if p.err == nil {
		p.err = err
	}
}
