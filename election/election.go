// Package election elects one leader per name on Redis, with the calls of
// etcd's concurrency.Election in distsync's idiom: Campaign, Proclaim,
// Resign, Leader and Observe.
//
// Each Campaign is a candidate of its own; candidates are served in arrival
// order across processes, and a resign wakes the next at once. Leadership is
// a hold renewed by the Client's watchdog, with the Client's lease or the
// election's own (WithLease); an optional liveness check (WithLiveness), run
// at each renewal, makes a leader that cannot work resign. The context
// Campaign returns ends when leadership does: Resign (cause ErrReleased), a lost lease
// (ErrLeaseLost, before a successor can be elected), a deposition by
// ForceResign (ErrLeaseLost, heard by push), Client.Close (ErrClosed) and
// the end of the context Campaign was called with (distsync then resigns).
// A transient failure does not end a campaign and never elects twice. The
// term is a fencing token: it strictly increases with each new leader of a
// name, across processes, so a deposed leader's writes can be refused
// downstream. Observe pushes every change, the newest to a slow
// reader. Errors wrap package distsync's (ErrNoLeader, ErrNotHeld, ...):
// test them with errors.Is.
//
// How it works: docs/how-it-works.md#the-fair-lock-and-the-election.
package election

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

var (
	//go:embed queue.lua
	queueLua string
	//go:embed campaign.lua
	campaignLua string
	//go:embed resign.lua
	resignLua string
	//go:embed leave.lua
	leaveLua string
	//go:embed renew.lua
	renewLua string
	//go:embed proclaim.lua
	proclaimLua string
	//go:embed force.lua
	forceLua string
	//go:embed state.lua
	stateLua string

	campaignScript = core.NewScript(core.QueueLib + queueLua + campaignLua)
	resignScript   = core.NewScript(core.QueueLib + queueLua + resignLua)
	leaveScript    = core.NewScript(core.QueueLib + queueLua + leaveLua)
	renewScript    = core.NewScript(renewLua)
	proclaimScript = core.NewScript(proclaimLua)
	forceScript    = core.NewScript(core.QueueLib + queueLua + forceLua)
	stateScript    = core.NewScript(stateLua)
)

// MaxValue bounds the value a leader announces, in bytes (as etcd bounds
// a request at 1.5 MiB): Campaign and Proclaim refuse a longer one with
// ErrInvalidArgument.
const MaxValue = 1 << 20

// Election is a handle on one named election. It is cheap, holds no
// connection and is safe for concurrent use; all state lives in Redis and in
// the contexts Campaign returns.
type Election struct {
	c     *core.Core
	cfg   config
	name  string
	key   string // the leader's hash
	cands string // candidate ids, head first
	wins  string // candidate id -> end of its wait window
	fence string // the term counter: the fencing counter of the name's slot
	last  string // the last leader's term, kept lastTermMs after its lease (campaign.lua)
	vals  string // queued candidates' values, for a grant (queue.lua)
	done  string // the finished campaigns
	wake  string // wake-ups, addressed to the head candidate
	obs   string // changes, for observers and leaders
}

// State is an election's state at one instant of the server's clock.
type State struct {
	// Leader reports whether someone leads.
	Leader bool
	// Value is what the leader announced (Campaign, Proclaim); "" when
	// nobody leads.
	Value string
	// Term is the leader's term, its fencing token. When nobody leads,
	// Observe gives the term of the leader that ended last (the
	// election's last term, whether or not this observer was given that
	// leader, for a minute after that leadership ended; later, the last
	// term this observer was given, or 0), so that states come in term
	// order; Leader gives 0.
	Term int64
	// Since is when the leader was elected, by the server's clock; zero
	// when nobody leads.
	Since time.Time
}

// Option sets up an election handle (distsync.Client.Election).
type Option func(*Election) error

// config is what the Options set.
type config struct {
	lease time.Duration               // the leadership lease; 0: the Client's
	live  func(context.Context) error // the liveness check; nil: none
}

// WithLease gives the election's leaderships a lease of their own instead
// of the Client's watchdog lease (Options.Watchdog.Lease, 30 s by default): a leader
// whose process dies is succeeded within lease, and the watchdog renews a
// live leader's every lease/3 (its safety margin is at most lease/4). It is
// at least distsync.MinLease, or Client.Election returns
// ErrInvalidArgument. etcd sets it per Session (its TTL), client-go per
// elector (LeaseDuration).
func WithLease(lease time.Duration) Option {
	return func(e *Election) error {
		if lease < core.MinLease {
			return fmt.Errorf("%w: lease %v, want at least %v", core.ErrInvalidArgument, lease, core.MinLease)
		}
		e.cfg.lease = lease
		return nil
	}
}

// WithLiveness has each leader check that it can still do its work, as
// client-go's leaderelection health check does: check is called at each
// renewal of the leadership (every lease/3), on a goroutine of the
// leadership's own, with the leadership context bounded by a third of the
// lease. When it returns an error, or has not returned by then, the leader
// resigns (the next candidate leads at once) and its leadership context
// ends with a cause that wraps the check's error and ErrReleased. A leader
// whose work loop is stuck then hands over instead of leading for as long
// as its process lives. check should be fast and honour its context.
func WithLiveness(check func(ctx context.Context) error) Option {
	return func(e *Election) error {
		if check == nil {
			return fmt.Errorf("%w: a nil liveness check", core.ErrInvalidArgument)
		}
		e.cfg.live = check
		return nil
	}
}

func init() {
	core.Register(observe.KindElection, newElection)
}

// newElection returns the election called name on c (Client.Election,
// which then applies its Options).
func newElection(c *core.Core, name string) (*Election, error) {
	if err := core.ValidateName(name); err != nil {
		return nil, err
	}
	key := c.Key(name, "")
	k := core.SubKeys(key, "cands", "wins", "done", "wake", "obs", "last", "vals")
	return &Election{c: c, name: name, key: key, cands: k[0], wins: k[1], fence: c.FenceKey(name), done: k[2], wake: k[3], obs: k[4], last: k[5], vals: k[6]}, nil
}

// lease is the leadership lease.
func (e *Election) lease() time.Duration { return cmp.Or(e.cfg.lease, e.c.Lease) }

// Name returns the election's name.
func (e *Election) Name() string { return core.OrZero(e).name }

// Key returns the Redis key of the leader; keys of one election share its
// hash tag.
func (e *Election) Key() string { return core.OrZero(e).key }

// Campaign blocks until this candidate leads or ctx ends, when it returns
// ctx.Err() and leaves no candidate behind. It returns the leadership
// context, which ends with the leadership (see the package doc), and the
// term: lead only while the context is live, and fence writes with the term.
// The leader announces value (Leader, Observe) until Proclaim changes it; on
// a context that already leads, Campaign proclaims value and returns that
// leadership. Transient failures do not end the campaign. Uncontended, one
// round trip (and a SUBSCRIBE to the election's changes, once per Client).
func (e *Election) Campaign(ctx context.Context, value string) (context.Context, int64, error) {
	e = core.OrZero(e)
	if err := e.c.Closed(); err != nil {
		return ctx, 0, e.errorf(err)
	}
	if err := checkValue(value); err != nil {
		return ctx, 0, e.errorf(err)
	}
	if a := e.c.Holds.Lookup(ctx, e.key); a != nil && a.Held() {
		if err := e.Proclaim(ctx, value); err != nil {
			return ctx, 0, err
		}
		return ctx, a.Token, nil
	}
	// Listen to changes before the grant, so that a deposition after it is
	// heard. Without the subscription (it failed) the watcher makes its own;
	// with waiters that spin (pub/sub may be unavailable) there is none, and
	// a deposition is learned at the next renewal.
	var sub core.Subscription
	spin := e.spin(ctx)
	if spin.Max <= 0 {
		sub, _ = e.c.Notifier.Subscribe(ctx, e.obs, "")
	}
	cand := &candidate{e: e}
	if e.cfg.live != nil {
		cand.renewed = make(chan struct{}, 1)
	}
	lctx, err := e.describe(cand, value).Acquire(core.NewOwner(ctx), core.Forever, 0)
	if err != nil { // wrapped by Errorf
		if sub != nil {
			sub.Close()
		}
		return ctx, 0, err
	}
	owner, _ := e.c.OwnerOf(lctx)
	term, err := e.c.Token(lctx, e.key)
	if err != nil { // lost already
		if sub != nil {
			sub.Close()
		}
		return ctx, 0, e.errorf(err)
	}
	if spin.Max <= 0 {
		e.watch(lctx, owner, term, sub)
	}
	if cand.renewed != nil {
		e.c.Go(func(jctx context.Context) { e.live(jctx, lctx, cand.renewed) })
	}
	return lctx, term, nil
}

// live runs the liveness check at each renewal of the leadership lctx
// (renewed, see candidate.Renewal) and resigns it when the check fails.
func (e *Election) live(jctx, lctx context.Context, renewed <-chan struct{}) {
	bound := e.lease() / 3
	for {
		select {
		case <-renewed:
		case <-lctx.Done():
			return
		case <-jctx.Done():
			return
		}
		cctx, cancel := context.WithTimeout(lctx, bound)
		done := make(chan error, 1)
		go func() { done <- e.cfg.live(cctx) }()
		var err error
		select {
		case err = <-done:
		case <-cctx.Done():
			err = fmt.Errorf("it did not answer in %v", bound)
		}
		cancel()
		if err == nil || lctx.Err() != nil {
			continue
		}
		a := e.c.Holds.Lookup(lctx, e.key)
		if a == nil {
			return
		}
		rctx, rcancel := core.IOContext(lctx, core.ReleaseTimeout)
		if err := a.UnlockWith(rctx, fmt.Errorf("%w: the liveness check failed: %w", core.ErrReleased, err)); err != nil && !errors.Is(err, core.ErrNotHeld) {
			e.c.Log.Warn("distsync: resigning after a failed liveness check failed", "election", e.name, "err", err)
		}
		rcancel()
		return
	}
}

// spin is the back-off of the waits made with ctx: the call's own
// (distsync.WithSpin), else the Client's; Max 0 when they subscribe. An
// invalid one is the Client's here (Campaign's wait returns its error).
func (e *Election) spin(ctx context.Context) core.Spin {
	if s, ok := core.SpinOf(ctx); ok && s.Err == nil {
		return s
	}
	return e.c.Spin
}

// watch ends the leadership lctx of owner, in term, as soon as a change
// published on the election shows that it no longer leads (it was deposed,
// its key deleted by ForceResign), rather than at the next renewal.
func (e *Election) watch(lctx context.Context, owner string, term int64, sub core.Subscription) {
	check := func() {
		// Not on lctx: a read cut by the end of the leadership could fail
		// other requests waiting for the same new connection.
		rctx, cancel := core.IOContext(lctx, core.ReleaseTimeout)
		defer cancel()
		now, err := e.term(rctx)
		if err != nil || now == term {
			return
		}
		what := "nobody leads now"
		if now > 0 {
			what = fmt.Sprintf("term %d leads now", now)
		}
		e.c.Holds.End(e.key, owner, fmt.Errorf("%w: deposed: the leadership of term %d ended (%s)", core.ErrLeaseLost, term, what))
	}
	e.c.Go(func(jctx context.Context) { e.track(jctx, lctx, check) })
	ran := e.c.Go(func(jctx context.Context) {
		defer func() {
			if sub != nil {
				sub.Close()
			}
		}()
		if sub == nil {
			var err error
			if sub, err = e.c.Notifier.Subscribe(lctx, e.obs, ""); err != nil {
				return // the watchdog still learns of a loss
			}
			check()
		}
		for {
			select {
			case <-sub.C():
				sub.Take()
				check()
			case <-lctx.Done():
				return
			case <-sub.Done():
				return
			case <-jctx.Done():
				return
			}
		}
	})
	if !ran && sub != nil {
		// Go ran nothing: the Client is closing, which ends lctx.
		sub.Close()
	}
}

// track has the server tell this leader, by push, of every change to the
// election's key (client-side caching's invalidation messages, on a RESP3
// connection of its own), and checks the state at each: a key deleted by
// hand, which publishes nothing, then ends the leadership at once instead of
// at the next renewal. Each renewal is such a change too (one state read and
// one EXISTS more per renewal). Where the server refuses tracking (RESP2, an
// ACL without CLIENT TRACKING) it does nothing: the watchdog's renewal
// learns of the loss.
func (e *Election) track(jctx, lctx context.Context, check func()) {
	d, _ := e.c.Client.Dedicate()
	defer d.Close() // never back to the pool: tracking stays on a connection
	changed := make(chan struct{}, 1)
	closed := d.SetOnInvalidations(func([]rueidis.RedisMessage) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	// Reading the key (EXISTS) makes the server track it for this
	// connection, until its next change.
	arm := func(on bool) error {
		rctx, cancel := core.IOContext(lctx, core.ReleaseTimeout)
		defer cancel()
		cmds := rueidis.Commands{d.B().Exists().Key(e.key).Build()}
		if on {
			cmds = append(rueidis.Commands{d.B().ClientTracking().On().Build()}, cmds...)
		}
		for _, r := range d.DoMulti(rctx, cmds...) {
			if err := r.Error(); err != nil {
				return err
			}
		}
		return nil
	}
	if err := arm(true); err != nil {
		return
	}
	check() // a change before the key was tracked
	for {
		select {
		case <-changed:
			// Track the key again before reading the state: a change
			// after the read is then told too, and one before it is read.
			// (Read first, a deletion between the read and the EXISTS
			// would go untold until the next renewal.)
			err := arm(false)
			check()
			if err != nil {
				return
			}
		case <-closed:
			return
		case <-lctx.Done():
			return
		case <-jctx.Done():
			return
		}
	}
}

// Proclaim changes the value the leader announces, in the same term, and
// tells the observers. ctx must be the leadership context Campaign
// returned; Proclaim returns ErrNotHeld when it does not lead (any more).
// One round trip.
func (e *Election) Proclaim(ctx context.Context, value string) error {
	e = core.OrZero(e)
	if err := e.c.Closed(); err != nil {
		return e.errorf(err)
	}
	if err := checkValue(value); err != nil {
		return e.errorf(err)
	}
	a := e.c.Holds.Lookup(ctx, e.key)
	if a == nil || !a.Held() {
		return e.errorf(core.ErrNotHeld)
	}
	owner, _ := e.c.OwnerOf(ctx)
	r, err := e.c.Eval(ctx, proclaimScript, []string{e.key},
		[]string{owner, a.ID, value, e.obs, e.c.PublishCmd()}).AsInt64()
	if err != nil {
		return e.errorf(err)
	}
	if r == 0 {
		e.c.Holds.End(e.key, owner, core.ErrLeaseLost)
		return e.errorf(core.ErrNotHeld)
	}
	return nil
}

// Resign gives up the leadership ctx (the context Campaign returned)
// carries: the head candidate is woken at once and leads, and observers are
// told. Its contract is the fair lock's Unlock: the leadership context ends
// before the resignation is sent; nil if and only if the resignation was
// applied (by this call or an earlier one whose reply was lost); ErrNotHeld
// when it no longer led. One round trip.
func (e *Election) Resign(ctx context.Context) error {
	e = core.OrZero(e)
	if err := e.c.Release(ctx, e.key); err != nil {
		return e.errorf(err)
	}
	return nil
}

// Term returns the term of the leadership ctx (a context Campaign returned)
// carries, with no round trip; ErrNotHeld when it carries none or it ended.
func (e *Election) Term(ctx context.Context) (int64, error) {
	e = core.OrZero(e)
	t, err := e.c.Token(ctx, e.key)
	if err != nil {
		return 0, e.errorf(err)
	}
	return t, nil
}

// Leader returns who leads now; ErrNoLeader (and a zero State) when nobody
// does. One round trip.
func (e *Election) Leader(ctx context.Context) (State, error) {
	e = core.OrZero(e)
	if err := e.c.Closed(); err != nil {
		return State{}, e.errorf(err)
	}
	st, _, err := e.read(ctx)
	if err != nil {
		return State{}, e.errorf(err)
	}
	if !st.Leader {
		return State{}, e.errorf(core.ErrNoLeader)
	}
	return st, nil
}

// term reads the term of the leader, 0 when nobody leads (one round trip):
// what a leader checks at each change of its key, its renewals included,
// without the value.
func (e *Election) term(ctx context.Context) (int64, error) {
	t, err := e.c.Client.Do(ctx, e.c.Client.B().Hget().Key(e.key).Field("#t").Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return 0, nil
	}
	return t, err
}

// checkValue refuses a value longer than MaxValue.
func checkValue(v string) error {
	if len(v) > MaxValue {
		return fmt.Errorf("%w: a value of %d bytes, at most %d", core.ErrInvalidArgument, len(v), MaxValue)
	}
	return nil
}

// read reads the election's state and, while someone leads, the lease
// left; when nobody leads, its Term is the last leader's (0 when there was
// none, or the term counter was forgotten). One round trip.
func (e *Election) read(ctx context.Context) (State, time.Duration, error) {
	r, err := e.c.Eval(ctx, stateScript, []string{e.key, e.last}, nil).AsStrSlice()
	if err != nil {
		return State{}, 0, err
	}
	if len(r) == 2 && r[0] == "0" {
		last, _ := strconv.ParseInt(r[1], 10, 64)
		return State{Term: last}, 0, nil
	}
	if len(r) < 5 || r[0] != "1" {
		return State{}, 0, fmt.Errorf("unexpected reply %q", r)
	}
	term, _ := strconv.ParseInt(r[1], 10, 64)
	since, _ := strconv.ParseInt(r[3], 10, 64)
	ttl, _ := strconv.ParseInt(r[4], 10, 64)
	return State{Leader: true, Value: r[2], Term: term, Since: time.UnixMilli(since)}, time.Duration(ttl) * time.Millisecond, nil
}

// Observe returns a channel of the election's states: the state when Observe
// is called, then each change (a new leader, a new value, nobody leads) as it
// is published, in term order. A reader slower than the changes is given the
// newest state, not the ones it missed, never an older one after a newer.
// A "nobody leads" state carries the term of the leader that ended last,
// read from the server with it (State.Term), not the last this reader was
// given: a reader that missed a leadership still learns its term.
// A leader whose lease ran out without a word (its process died) is noticed
// when the lease ends. The channel is closed when ctx ends or the Client is
// closed. Each Observe reads the state once per change (one round trip), on
// one subscription per Client and election; where waiters spin (Options.Spin,
// or WithSpin on ctx: no pub/sub), it reads it every Spin.Max instead.
func (e *Election) Observe(ctx context.Context) <-chan State {
	e = core.OrZero(e)
	out := make(chan State)
	if e.c.Closed() != nil || !e.c.Go(func(jctx context.Context) {
		defer close(out)
		e.observe(ctx, jctx, out)
	}) {
		close(out)
	}
	return out
}

func (e *Election) observe(ctx, jctx context.Context, out chan<- State) {
	var (
		sub     core.Subscription
		backoff core.Backoff
		last    State
		pending *State
		known   bool
	)
	defer func() {
		if sub != nil {
			sub.Close()
		}
	}()
	timer := time.NewTimer(0) // the first read
	defer timer.Stop()
	var notified, closed <-chan struct{}
	spin := e.spin(ctx) // Max > 0: no pub/sub, read every Max
	for {
		var send chan<- State
		var next State
		if pending != nil {
			send, next = out, *pending
		}
		select {
		case send <- next:
			pending = nil
			continue
		case <-notified:
			sub.Take()
		case <-timer.C:
		case <-closed:
			return
		case <-ctx.Done():
			return
		case <-jctx.Done():
			return
		}
		if sub == nil && spin.Max <= 0 {
			s, err := e.c.Notifier.Subscribe(ctx, e.obs, "")
			if err != nil {
				if ctx.Err() != nil || !core.Transient(err) {
					return
				}
				timer.Reset(backoff.Next())
				continue
			}
			sub, notified, closed = s, s.C(), s.Done()
		}
		rctx, rcancel := core.IOContext(ctx, core.ReleaseTimeout) // see watch
		st, ttl, err := e.read(rctx)
		rcancel()
		switch {
		case err != nil && (ctx.Err() != nil || e.c.Closed() != nil):
			return
		case err != nil:
			if !core.Transient(err) {
				e.c.Log.Warn("distsync: election observer stopped", "election", e.name, "err", err)
				return
			}
			timer.Reset(backoff.Next())
			continue
		}
		backoff.Reset()
		if !st.Leader && st.Term < last.Term {
			// The last term was forgotten (a minute after that leadership
			// ended): nobody leads since the last leader this observer read.
			st.Term = last.Term
		}
		// An older state (a replica promoted without the newest writes) is
		// never given after a newer one.
		if stale := known && st.Leader && st.Term < last.Term; !stale && (!known || st != last) {
			known, last = true, st
			pending = &st
		}
		switch {
		case spin.Max > 0 && st.Leader && ttl > 0:
			timer.Reset(min(spin.Max, ttl+time.Millisecond))
		case spin.Max > 0:
			timer.Reset(spin.Max)
		case st.Leader && ttl > 0:
			// A lease that runs out publishes nothing: look again then.
			timer.Reset(ttl + time.Millisecond)
		}
	}
}

// ForceResign deposes the leader, whoever it is: the head candidate is woken
// and leads, and the deposed leader's context ends by push (with
// ErrLeaseLost), not at its next renewal. It is a take-over: the successor
// may be elected a round trip before the deposed leader hears of it (or,
// if its process does not answer, a lease before), which its larger term
// fences. It reports whether someone led. One round trip.
func (e *Election) ForceResign(ctx context.Context) (bool, error) {
	e = core.OrZero(e)
	if err := e.c.Closed(); err != nil {
		return false, e.errorf(err)
	}
	r, err := e.c.Eval(ctx, forceScript, e.handKeys(),
		[]string{e.wake, e.c.PublishCmd(), e.obs, e.handoff(ctx), e.c.ControlPrefix(), lastTermMs}).AsInt64()
	if err != nil {
		return false, e.errorf(err)
	}
	return r == 1, nil
}

// Candidates returns how many candidates wait, not counting those whose
// window ended (one round trip). Candidates that vanished count until then,
// or until a hand-on passes over them (their process died).
func (e *Election) Candidates(ctx context.Context) (int, error) {
	e = core.OrZero(e)
	n, err := e.c.Waiting(ctx, core.WaiterSet, e.wins, observe.KindElection, e.key)
	if err != nil {
		return 0, e.errorf(err)
	}
	return n, nil
}

// handoff is how long, in ms, a woken head candidate keeps its place before
// the next one, nudged, may take it (core.Config.HandoffLease).
func (e *Election) handoff(context.Context) string {
	return core.Ms(e.c.HandoffLease)
}

func (e *Election) errorf(err error) error {
	return fmt.Errorf("election %q: %w", e.name, err)
}

// handKeys are the keys of the scripts that may grant the leadership to
// the head candidate (resign.lua, force.lua, leave.lua).
func (e *Election) handKeys() []string {
	return []string{e.key, e.cands, e.wins, e.done, e.fence, e.vals, e.last}
}

// lock is what every campaign shares: a resignation grants the leadership
// to the head candidate, whose id carries its campaign (queue.lua), and
// passes over a head whose process died: a candidate that does not spin
// listens besides on a channel of its Client's own (Presence).
var lock = acquire.Lock{Script: campaignScript, Handoff: true, PerAcquisition: true, ModeInWaiter: true, SaysListens: true, Presence: true}

// candidate is one campaign of an election, as acquire.Ops (and its
// Handle's core.Holdable).
type candidate struct {
	e       *Election
	renewed chan struct{} // told of each renewal, for the liveness check; nil without one
}

// describe returns the campaign of cand as an acquire.Handle: the
// candidate will announce value, and holds the leadership lease.
func (e *Election) describe(cand *candidate, value string) *acquire.Handle {
	what := fmt.Sprintf("election %q", e.name)
	return &acquire.Handle{
		Lock: &lock, Core: e.c, Kind: observe.KindElection, Name: e.name, Key: e.key, Channel: e.wake, Ops: cand,
		Also: &acquire.Also{What: what, ErrPrefix: what, Renewed: e.lease(), Extra: []string{value, e.obs, e.c.PublishCmd(), lastTermMs, e.wake, e.handoff(context.Background())}},
	}
}

func (h *candidate) Keys(dst []string, _ string) []string {
	return append(dst, h.e.key, h.e.cands, h.e.wins, h.e.fence, h.e.done, h.e.last, h.e.vals)
}

// lastTermMs is how long an election remembers its last leader's term
// after that leadership ended (its lease, extended with it), for Observe's
// "nobody leads" state (the term counter is shared by every name of a
// slot): a minute, in ms, so that a name nobody leads any more leaves
// nothing behind for long. An observer that reads the state later falls
// back to the last term it read (0 when none).
const lastTermMs = "60000"

func (h *candidate) Release(ctx context.Context, owner, id string, life time.Duration) (int64, error) {
	e := h.e
	return e.c.Eval(ctx, resignScript, e.handKeys(),
		[]string{owner, id, e.wake, e.c.PublishCmd(), core.Ms(life), e.obs, e.handoff(ctx), lastTermMs},
	).AsInt64()
}

func (h *candidate) Leave(ctx context.Context, waiter, _ string) error {
	e := h.e
	return e.c.Eval(ctx, leaveScript, e.handKeys(),
		[]string{waiter, e.wake, e.c.PublishCmd(), e.handoff(ctx), e.obs, core.Ms(core.ReleaseMemory), lastTermMs}).Error()
}

// Renewal is asked for at each renewal: it tells the liveness check.
func (h *candidate) Renewal(owner string) core.Renewal {
	if h.renewed != nil {
		select {
		case h.renewed <- struct{}{}:
		default:
		}
	}
	return core.Renewal{Script: renewScript, Keys: []string{h.e.key, h.e.last}, Args: []string{owner, core.Ms(h.e.lease()), lastTermMs}}
}
