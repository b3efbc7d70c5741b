// Package redlock is the Redlock algorithm over N independent Redis masters,
// done completely. A Lock composes one distsync.Locker of the same name per
// master, each made by that master's own Client: mutexes, fair locks, the
// read or write side of read-write locks.
//
// A lock is granted when at least Quorum (N/2+1) masters granted it and its
// validity, lease − elapsed − drift, is still positive (Grant reports it);
// otherwise whatever was granted is released on every master, including
// those that did not answer. A refused Lock waits by push, never by
// polling, on one master, the leader, so that contenders' votes do not split
// between masters. A hold is renewed by each master's Client
// watchdog (lease 0) or ends at its validity deadline (lease > 0). Its
// context ends with a cause wrapping ErrLeaseLost when fewer than Quorum
// masters still hold it, with ErrReleased after Unlock, and when the context
// it was acquired on ends, which releases every member. Unlock releases on
// every master at once.
//
// It survives the crash or partition of a minority of masters; it cannot
// stop a holder paused past its validity or a clock that jumps (check a
// member's fencing token: Members, then the member mutex's Token), nor a
// master that restarts empty within a lease (delay its restart by the
// longest lease in use, or run it with appendfsync always). docs/safety.md
// says what each deployment guarantees, docs/primitives.md#redlock what it
// costs. How it works: docs/how-it-works.md#redlock.
package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/compose"
	"github.com/distsync/distsync/internal/core"
)

// Defaults of the options.
const (
	// DefaultDriftFactor and DefaultDriftConstant give the clock drift allowed
	// for: lease × 0.01 + 2 ms.
	DefaultDriftFactor   = 0.01
	DefaultDriftConstant = 2 * time.Millisecond
	// DefaultRetryMin and DefaultRetryMax bound the random delay after a
	// round that split the masters (WithRetryDelay).
	DefaultRetryMin = 50 * time.Millisecond
	DefaultRetryMax = 250 * time.Millisecond
	// MinMasterTimeout is the least default per-master timeout; the default is
	// 1% of the lease, at least this.
	MinMasterTimeout = 50 * time.Millisecond
)

// Option configures a Lock.
type Option func(*options)

type options struct {
	masterTimeout      time.Duration // 0: 1% of the lease, at least MinMasterTimeout
	driftFactor        float64
	driftConstant      time.Duration
	watchdogLease      time.Duration
	retryMin, retryMax time.Duration
	errs               []error
}

// WithMasterTimeout sets how long a round waits for the masters' answers
// (they are asked in parallel): a master that has not answered by then counts
// as refusing, and a grant it sends later is released. Default: 1% of the
// lease, at least 50 ms. It should be a small fraction of the lease: the
// validity is the lease minus the round's duration.
func WithMasterTimeout(d time.Duration) Option {
	return func(o *options) {
		if d <= 0 {
			o.errs = append(o.errs, fmt.Errorf("%w: master timeout %v is not positive", distsync.ErrInvalidArgument, d))
		}
		o.masterTimeout = d
	}
}

// WithDrift sets the clock drift allowed for: lease × factor + constant.
// Default 0.01 and 2 ms.
func WithDrift(factor float64, constant time.Duration) Option {
	return func(o *options) {
		if !(factor >= 0 && factor < 1) || constant < 0 {
			o.errs = append(o.errs, fmt.Errorf("%w: drift factor %v (want [0,1)) or constant %v", distsync.ErrInvalidArgument, factor, constant))
		}
		o.driftFactor, o.driftConstant = factor, constant
	}
}

// WithWatchdogLease tells the Lock the watchdog lease of its members' Clients
// (distsync.Options.Watchdog.Lease, default 30 s), which Locker does not expose: a lock
// taken with lease 0 gets that lease on each master, and the validity is
// computed from it. Set it whenever the Clients use another Lease; a value
// larger than the real lease overstates the validity.
func WithWatchdogLease(d time.Duration) Option {
	return func(o *options) {
		if d < distsync.MinLease {
			o.errs = append(o.errs, fmt.Errorf("%w: watchdog lease %v is shorter than the minimum, %v", distsync.ErrInvalidArgument, d, distsync.MinLease))
		}
		o.watchdogLease = d
	}
}

// WithRetryDelay bounds the random delay before another wait after a round
// in which the leader granted but fewer than a quorum did (contenders that
// follow another leader split the masters), or the validity was not
// positive: uniform in [min, max]. Default 50 ms to 250 ms. The randomness
// keeps contenders from splitting the masters again and again. A round the
// leader refused queues on it at once instead (see the package doc).
func WithRetryDelay(min, max time.Duration) Option {
	return func(o *options) {
		if min <= 0 || max < min {
			o.errs = append(o.errs, fmt.Errorf("%w: retry delay [%v, %v]", distsync.ErrInvalidArgument, min, max))
		}
		o.retryMin, o.retryMax = min, max
	}
}

// Lock is one lock held on a majority of independent masters. It is safe for
// concurrent use; a hold lives in the context TryLock returns.
type Lock struct {
	lockers []distsync.Locker // one per master
	key     string
	quorum  int
	opt     options
	pending sync.WaitGroup // releases of late answers still running
}

// contention is how long after a refused round of a name a Lock of that
// name that may wait skips its first round and waits at once (lock).
const contention = time.Second

// refusals holds, per name (its key), when a round of it was last refused
// in this process (core.Mono) and the leader that round found, for Locks
// made anew for each acquisition (as redsync's NewMutex is). Names refused
// more than contention ago are forgotten whenever the map grows past a
// thousand.
var refusals = struct {
	sync.Mutex
	at map[string]refusal
}{at: map[string]refusal{}}

type refusal struct {
	at     time.Duration
	leader int
}

// contended reports whether a round of l's name was refused less than
// contention before now, and the leader it found.
func (l *Lock) contended(now time.Duration) (int, bool) {
	refusals.Lock()
	defer refusals.Unlock()
	r, ok := refusals.at[l.key]
	if !ok || now-r.at >= contention || r.leader >= len(l.lockers) {
		return 0, false
	}
	return r.leader, true
}

// refuse records a refused round of l's name at now, and its leader.
func (l *Lock) refuse(now time.Duration, leader int) {
	refusals.Lock()
	defer refusals.Unlock()
	if len(refusals.at) >= 1000 {
		for k, r := range refusals.at {
			if now-r.at >= contention {
				delete(refusals.at, k)
			}
		}
	}
	refusals.at[l.key] = refusal{now, leader}
}

var _ distsync.Locker = (*Lock)(nil)

// Grant describes how a hold was granted.
type Grant struct {
	// Masters is how many masters were asked, Acquired how many granted in
	// time in the granting round, Quorum how many were needed.
	Masters, Acquired, Quorum int
	// Rounds counts the rounds made, the granting one included; a wait
	// whose members' grants made the hold counts as the granting round.
	Rounds int
	// Elapsed is how long the granting round took; for a hold a wait's
	// grants made, the time since the earliest of them was asked for.
	Elapsed time.Duration
	// Validity is lease − Elapsed − drift: how long the lock was certainly
	// held when TryLock returned, without renewal; less, with an explicit
	// lease, what makes it end with a quorum of its members' contexts
	// (each ends a safety margin early: see Deadline).
	Validity time.Duration
	// Deadline is when that validity ends: the start of the granting round +
	// lease − drift, or when fewer than a quorum of the members' contexts
	// are left, if that is earlier (a distsync hold of an explicit lease
	// ends by its Client's clock at the watchdog's Trust: lease − drift −
	// watchdog.Config.SafetyMargin). With an explicit lease the hold's
	// context ends then (cause ErrLeaseExpired); with the watchdog lease,
	// renewals extend it.
	Deadline time.Time
}

type holdKey struct{ l *Lock }

// hold is one acquisition: each master's context (nil where not granted),
// which its Unlock needs, and what to undo on release.
type hold struct {
	compose.Hold
	cancels []context.CancelFunc // of the contexts members derive from
	timeout time.Duration        // per-master
	grant   Grant
	expire  context.CancelFunc // of the validity deadline, or nil
}

// New returns the Redlock over lockers: the same lock (equal Key) on N
// independent masters, one Locker per master, each made by the Client of
// that master alone (one Client per master; an odd N tolerates the most
// failures for its size). It makes no I/O. It returns ErrInvalidArgument
// for no lockers, a nil one, differing keys, an option out of range, or
// lockers that share a Client (they would count one master several times;
// two Clients on one master cannot be told apart: do not make them).
func New(lockers []distsync.Locker, opts ...Option) (*Lock, error) {
	o := options{
		driftFactor:   DefaultDriftFactor,
		driftConstant: DefaultDriftConstant,
		watchdogLease: distsync.DefaultLease,
		retryMin:      DefaultRetryMin,
		retryMax:      DefaultRetryMax,
	}
	for _, f := range opts {
		f(&o)
	}
	if errs := compose.CheckLockers(lockers); errs != nil {
		o.errs = append(o.errs, errs...)
	} else {
		o.errs = append(o.errs, compose.SameClient(lockers)...)
		for i, lk := range lockers {
			if lk.Key() != lockers[0].Key() {
				o.errs = append(o.errs, fmt.Errorf("%w: locker %d has key %q, locker 0 %q", distsync.ErrInvalidArgument, i, lk.Key(), lockers[0].Key()))
			}
		}
	}
	if err := errors.Join(o.errs...); err != nil {
		return nil, fmt.Errorf("redlock: %w", err)
	}
	return &Lock{lockers: slices.Clone(lockers), key: lockers[0].Key(), quorum: len(lockers)/2 + 1, opt: o}, nil
}

// Key returns the key of the lock, the same on every master.
func (l *Lock) Key() string { return core.OrZero(l).key }

// Shared reports whether several owners may hold the Redlock at once:
// whether its lockers may be (read sides of read-write locks).
func (l *Lock) Shared() bool { return compose.Shared(core.OrZero(l).lockers...) }

// Quorum returns how many masters must grant: N/2+1.
func (l *Lock) Quorum() int { return core.OrZero(l).quorum }

// Lock is TryLock(ctx, distsync.Forever, 0): it blocks until a round or a
// wait is granted by a quorum, renewed by the watchdogs until Unlock, or
// until ctx ends.
func (l *Lock) Lock(ctx context.Context) (context.Context, error) {
	return l.lock(ctx, -1, 0)
}

// TryLock acquires on a quorum of the masters within wait (0: one round,
// a round trip to every master in parallel; distsync.Forever: until ctx
// ends) and returns within about wait plus one per-master timeout. Lease 0
// takes each master's watchdog lease, renewed until Unlock; lease > 0
// expires at the validity deadline (ErrLeaseExpired). The returned context
// carries the hold (Grant, Members) and re-enters on every master. A refusal
// wraps ErrNotAcquired; if ctx ends first, ctx.Err() and nothing held; bad
// durations, ErrInvalidArgument; too few open Clients for a quorum, ErrClosed.
func (l *Lock) TryLock(ctx context.Context, wait, lease time.Duration) (context.Context, error) {
	if err := core.CheckDuration("wait", wait); err != nil {
		return ctx, l.errorf(err)
	}
	if err := core.CheckDuration("lease", lease); err != nil {
		return ctx, l.errorf(err)
	}
	return l.lock(ctx, wait, lease)
}

func (l *Lock) lock(in context.Context, wait, lease time.Duration) (context.Context, error) {
	if l == nil || len(l.lockers) == 0 {
		return in, l.errorf(fmt.Errorf("%w: a nil or zero Lock, not made by New", distsync.ErrInvalidArgument))
	}
	// One owner on every master, so the returned context re-enters them all.
	ctx, _ := core.WithOwner(in)
	vlease := lease
	if vlease == 0 {
		vlease = l.opt.watchdogLease
	}
	timeout := l.opt.masterTimeout
	if timeout == 0 {
		timeout = max(vlease/100, MinMasterTimeout)
	}
	drift := time.Duration(float64(vlease)*l.opt.driftFactor) + l.opt.driftConstant
	began := time.Now()
	var w *waited // the last wait, until adopted or dropped after its round
	defer func() {
		if w != nil {
			l.drop(w, timeout)
		}
	}()
	if wait != 0 && ctx.Err() == nil {
		if lead, ok := l.contended(core.Mono(began)); ok {
			// Contended lately: a Lock that may wait queues at once on
			// the leader its name's last refused round found, which saves
			// the round a waiter would mostly see refused. Uncontended,
			// the round comes first: it waits for every master's answer
			// up to the per-master timeout.
			w = l.follow(ctx, lead, wait, lease, timeout)
		}
	}
	for rounds := 1; ; rounds++ {
		// The first round is made even on a context that is done: its
		// members then answer at once, with no I/O, and tell whether their
		// Clients were closed, which is reported before the context's end.
		if err := ctx.Err(); err != nil && rounds > 1 {
			return in, err
		}
		if w != nil {
			if g, ok := l.adoptable(ctx, w); ok {
				g.Rounds = rounds
				h := l.hold(ctx, roundResult{members: w.members, cancels: w.cancels}, timeout, lease, g)
				w = nil
				return h, nil
			}
		}
		start := time.Now()
		r := l.round(ctx, lease, timeout)
		if w != nil {
			l.drop(w, timeout)
			w = nil
		}
		elapsed := time.Since(start)
		acquired := 0
		for _, m := range r.members {
			if m != nil {
				acquired++
			}
		}
		g := Grant{
			Masters: len(l.lockers), Acquired: acquired, Quorum: l.quorum, Rounds: rounds,
			Elapsed: elapsed, Validity: vlease - elapsed - drift, Deadline: start.Add(vlease - drift),
		}
		validity := g.Validity
		if acquired >= l.quorum {
			validity = l.membersEnd(ctx, r.members, &g)
		}
		if acquired >= l.quorum && validity > 0 && ctx.Err() == nil {
			return l.hold(ctx, r, timeout, lease, g), nil
		}
		lead := leader(r)
		l.refuse(core.Mono(time.Now()), lead)
		// Refused: release on every master that granted. A master that
		// failed or answered late gives back what it may have granted on
		// its own (an acquisition cut short is undone by the member).
		l.releaseAll(r.members, len(r.members), timeout)
		for _, c := range r.cancels {
			if c != nil {
				c()
			}
		}
		if err := l.closed(r.errs); err != nil {
			return in, l.errorf(err)
		}
		if err := ctx.Err(); err != nil {
			return in, err
		}
		why := fmt.Sprintf("%d of %d masters granted, %d needed", acquired, len(l.lockers), l.quorum)
		if acquired >= l.quorum {
			why = fmt.Sprintf("%d of %d masters granted but the validity %v is not positive (lease %v, round %v, drift %v)",
				acquired, len(l.lockers), validity, vlease, elapsed, drift)
		}
		if err := firstError(r.errs); err != nil {
			why += "; " + err.Error()
		}
		left := distsync.Forever
		if wait >= 0 {
			if left = wait - time.Since(began); left <= 0 {
				return in, l.errorf(fmt.Errorf("%w: %s (%d rounds in %v)", distsync.ErrNotAcquired, why, rounds, time.Since(began).Round(time.Millisecond)))
			}
		}
		if r.members[lead] != nil {
			// Granted the leader but no quorum: split with contenders that
			// follow another leader (they see other masters reachable), or
			// too slow. Back off at random before queueing again, so that
			// the split is not repeated. A round refused by the leader
			// queues on it at once: its holder or its queue's head is
			// granted the other masters next.
			delay := l.opt.retryMin
			if d := l.opt.retryMax - l.opt.retryMin; d > 0 {
				delay += rand.N(d + 1)
			}
			if left >= 0 {
				delay = min(delay, left)
				left -= delay
			}
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return in, ctx.Err()
			}
			if left == 0 {
				continue // the last round, at the end of the budget
			}
		}
		w = l.follow(ctx, lead, left, lease, timeout)
	}
}

// patience bounds how long a wait granted a quorum waits for the other
// members' answers: a release frees every master within about a round trip,
// so a longer silence means that a master is slow or held by another.
const patience = 20 * time.Millisecond

// waited is what one wait (follow) was granted: each member's context, nil
// where not granted, the cancellation of the context each member waited on
// (nil once cancelled), and what each grant promised.
type waited struct {
	members []context.Context
	cancels []context.CancelFunc
	infos   []*core.GrantInfo
}

// leaderSlice bounds each wait on the leader (follow): at its end a round
// asks every master again, so a leader that went down is noticed and the
// next reachable master leads. The waiters of a lock held that long end
// their slices in the order they queued, and queue again in that order.
const leaderSlice = 2 * time.Second

// leader returns the member whose queue orders the waiters: the first
// that answered the round r, granted or refused (0 when none did).
func leader(r roundResult) int {
	for i, err := range r.errs {
		if err == nil || errors.Is(err, distsync.ErrNotAcquired) {
			return i
		}
	}
	return 0
}

// follow waits in one order, the leader member's: as a registered waiter of
// the leader alone (Locker.TryLock with the budget wait, at most
// leaderSlice, woken by its master's notifications and queued in its order:
// a mutex hands its lock to its oldest waiter), on behalf of the owner ctx
// carries. Once the leader granted, it asks every other member at once with
// a wait of one per-master timeout: every contender queues on the leader, so
// the others are free, or about to be released by the previous holder, and
// the masters' votes do not split. It returns when every member answered, or
// min(timeout, patience) after a quorum granted, or when so many failed
// that no quorum can come, or ctx ended; a leader that refuses or fails
// ends it at once (the round that follows tells why). The members it was granted stay held: the lock adopts them
// (adoptable) or drops them after the next round, which re-enters them. A
// member that grants after follow returned is released by the goroutine
// that asked it.
func (l *Lock) follow(ctx context.Context, lead int, wait, lease, timeout time.Duration) *waited {
	n := len(l.lockers)
	w := &waited{members: make([]context.Context, n), cancels: make([]context.CancelFunc, n), infos: make([]*core.GrantInfo, n)}
	ask := func(i int) context.Context {
		c, cancel := context.WithCancel(ctx)
		w.cancels[i], w.infos[i] = cancel, &core.GrantInfo{}
		return core.WithGrantInfo(c, w.infos[i])
	}
	slice := leaderSlice
	if wait >= 0 {
		slice = min(wait, slice)
	}
	m, err := l.lockers[lead].TryLock(ask(lead), slice, lease)
	if err != nil {
		w.cancels[lead]()
		w.cancels[lead] = nil
		return w // the round that follows tells why
	}
	w.members[lead] = m
	ctxs := make([]context.Context, n)
	for i := range ctxs {
		if i != lead {
			ctxs[i] = ask(i)
		}
	}
	q := l.ask(ctxs, w.cancels, timeout, lease)
	got, failed := 1, 0
	take := func(a answer) {
		if a.err != nil {
			failed++
			w.cancels[a.i]()
			w.cancels[a.i] = nil
			return
		}
		w.members[a.i] = a.ctx
		got++
	}
	var quiet <-chan time.Time // runs from the quorum's grant
wait:
	for got+failed < n && failed <= n-l.quorum {
		select {
		case a := <-q.answers:
			take(a)
			if got >= l.quorum && quiet == nil {
				t := time.NewTimer(min(timeout, patience))
				defer t.Stop()
				quiet = t.C
			}
		case <-quiet:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	q.close(take)
	return w
}

// question is one question to every master at once (ask): each member's
// TryLock runs in a goroutine of its own, and its answer comes on answers
// until close; a member that grants after close gives the grant back itself.
type question struct {
	mu      sync.Mutex
	closed  bool
	answers chan answer // sent to under mu, never blocks
}

// ask asks each member i, on ctxs[i], for the lock with wait and lease; once
// the question is closed, an answer's goroutine releases a grant and calls
// cancels[i].
func (l *Lock) ask(ctxs []context.Context, cancels []context.CancelFunc, wait, lease time.Duration) *question {
	q := &question{answers: make(chan answer, len(l.lockers))}
	for i, lk := range l.lockers {
		if ctxs[i] == nil {
			continue // not asked
		}
		cancel := cancels[i] // the caller may clear cancels[i] once it called it
		l.pending.Add(1)
		spawn(func() {
			defer l.pending.Done()
			mctx, err := lk.TryLock(ctxs[i], wait, lease)
			if err != nil {
				mctx = nil // a failed TryLock returns the context it was given
			}
			q.mu.Lock()
			if !q.closed {
				q.answers <- answer{i, mctx, err}
				q.mu.Unlock()
				return
			}
			q.mu.Unlock()
			// Too late: decided without this master.
			if err == nil {
				lk.Unlock(mctx)
			}
			cancel()
		})
	}
	return q
}

// close hands the answers already in to take; later ones are given back.
func (q *question) close(take func(answer)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for len(q.answers) > 0 {
		take(<-q.answers)
	}
}

// adoptable reports whether the members w was granted make a hold without
// another round: a quorum granted, each told what its grant promised (when
// its lease started at the latest, and for how long), and the validity of
// the quorum whose promises end last is still positive, with each member's
// lease less its drift, and no later than a quorum of the members' contexts
// end (membersEnd). The Grant's Elapsed is then the time since the earliest
// of those grants' requests was sent.
func (l *Lock) adoptable(ctx context.Context, w *waited) (Grant, bool) {
	var ends []time.Time
	earliest := time.Time{}
	for i, m := range w.members {
		if m == nil {
			continue
		}
		gi := w.infos[i]
		if gi.SentAt.IsZero() || gi.Lease <= 0 {
			return Grant{}, false // a member that does not tell its grant
		}
		drift := time.Duration(float64(gi.Lease)*l.opt.driftFactor) + l.opt.driftConstant
		ends = append(ends, gi.SentAt.Add(gi.Lease-drift))
		if earliest.IsZero() || gi.SentAt.Before(earliest) {
			earliest = gi.SentAt
		}
	}
	if len(ends) < l.quorum {
		return Grant{}, false
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return b.Compare(a) })
	end := ends[l.quorum-1]
	now := time.Now()
	g := Grant{
		Masters: len(l.lockers), Acquired: len(ends), Quorum: l.quorum,
		Elapsed: now.Sub(earliest), Validity: end.Sub(now), Deadline: end,
	}
	if l.membersEnd(ctx, w.members, &g) <= 0 {
		return Grant{}, false
	}
	return g, true
}

// membersEnd moves g's Deadline, and its Validity with it, to when fewer
// than a quorum of members (derived from ctx) are left by their contexts'
// own deadlines, when that comes first, and returns the Validity. A member
// of an explicit lease ends by its Client's clock a safety margin before
// the end the Redlock formula gives it (distsync's holds end at the
// watchdog's Trust), and the hold's context ends once fewer than a quorum
// are left: Grant reports that end. A member's deadline that is only ctx's
// is not its own.
func (l *Lock) membersEnd(ctx context.Context, members []context.Context, g *Grant) time.Duration {
	e, ok := compose.End(members, l.quorum)
	if pd, pok := ctx.Deadline(); ok && e.Before(g.Deadline) && (!pok || e.Before(pd)) {
		g.Validity -= g.Deadline.Sub(e)
		g.Deadline = e
	}
	return g.Validity
}

// drop ends the waits of w still under way and releases, in the
// background, what it was granted.
func (l *Lock) drop(w *waited, timeout time.Duration) {
	for i, c := range w.cancels {
		if c != nil && w.members[i] == nil {
			c()
			w.cancels[i] = nil
		}
	}
	l.pending.Add(1)
	spawn(func() {
		defer l.pending.Done()
		l.releaseAll(w.members, len(w.members), timeout)
		for _, c := range w.cancels {
			if c != nil {
				c()
			}
		}
	})
}

// roundResult is what one round got from each master.
type roundResult struct {
	members []context.Context    // granted in time, else nil
	errs    []error              // refusals and failures, errNoAnswer when late
	cancels []context.CancelFunc // of the contexts members derive from, nil where no member
}

// errNoAnswer marks a master that did not answer within its round.
var errNoAnswer = errors.New("no answer within the per-master timeout")

type answer struct {
	i   int
	ctx context.Context
	err error
}

// round asks every master once, in parallel, and returns what answered within
// timeout. A master that answers later has a grant released by the goroutine
// that asked it; the context it was asked with is cancelled at the timeout.
func (l *Lock) round(ctx context.Context, lease, timeout time.Duration) roundResult {
	n := len(l.lockers)
	r := roundResult{members: make([]context.Context, n), errs: make([]error, n), cancels: make([]context.CancelFunc, n)}
	ctxs := make([]context.Context, n)
	for i := range ctxs {
		ctxs[i], r.cancels[i] = context.WithCancel(ctx)
	}
	q := l.ask(ctxs, r.cancels, 0, lease)
	got := make([]bool, n)
	take := func(a answer) {
		got[a.i] = true
		r.members[a.i], r.errs[a.i] = a.ctx, a.err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
collect:
	for k := 0; k < n; k++ {
		select {
		case a := <-q.answers:
			take(a)
		case <-timer.C:
			break collect
		}
	}
	q.close(take)
	for i := range got {
		if !got[i] {
			r.errs[i] = errNoAnswer
		}
		if r.members[i] == nil {
			r.cancels[i]()
			r.cancels[i] = nil
		}
	}
	return r
}

// hold makes the context of a granted round.
func (l *Lock) hold(ctx context.Context, r roundResult, timeout, lease time.Duration, g Grant) context.Context {
	h := &hold{cancels: r.cancels, timeout: timeout, grant: g}
	cctx := ctx
	if lease > 0 {
		cctx, h.expire = context.WithDeadlineCause(ctx, g.Deadline, distsync.ErrLeaseExpired)
	}
	return h.Start(cctx, fmt.Sprintf("redlock %q", l.key), r.members, l.quorum, holdKey{l}, h)
}

// Unlock releases the hold ctx carries (a context TryLock returned; its
// cancellation does not matter) on every master at once, having ended its
// context with cause ErrReleased first. It returns nil when at least Quorum masters
// confirmed the release, an error joining the masters' errors otherwise
// (wrapping ErrNotHeld when the lock had been lost), and ErrNotHeld when ctx
// carries no hold of l or it was released already. It waits at most one
// per-master timeout after Quorum confirmations; later ones go on behind.
func (l *Lock) Unlock(ctx context.Context) error {
	h := l.lookup(ctx)
	if h == nil || !h.Release() {
		return l.errorf(distsync.ErrNotHeld)
	}
	released, errs := l.releaseAll(h.Members(), l.quorum, h.timeout)
	for _, c := range h.cancels {
		if c != nil {
			c()
		}
	}
	if h.expire != nil {
		h.expire()
	}
	if released >= l.quorum {
		return nil
	}
	return l.errorf(fmt.Errorf("released on %d of %d masters, %d needed: %w", released, len(l.lockers), l.quorum, errors.Join(errs...)))
}

// Grant returns how the hold ctx carries was granted, or ErrNotHeld.
func (l *Lock) Grant(ctx context.Context) (Grant, error) {
	h := l.lookup(ctx)
	if h == nil {
		return Grant{}, l.errorf(distsync.ErrNotHeld)
	}
	return h.grant, nil
}

// Members returns the contexts of the hold ctx carries, one per master in the
// order given to New, nil where the master did not grant, for what a member
// offers on its own (such as a mutex's fencing token). It returns nil when ctx
// carries no hold of l. Release through Unlock, not through the members.
func (l *Lock) Members(ctx context.Context) []context.Context {
	if h := l.lookup(ctx); h != nil {
		return h.Members()
	}
	return nil
}

func (l *Lock) lookup(ctx context.Context) *hold {
	h, _ := ctx.Value(holdKey{l}).(*hold)
	return h
}

// releaseAll releases the members (non-nil) in parallel, through their own
// contexts. It waits for them to answer, but no longer than timeout once need
// of them confirmed; it returns how many confirmed and their errors.
func (l *Lock) releaseAll(members []context.Context, need int, timeout time.Duration) (int, []error) {
	results := make(chan error, len(l.lockers))
	held := 0
	for i, m := range members {
		if m == nil {
			continue
		}
		held++
		l.pending.Add(1)
		spawn(func() {
			defer l.pending.Done()
			results <- l.lockers[i].Unlock(m)
		})
	}
	confirmed, failed := 0, []error(nil)
	var grace <-chan time.Time // runs once need confirmed
	for k := 0; k < held; k++ {
		select {
		case err := <-results:
			if err != nil {
				failed = append(failed, err)
				continue
			}
			if confirmed++; confirmed == need {
				t := time.NewTimer(timeout)
				defer t.Stop()
				grace = t.C
			}
		case <-grace:
			return confirmed, failed
		}
	}
	return confirmed, failed
}

// closed returns ErrClosed when so many of the masters' Clients are closed
// that no round can succeed.
func (l *Lock) closed(errs []error) error {
	n := 0
	for _, err := range errs {
		if errors.Is(err, distsync.ErrClosed) {
			n++
		}
	}
	if n > len(l.lockers)-l.quorum {
		return fmt.Errorf("%w: %d of %d masters' Clients", distsync.ErrClosed, n, len(l.lockers))
	}
	return nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, distsync.ErrNotAcquired) {
			return err
		}
	}
	return nil
}

func (l *Lock) errorf(err error) error {
	return fmt.Errorf("redlock %q: %w", core.OrZero(l).key, err)
}
