package main

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/redlock"
)

// locker is one library's blocking mutex, as the scenarios use it.
type locker interface {
	// lock blocks until name is held (or ctx ends) and returns the release.
	lock(ctx context.Context, name string) (release func() error, err error)
	// retries counts acquisitions the library gave up on (its retry budget
	// ran out) and the harness restarted; the wait spans all of them.
	retries() int64
	close()
}

// library is one contestant: how to open it on a server.
type library struct {
	name string
	open func(addr string) (locker, error)
	// neverWaits: the contender cannot wait for a held name (the floor), so
	// it runs only in the scenarios where nobody contends.
	neverWaits bool
	// openRedlock, when set, opens the library's Redlock over independent
	// masters (scenarios 8 and 9); nil: it has none.
	openRedlock func(addrs []string) (locker, error)
	// direct names the commands it sends itself besides scripts (EVALSHA,
	// EVAL, FCALL), for the server command time (cmdTime).
	direct []string
}

// floorOption is the rueidis client of the floors: automatic pipelining,
// and the flush delay distsync's Client has by default (Options.FlushDelay),
// so that a floor differs from distsync by what it sends only.
func floorOption(addr string) rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true, MaxFlushDelay: distsync.DefaultFlushDelay}
}

// errWouldWait is the floor's refusal: it never waits, so it only runs in
// the scenarios where nobody contends.
var errWouldWait = errors.New("floor: the name is taken (the floor never waits)")

// floor is no library: the cheapest correct pair a Go client can send, SET
// NX PX and the compare-and-delete script, on one rueidis client with its
// automatic pipelining. No waiting, no renewal, no reentrancy, no fencing.
// Every lock must be measured against it.
type floorLocker struct {
	c   rueidis.Client
	del *rueidis.Lua
	seq atomic.Int64
}

func openFloor(addr string) (locker, error) {
	c, err := rueidis.NewClient(floorOption(addr))
	if err != nil {
		return nil, err
	}
	return &floorLocker{c: c, del: rueidis.NewLuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)}, nil
}

func (f *floorLocker) lock(ctx context.Context, name string) (func() error, error) {
	tok := strconv.FormatInt(f.seq.Add(1), 36)
	err := f.c.Do(ctx, f.c.B().Set().Key(name).Value(tok).Nx().PxMilliseconds(10000).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return nil, errWouldWait
	}
	if err != nil {
		return nil, err
	}
	return func() error { return f.del.Exec(context.Background(), f.c, []string{name}, []string{tok}).Error() }, nil
}

func (*floorLocker) retries() int64 { return 0 }
func (f *floorLocker) close()       { f.c.Close() }

// exactFloor is no library either: the least pair with distsync's exactness,
// on a bare rueidis client (no watchdog, no context, no reentrancy, no
// waiting). Its lock refuses an acquisition finished before (a late copy of
// an attempt) and a name with waiters, takes a fencing token from one
// counter that only grows (from the server's clock, as distsync's), and sets
// the hold with its lease in one SET NX PX; its release checks the owner and
// the acquisition, deletes, and leaves the finished mark an exact retried
// release needs. What distsync spends beyond it is its client (the watchdog,
// the holder's context, the ledger of acquisitions) and its layout (a hash:
// reentrancy and the waiters' flag).
type exactFloorLocker struct {
	c        rueidis.Client
	acq, rel *rueidis.Lua
	seq      atomic.Int64
}

func openExactFloor(addr string) (locker, error) {
	c, err := rueidis.NewClient(floorOption(addr))
	if err != nil {
		return nil, err
	}
	return &exactFloorLocker{c: c,
		acq: rueidis.NewLuaScript(`if redis.call('EXISTS', KEYS[3], KEYS[4]) ~= 0 then return 0 end
local t = redis.call('TIME')
local s = t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
local last = redis.call('SET', KEYS[2], s, 'GET')
if last and (#last > #s or #last == #s and last >= s) then
  s = string.format('%d', tonumber(last) + 1)
  redis.call('SET', KEYS[2], s)
end
if redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. s, 'NX', 'PX', ARGV[2]) then return tonumber(s) end
return 0`),
		rel: rueidis.NewLuaScript(`if redis.call('GET', KEYS[1]) ~= ARGV[1] .. ' ' .. ARGV[2] then return -1 end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
return 1`),
	}, nil
}

func (f *exactFloorLocker) lock(ctx context.Context, name string) (func() error, error) {
	id := "exactfloor:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":" + strconv.FormatInt(f.seq.Add(1), 36)
	keys := []string{"{" + name + "}", "exactfloor:fence", "{" + name + "}:done:" + id, "{" + name + "}:waiters"}
	tok, err := f.acq.Exec(ctx, f.c, keys, []string{id, "10000"}).AsInt64()
	if err != nil {
		return nil, err
	}
	if tok == 0 {
		return nil, errWouldWait
	}
	s := strconv.FormatInt(tok, 10)
	return func() error {
		return f.rel.Exec(context.Background(), f.c, keys, []string{id, s, "10000"}).Error()
	}, nil
}

func (*exactFloorLocker) retries() int64 { return 0 }
func (f *exactFloorLocker) close()       { f.c.Close() }

var libraries = []library{
	{"floor", openFloor, true, nil, []string{"set"}},
	{"exact-floor", openExactFloor, true, nil, nil},
	{"distsync", openDistsync, false, openDistsyncRedlock, nil},
	{"redsync", openRedsync, false, openRedsyncN, []string{"set"}},
	{"redislock", openRedislock, false, nil, nil},
	{"rueidislock", openRueidislock, false, nil, nil},
	{"rueidislock-m1", openRueidislockM1, false, nil, nil},
}

// distsync: Client.Mutex with the Client's defaults (30 s watchdog lease).
type dsLocker struct{ c *distsync.Client }

func openDistsync(addr string) (locker, error) {
	c, err := distsync.New(distsync.Options{Addrs: []string{addr}})
	if err != nil {
		return nil, err
	}
	return dsLocker{c}, nil
}

func (d dsLocker) lock(ctx context.Context, name string) (func() error, error) {
	m, err := d.c.Mutex(name)
	if err != nil {
		return nil, err
	}
	lctx, err := m.Lock(ctx)
	if err != nil {
		return nil, err
	}
	return func() error { return m.Unlock(lctx) }, nil
}

func (dsLocker) retries() int64 { return 0 }
func (d dsLocker) close()       { d.c.Close() }

// distsync's Redlock: redlock.New over one Client.Mutex per master, each
// Client with its defaults (30 s watchdog lease), and the Redlock's defaults.
type dsRedlock struct{ cs []*distsync.Client }

func openDistsyncRedlock(addrs []string) (locker, error) {
	d := dsRedlock{}
	for _, a := range addrs {
		c, err := distsync.New(distsync.Options{Addrs: []string{a}})
		if err != nil {
			d.close()
			return nil, err
		}
		d.cs = append(d.cs, c)
	}
	return d, nil
}

func (d dsRedlock) lock(ctx context.Context, name string) (func() error, error) {
	members := make([]distsync.Locker, len(d.cs))
	for i, c := range d.cs {
		m, err := c.Mutex(name)
		if err != nil {
			return nil, err
		}
		members[i] = m
	}
	l, err := redlock.New(members)
	if err != nil {
		return nil, err
	}
	lctx, err := l.Lock(ctx)
	if err != nil {
		return nil, err
	}
	return func() error { return l.Unlock(lctx) }, nil
}

func (dsRedlock) retries() int64 { return 0 }
func (d dsRedlock) close() {
	for _, c := range d.cs {
		c.Close()
	}
}

// redsync: redsync.New on a go-redis v9 pool, NewMutex with its defaults
// (8 s expiry, 32 tries, 50-250 ms random delay). When the 32 tries are spent
// the harness calls Lock again and counts a retry.
type rsLocker struct {
	rdbs []*redis.Client // one per master
	rs   *redsync.Redsync
	n    atomic.Int64
}

func openRedsync(addr string) (locker, error) { return openRedsyncN([]string{addr}) }

// openRedsyncN is redsync's Redlock: redsync.New over one go-redis pool per
// master.
func openRedsyncN(addrs []string) (locker, error) {
	r := &rsLocker{}
	var pools []redsyncredis.Pool
	for _, a := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: a})
		r.rdbs = append(r.rdbs, rdb)
		pools = append(pools, goredis.NewPool(rdb))
	}
	r.rs = redsync.New(pools...)
	return r, nil
}

func (r *rsLocker) lock(ctx context.Context, name string) (func() error, error) {
	for {
		m := r.rs.NewMutex(name)
		err := m.LockContext(ctx)
		if err == nil {
			return func() error {
				_, err := m.UnlockContext(context.Background())
				return err
			}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.n.Add(1)
	}
}

func (r *rsLocker) retries() int64 { return r.n.Load() }
func (r *rsLocker) close() {
	for _, rdb := range r.rdbs {
		rdb.Close()
	}
}

// redislock: Obtain with a TTL (the library has no default) and the
// LinearBackoff(100ms) retry strategy of its documentation's example (without
// the example's limit of 3). Obtain gives up after the TTL when ctx has no
// deadline; the harness then calls it again and counts a retry.
type rlLocker struct {
	rdb *redis.Client
	c   *redislock.Client
	n   atomic.Int64
}

const redislockTTL = 10 * time.Second

func openRedislock(addr string) (locker, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	return &rlLocker{rdb: rdb, c: redislock.New(rdb)}, nil
}

func (r *rlLocker) lock(ctx context.Context, name string) (func() error, error) {
	for {
		l, err := r.c.Obtain(ctx, name, redislockTTL, &redislock.Options{RetryStrategy: redislock.LinearBackoff(100 * time.Millisecond)})
		if err == nil {
			return func() error { return l.Release(context.Background()) }, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.Is(err, redislock.ErrNotObtained) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		r.n.Add(1)
	}
}

func (r *rlLocker) retries() int64 { return r.n.Load() }
func (r *rlLocker) close()         { r.rdb.Close() }

// rueidislock: NewLocker with its defaults (3 keys, majority 2, 5 s validity
// extended every 2.5 s, waiters woken by client-side-caching invalidations).
type rlkLocker struct{ l rueidislock.Locker }

func openRueidislock(addr string) (locker, error) {
	return newRueidislock(rueidislock.LockerOption{ClientOption: peerOption(addr)})
}

// peerFlush is the flush delay rueidislock's clients get (-peer-flush): none
// by default, as its documentation configures them.
var peerFlush time.Duration

// peerOption is the rueidis client of rueidislock.
func peerOption(addr string) rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: []string{addr}, MaxFlushDelay: peerFlush}
}

// rueidislock-m1: NewLocker as its README configures one Redis instance
// (KeyMajority 1: one key; NoLoopTracking: no invalidation of the client's
// own writes), the other options at their defaults.
func openRueidislockM1(addr string) (locker, error) {
	return newRueidislock(rueidislock.LockerOption{
		ClientOption:   peerOption(addr),
		KeyMajority:    1,
		NoLoopTracking: true,
	})
}

func newRueidislock(opt rueidislock.LockerOption) (locker, error) {
	l, err := rueidislock.NewLocker(opt)
	if err != nil {
		return nil, err
	}
	return rlkLocker{l}, nil
}

func (r rlkLocker) lock(ctx context.Context, name string) (func() error, error) {
	_, cancel, err := r.l.WithContext(ctx, name)
	if err != nil {
		return nil, err
	}
	return func() error { cancel(); return nil }, nil
}

func (rlkLocker) retries() int64 { return 0 }
func (r rlkLocker) close()       { r.l.Close() }
