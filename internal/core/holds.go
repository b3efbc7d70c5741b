package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/distsync/distsync/observe"
)

// Holds is a Client's record of what its owners hold: one Hold per (key,
// owner), made of the acquisitions this process was granted. It ties them to
// the watchdog, ends their contexts when a lease is lost, expires or is
// released, and releases an acquisition whose parent context ended.
//
// The model, shared with the scripts (lib.lua): every acquisition has an id
// on the server, recorded in its hold's ledger with its own promise (an
// explicit lease end, or "renewed by the watchdog"). The server lease of a
// hold covers the longest promise of its live acquisitions; the watchdog
// renews a hold while at least one watchdog acquisition of it is live; a
// release removes exactly one acquisition, once, by its id.
type Holds struct {
	core *Core
	mu   sync.Mutex
	// m has the holds by key: one owner's, and those of other owners of
	// the same key after it (Hold.next). Keyed by the key alone, a map
	// slot is 24 bytes rather than 40.
	m      map[string]*Hold
	closed error // set by Abandon: no grant is recorded any more
}

type holdKey struct{ key, owner string }

// Hold is one owner's hold on one key, across its acquisitions. Its lists
// (next, acqs) change under its Holds' mu. It is 96 bytes, one size class
// of the allocator, which a field more would raise to 112.
type Hold struct {
	holds *Holds
	key   holdKey
	next  *Hold    // the next hold of the same key in Holds.m (another owner's)
	lock  Holdable // what it holds, from its first acquisition
	acqs  *Acq     // live acquisitions, in grant order through Acq.next (mostly one)
	watch int      // how many of them the watchdog renews
	entry Entry    // watchdog registration while watch > 0
}

// find returns owner's hold on key, or nil; h.mu is held.
func (h *Holds) find(key, owner string) *Hold {
	for hd := h.m[key]; hd != nil; hd = hd.next {
		if hd.key.owner == owner {
			return hd
		}
	}
	return nil
}

// forget removes hd from h.m, where it may not be; h.mu is held.
func (h *Holds) forget(hd *Hold) {
	k := hd.key.key
	switch first := h.m[k]; {
	case first == hd && hd.next == nil:
		delete(h.m, k)
	case first == hd:
		h.m[k] = hd.next
	default:
		for p := first; p != nil; p = p.next {
			if p.next == hd {
				p.next = hd.next
				break
			}
		}
	}
	hd.next = nil
}

// appendAcqs appends hd's live acquisitions but skip to out; h.mu is held.
func (hd *Hold) appendAcqs(out []*Acq, skip *Acq) []*Acq {
	for a := hd.acqs; a != nil; a = a.next {
		if a != skip {
			out = append(out, a)
		}
	}
	return out
}

// Holdable is what a hold needs of the lock it holds, for as long as it
// lives: the primitive's handle (a permit's own record, for the permit
// semaphore). A hold keeps it rather than copies of its names and keys, and
// the handles of one name are interchangeable here.
type Holdable interface {
	// What names the lock in logs, e.g. `mutex "orders"`.
	What() string
	// Kind names its kind and, for a read-write lock, its side
	// (observe.SideRead, SideWrite; else ""); Name its name.
	Kind() (kind observe.Kind, side string)
	Name() string
	// Release releases acquisition id of owner on the server once,
	// remembering the release for life (see ds_release in lib.lua for its
	// reply).
	Release(ctx context.Context, owner, id string, life time.Duration) (int64, error)
	// Renewal is what the watchdog runs to renew owner's hold.
	Renewal(owner string) Renewal
}

// ReleaseFunc releases acquisition id on the server once, remembering the
// release for life (see ds_release in lib.lua for its reply).
type ReleaseFunc func(ctx context.Context, id string, life time.Duration) (int64, error)

// Replies of a release script (ds_release).
const (
	releasedLast  = 1  // released; the owner holds nothing more
	releasedSome  = 0  // released; the owner still holds
	releasedTwice = 2  // released before, by an attempt whose reply was lost
	releaseNoHold = -1 // not held: its lease ended, or it was never granted
)

// Acq is one acquisition: what one successful Lock returned a context for,
// and that context itself. As a context it is one layer over a cancelable
// context of the parent: its Value lookup carries the acquisition (Lookup)
// and, when Grant folded the parent's owner context into it, the owner, so
// that an acquisition costs no context.WithValue.
type Acq struct {
	context.Context // derived from the parent, cancelled when it ends

	hold *Hold
	next *Acq // the hold's next live acquisition (Hold.acqs)
	// ID identifies the acquisition on the server.
	ID string
	// Token is the fencing token of the hold.
	Token int64

	exp        *expiry       // an explicit lease; nil when the watchdog renews it
	lease      Entry         // the hold's watchdog registration, for a watchdog acquisition
	granted    time.Duration // when Grant recorded it (Mono)
	cancel     context.CancelCauseFunc
	stopParent func() bool

	relMu sync.Mutex // one release or extension at a time, across its round trip

	mu       sync.Mutex
	live     bool  // held: granted, not released, lost, expired or abandoned
	pending  bool  // a release was sent whose outcome is unknown
	released bool  // a release was applied
	untold   bool  // distsync released it on its own: the next Unlock reports it
	unknown  bool  // some request of it had an unknown outcome
	owner    bool  // the context carries the hold's owner (Value)
	cause    error // why it is no longer live
}

// expiry is the end of an explicit lease, by this process's clock. Its
// deadline and timer change under the acquisition's mu.
type expiry struct {
	lease    time.Duration
	deadline time.Time
	timer    *time.Timer // ends the acquisition at deadline
}

// Deadline is when the acquisition's context ends by itself: the end of an
// explicit lease as this process sees it (Drift and the watchdog's safety
// margin before the server's: see Holds.Grant), which
// Extend moves, or the parent's deadline when that comes first. A watchdog
// acquisition has only its parent's.
func (a *Acq) Deadline() (time.Time, bool) {
	pd, ok := a.Context.Deadline()
	if a.exp == nil {
		return pd, ok
	}
	a.mu.Lock()
	d := a.exp.deadline
	a.mu.Unlock()
	if ok && pd.Before(d) {
		return pd, true
	}
	return d, true
}

// Err is the context's Err, and one thing more: once the acquisition's
// lease deadline (the watchdog's, or its explicit lease's) has passed by
// this process's clock, Err ends the acquisition itself before it returns
// (as the timer does, which a busy process may run late), so Err never
// reports the acquisition live past its deadline. Done is closed by that
// timer, or by Err, whichever comes first.
func (a *Acq) Err() error {
	if err := a.Context.Err(); err != nil {
		return err
	}
	if a.exp != nil {
		// Ended here past its deadline; the observer hears of it off the
		// caller's goroutine, as the watchdog's Lapsed reports (a blocked
		// observer must not hold up Err).
		if a.endIf(ErrLeaseExpired, true) && !a.hold.holds.core.Go(func(context.Context) { a.tellEnd(ErrLeaseExpired) }) {
			a.tellEnd(ErrLeaseExpired)
		}
	} else if a.lease == nil || !a.lease.Lapsed() {
		return nil
	}
	return a.Context.Err()
}

// explicit returns a's explicit lease, 0 when the watchdog renews it.
func (a *Acq) explicit() time.Duration {
	if a.exp == nil {
		return 0
	}
	return a.exp.lease
}

type acqKey struct {
	holds *Holds
	key   string
}

// Value returns a for its own key (the acquisition of its hold's key on its
// Holds), the hold's owner id when it carries it, and otherwise what the
// context it derives from carries.
func (a *Acq) Value(key any) any {
	switch k := key.(type) {
	case acqKey:
		if k.holds == a.hold.holds && k.key == a.hold.key.key {
			return a
		}
	case ownerKey:
		if a.owner {
			id, _ := a.hold.holds.core.ownerID(a.hold.key.owner)
			return id
		}
	}
	return a.Context.Value(key)
}

// String names the context, as those of package context do.
func (a *Acq) String() string {
	return fmt.Sprintf("%v.WithValue(distsync acquisition %s)", a.Context, a.ID)
}

// NewHolds returns the registry of core's holds.
func NewHolds(c *Core) *Holds { return &Holds{core: c, m: map[string]*Hold{}} }

// Grant is a granted acquisition, for Holds.Grant.
type Grant struct {
	Key   string // the hold's key in Holds
	Owner string
	// Lock is what is held: kept by the hold, which renews it with
	// Lock.Renewal while a watchdog acquisition of the hold lives and
	// releases with Lock.Release.
	Lock  Holdable
	ID    string
	Token int64
	// SentAt is when the granting request was sent (a repeated attempt
	// renews the lease from its own run): a lower bound for the server's
	// lease start.
	SentAt time.Time
	// Lease is the explicit lease, or 0 for a lease the watchdog renews.
	Lease time.Duration
	// Renewed, with Lease 0, is the lease the watchdog renews the hold to:
	// 0 for the Client's watchdog lease.
	Renewed time.Duration
	// ServerLease, when > 0, is the lease the granting request left on the
	// server when it is shorter than Lease (or the watchdog lease): a lock a
	// release handed to this waiter, until its first renewal extends it.
	ServerLease time.Duration
	// Unknown says that a request of the acquisition had an unknown outcome
	// (it may still arrive): its release is then remembered longer.
	Unknown bool
}

// LateGrant is why Grant refused a grant: its reply came After its request
// was sent, when the Lease it left could have ended. The acquisition may
// try again with a new id within its wait. Handed says the grant was a
// release's hand-off (Grant.ServerLease): its lease was the short hand-off
// lease, not the one the acquisition asked for.
type LateGrant struct {
	After, Lease time.Duration
	Handed       bool
}

func (e LateGrant) Error() string {
	return fmt.Sprintf("granted, but the reply came %v after the request, when the lease of %v could have ended", e.After, e.Lease)
}

// Grant records g and returns the context of the acquisition: derived from
// parent, carrying the acquisition, and cancelled with ErrReleased when it
// is released, with ErrLeaseLost when the hold's lease is lost, with
// ErrLeaseExpired when an explicit lease ends, and with a cause wrapping
// ErrClosed at Close. When parent ends first, the context ends with the
// parent's cause, as any context derived from it, and the acquisition is
// released in the background: no lock outlives the context it was acquired
// on.
//
// The hold's view of a lease, explicit or the watchdog's, ends at sentAt +
// the watchdog's Trust(lease): Drift(lease) and the safety margin before
// sentAt + lease, so that the timer that ends the context, which a busy
// process runs late, has run before the server can grant the lock to
// anyone else. A grant whose reply came after that end (a reply held back
// about a lease) is refused with an error wrapping ErrNotAcquired and a
// LateGrant; after Close, Grant records nothing and
// returns ErrClosed. Either way the caller must give the grant back on the
// server.
func (h *Holds) Grant(parent context.Context, g Grant) (context.Context, *Acq, error) {
	lease := g.Lease
	if lease == 0 {
		lease = cmp.Or(g.Renewed, h.core.Lease)
	}
	deadline := g.SentAt.Add(h.core.Watchdog.Trust(lease))
	handed := g.ServerLease > 0 && g.ServerLease < lease
	if handed {
		lease = g.ServerLease // the watchdog renews it before it ends
	}
	trust := h.core.Watchdog.Trust(lease) // the watchdog's deadline, or the explicit lease's end
	now := time.Now()
	if !now.Before(g.SentAt.Add(trust)) {
		return nil, nil, fmt.Errorf("%w: %w", ErrNotAcquired, LateGrant{After: now.Sub(g.SentAt).Round(time.Millisecond), Lease: lease, Handed: handed})
	}
	a := &Acq{ID: g.ID, Token: g.Token, granted: Mono(now), live: true, unknown: g.Unknown}
	if g.Lease > 0 {
		a.exp = &expiry{lease: g.Lease, deadline: deadline}
	}
	if oc, ok := parent.(*ownerCtx); ok {
		// The acquisition carries the owner itself: the owner's context
		// need not be kept with it.
		if id, ok := h.core.ownerID(g.Owner); ok && id == oc.id {
			parent, a.owner = oc.Context, true
		}
	}
	a.Context, a.cancel = context.WithCancelCause(parent)

	h.mu.Lock()
	if h.closed != nil {
		h.mu.Unlock()
		a.cancel(h.closed)
		return nil, nil, h.closed
	}
	hd := h.find(g.Key, g.Owner)
	if hd == nil {
		hd = &Hold{holds: h, key: holdKey{g.Key, g.Owner}, next: h.m[g.Key], lock: g.Lock}
		h.m[g.Key] = hd
	}
	last := &hd.acqs
	for *last != nil {
		last = &(*last).next
	}
	*last = a
	a.hold = hd
	if g.Lease == 0 {
		hd.watch++
		if hd.entry == nil {
			hd.entry = h.core.Watchdog.Add(hd, g.SentAt, g.Renewed, g.ServerLease)
		}
		a.lease = hd.entry
	}
	h.mu.Unlock()
	a.mu.Lock()
	if parent.Done() != nil { // a parent that never ends needs no watch (nor its memory)
		a.stopParent = context.AfterFunc(parent, func() {
			// The context ends with the parent's cause, as the parent's
			// cancellation ends it; this runs in a goroutine of its own, and
			// the release must not end it first with ErrReleased.
			a.cancel(context.Cause(parent))
			h.core.Go(func(jctx context.Context) { a.unlock(jctx) })
		})
	}
	if a.exp != nil {
		a.exp.timer = time.AfterFunc(time.Until(deadline), a.expire)
	}
	a.mu.Unlock()
	return a, a, nil
}

// Lookup returns the acquisition of key that ctx carries, or nil; nil too
// when ctx carries another owner than the acquisition's (a new owner was
// started from the acquisition's context: see NewOwner).
func (h *Holds) Lookup(ctx context.Context, key string) *Acq {
	if a, ok := ctx.(*Acq); ok && a.owner && a.hold.holds == h && a.hold.key.key == key {
		return a // the acquisition's own context, which carries its owner
	}
	a, _ := ctx.Value(acqKey{h, key}).(*Acq)
	if a == nil {
		return nil
	}
	if owner, _ := h.core.OwnerOf(ctx); owner != a.hold.key.owner {
		return nil
	}
	return a
}

// detach removes a from its hold: the watchdog stops renewing the hold with
// its last watchdog acquisition, and the hold is forgotten with its last
// acquisition. It is idempotent.
func (hd *Hold) detach(a *Acq) {
	h := hd.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	p := &hd.acqs
	for *p != nil && *p != a {
		p = &(*p).next
	}
	if *p == nil {
		return
	}
	*p, a.next = a.next, nil
	if a.exp == nil {
		hd.watch--
		if hd.watch == 0 && hd.entry != nil {
			h.core.Watchdog.Remove(hd.entry)
			hd.entry = nil
		}
	}
	if hd.acqs == nil {
		h.forget(hd)
	}
}

// others returns the hold's live acquisitions but a.
func (hd *Hold) others(a *Acq) []*Acq {
	h := hd.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	return hd.appendAcqs(nil, a)
}

// Renewal renews the hold (core.Lease).
func (hd *Hold) Renewal() Renewal { return hd.lock.Renewal(hd.key.owner) }

// What names the hold's lock in logs (core.Lease).
func (hd *Hold) What() string { return hd.lock.What() }

// Kind is the kind (and side) of what the hold holds.
func (hd *Hold) Kind() (kind observe.Kind, side string) { return hd.lock.Kind() }

// Lost is the watchdog's callback (core.Lease): the hold's lease is gone,
// and with it every acquisition of the hold. Their contexts are cancelled
// when it returns; the loss is logged and told to the observer by the
// report it returns, after.
func (hd *Hold) Lost(cause error) func() {
	h := hd.holds
	h.mu.Lock()
	if hd.entry == nil {
		h.mu.Unlock()
		return nil
	}
	hd.entry = nil
	acqs := hd.appendAcqs(nil, nil)
	h.mu.Unlock()
	ended := acqs[:0]
	for _, a := range acqs {
		if a.end(cause) {
			ended = append(ended, a)
		}
	}
	return func() {
		h.core.Log.Warn("distsync: lease lost", "lock", hd.lock.What(), "key", hd.key.key, "owner", hd.key.owner, "cause", cause)
		// A renewal the server applied may have been confirmed too late
		// (its reply lost or late): the lease then lives on there, held
		// by nobody, and waiters would wait it out. Each acquisition is
		// given back by its id, which finds nothing when the lease did
		// lapse or was taken over.
		ctx, cancel := context.WithTimeout(context.Background(), CloseGrace)
		h.giveBack(ctx, ended)
		cancel()
		for _, a := range ended {
			a.tellEnd(cause)
		}
	}
}

// GiveBack ends every hold of a Client being closed and gives it back:
// each live acquisition's context is cancelled with cause (wrapping
// ErrClosed), no grant is recorded afterwards, and each is released on the
// server once, the releases sent concurrently so that they share the
// pipelined connection, all within timeout. An acquisition whose release
// fails or does not answer in time keeps the lock until its lease ends.
func (h *Holds) GiveBack(timeout time.Duration, cause error) {
	h.mu.Lock()
	h.closed = cause
	var acqs []*Acq
	for _, hd := range h.m {
		for ; hd != nil; hd = hd.next {
			acqs = hd.appendAcqs(acqs, nil)
		}
	}
	h.mu.Unlock()
	ended := acqs[:0]
	for _, a := range acqs {
		if a.end(cause) {
			ended = append(ended, a)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	h.giveBack(ctx, ended)
	for _, a := range ended {
		a.tellEnd(cause)
	}
}

// giveBack releases each of the ended acquisitions acqs on the server, by
// its id, within ctx, the releases sent concurrently so that they share the
// pipelined connection. One whose release fails or does not answer in
// time keeps the lock until its lease ends.
func (h *Holds) giveBack(ctx context.Context, acqs []*Acq) {
	next := make(chan *Acq)
	var wg sync.WaitGroup
	for range min(len(acqs), giveBackSenders) {
		wg.Go(func() {
			for a := range next {
				a.mu.Lock()
				life := ReleaseMemory
				if a.unknown {
					life = h.core.UndoLife(a.explicit())
				}
				a.mu.Unlock()
				if _, err := a.hold.lock.Release(ctx, a.hold.key.owner, a.ID, life); err != nil {
					h.core.Log.Warn("distsync: could not give back a hold; it ends with its lease", "lock", a.hold.lock.What(), "err", err)
				}
			}
		})
	}
	for _, a := range acqs {
		next <- a
	}
	close(next)
	wg.Wait()
}

// giveBackSenders bounds the releases GiveBack has on the wire at once.
const giveBackSenders = 64

// end ends a live acquisition with cause, without a release: its context is
// cancelled and it leaves its hold. It reports whether a was live.
func (a *Acq) end(cause error) bool { return a.endIf(cause, false) }

// endIf is end; with expired, only once the explicit lease's deadline has
// passed (Extend may have moved it).
func (a *Acq) endIf(cause error, expired bool) bool {
	a.mu.Lock()
	if !a.live || expired && time.Now().Before(a.exp.deadline) {
		a.mu.Unlock()
		return false
	}
	a.live, a.cause = false, cause
	a.stopTimers()
	a.mu.Unlock()
	a.hold.detach(a)
	a.cancel(cause)
	return true
}

// tellEnd tells the observer that a ended with cause (see end): as a
// release when it was released by id from elsewhere (ErrReleased), else as
// a loss. The caller holds no lock (the observer may call back into
// distsync).
func (a *Acq) tellEnd(cause error) {
	o := a.hold.holds.core.Observer
	switch {
	case o == nil:
	case errors.Is(cause, ErrReleased):
		kind, side := a.hold.lock.Kind()
		o.Released(context.Background(), observe.ReleaseInfo{Kind: kind, Side: side, Name: a.hold.lock.Name(), Start: time.Now(), Held: a.held()})
	default:
		kind, side := a.hold.lock.Kind()
		o.Lost(observe.LostInfo{Kind: kind, Side: side, Name: a.hold.lock.Name(), Held: a.held(), Cause: cause})
	}
}

// stopTimers stops what would end or release a: its lease's timer and the
// watch on its parent context. a.mu is held.
func (a *Acq) stopTimers() {
	if a.exp != nil && a.exp.timer != nil { // nil until Grant has set it
		a.exp.timer.Stop()
	}
	if a.stopParent != nil {
		a.stopParent()
	}
}

// expire ends an explicit lease at its deadline, unless Extend moved it. An
// extension on the wire does not hold it back: only a confirmed one moves
// the deadline.
func (a *Acq) expire() {
	if a.endIf(ErrLeaseExpired, true) {
		a.tellEnd(ErrLeaseExpired)
	}
}

// held is how long a has been held.
func (a *Acq) held() time.Duration { return Mono(time.Now()) - a.granted }

// Held reports whether a is live.
func (a *Acq) Held() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live
}

// Unlock releases the acquisition, once: see the contract of the primitives'
// Unlock. The acquisition's context ends before the release is sent (the
// caller gave the hold up), whatever then happens to the reply. It returns
// nil if and only if its own release was applied on the server, by this
// call or by an earlier one whose reply was lost; of concurrent calls
// exactly one returns nil; ErrNotHeld when the acquisition was not held
// (released before, by id from elsewhere too, its lease lost or expired);
// the error of the last attempt when no attempt got an answer (Unlock may be
// called again to learn the outcome and release it).
func (a *Acq) Unlock(ctx context.Context) error { return a.release1(ctx, false) }

// release1 is Unlock; auto says distsync releases on its own, and the
// holder's next Unlock reports the outcome.
func (a *Acq) release1(ctx context.Context, auto bool) (err error) {
	obs := a.hold.holds.core.Observer
	var start time.Time
	if obs != nil { // the clock is read for the observer only
		start = time.Now()
	}
	// Close waits (a little) for a release on the wire; after Close the
	// release is still sent if the connection is open (FromClient).
	tracked := a.hold.holds.core.Track() == nil
	// The observer hears of the release that ended a live acquisition, and
	// of what that ended with it, once relMu is unlocked.
	var (
		held  time.Duration = -1
		ended []*Acq
	)
	a.relMu.Lock()
	// One deferred call (a function with more would have its defers run
	// by the runtime rather than inline, on every release).
	defer func() {
		a.relMu.Unlock()
		if tracked {
			defer a.hold.holds.core.Untrack() // after the reports, whatever they do
		}
		if o := obs; o != nil && held >= 0 {
			kind, side := a.hold.lock.Kind()
			o.Released(ctx, observe.ReleaseInfo{Kind: kind, Side: side, Name: a.hold.lock.Name(), Start: start, Held: held, Auto: auto, Err: err})
		}
		for _, o := range ended {
			o.tellEnd(ErrLeaseExpired)
		}
	}()
	a.mu.Lock()
	switch {
	case a.live:
		a.live, a.pending, a.cause = false, true, ErrReleased
		a.stopTimers()
		held = 0
		if obs != nil {
			held = a.held()
		}
		a.mu.Unlock()
		a.hold.detach(a)
		// The caller gave the hold up: its context ends before the release
		// is sent, so no successor the release lets in finds it live,
		// whatever happens to the reply.
		a.cancel(ErrReleased)
	case a.pending:
		a.mu.Unlock()
	case a.released:
		untold := a.untold
		a.untold = false
		a.mu.Unlock()
		if untold {
			return nil // the release made when the parent context ended
		}
		return ErrNotHeld
	default:
		// Ended without a release: lost, abandoned at Close, or its
		// explicit lease ended by this process's count, which is a little
		// earlier than the server's, so the release is still sent.
		cause := a.cause
		a.mu.Unlock()
		if !errors.Is(cause, ErrLeaseExpired) {
			if errors.Is(cause, ErrClosed) {
				return cause
			}
			return fmt.Errorf("%w: %w", ErrNotHeld, cause)
		}
		r, err := a.send(ctx)
		if err == nil && r != releaseNoHold {
			a.mu.Lock()
			a.released = true
			a.mu.Unlock()
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: %w", ErrNotHeld, cause)
	}
	r, err := a.send(ctx)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.pending = false
	a.released = r != releaseNoHold
	a.untold = auto && a.released
	a.mu.Unlock()
	if r == releaseNoHold {
		return ErrNotHeld
	}
	if r == releasedLast {
		// The server holds nothing more for the owner: whatever else this
		// process counted had already ended there (an explicit lease).
		for _, o := range a.hold.others(a) {
			if o.end(ErrLeaseExpired) {
				ended = append(ended, o)
			}
		}
	}
	return nil
}

// UnlockWith is Unlock for a release distsync makes on its own behalf
// with a cause of its own (a failed liveness check): the context ends with
// cause, before the release is sent.
func (a *Acq) UnlockWith(ctx context.Context, cause error) error {
	a.cancel(cause)
	return a.Unlock(ctx)
}

// unlock is Unlock for a release distsync makes on its own (the parent
// context ended): the holder's next Unlock reports its outcome.
func (a *Acq) unlock(ctx context.Context) {
	if err := a.release1(ctx, true); err != nil && !errors.Is(err, ErrNotHeld) && !errors.Is(err, ErrClosed) {
		a.hold.holds.core.Log.Warn("distsync: release failed", "lock", a.hold.lock.What(), "err", err)
	}
}

// send runs the release, retrying transient failures for ReleaseTimeout,
// and remembers whether any attempt had an unknown outcome.
func (a *Acq) send(ctx context.Context) (int64, error) {
	a.mu.Lock()
	life := ReleaseMemory
	if a.unknown {
		life = a.hold.holds.core.UndoLife(a.explicit())
	}
	a.mu.Unlock()
	var r int64
	err := RetryDetached(ctx, ReleaseTimeout, func(ctx context.Context) error {
		var err error
		r, err = a.hold.lock.Release(ctx, a.hold.key.owner, a.ID, life)
		if err != nil && Unknown(err) {
			a.mu.Lock()
			a.unknown = true
			a.mu.Unlock()
		}
		return err
	})
	return r, ClosedErr(err)
}

// Extend moves the end of an explicit lease to lease from now: send extends
// it on the server, reporting false when the acquisition is no longer held
// there. It returns ErrNotHeld (and ends the acquisition) when the server no
// longer holds it, and ErrNotHeld wrapping the cause when it had ended
// before. An extension moves the deadline only when its confirmation comes
// before it: while it is on the wire the lease expires as it would have, and
// an extension confirmed after that returns ErrNotHeld wrapping
// ErrLeaseExpired and is given back in the background.
func (a *Acq) Extend(ctx context.Context, lease time.Duration, send func(ctx context.Context) (bool, error)) error {
	if lease < MinLease {
		return fmt.Errorf("%w: lease %v, want at least %v", ErrInvalidArgument, lease, MinLease)
	}
	if a.exp == nil {
		return fmt.Errorf("%w: the watchdog renews this acquisition", ErrInvalidArgument)
	}
	var told error // the cause to tell the observer, after relMu is unlocked
	defer func() {
		if told != nil {
			a.tellEnd(told)
		}
	}()
	a.relMu.Lock()
	defer a.relMu.Unlock()
	a.mu.Lock()
	live, cause := a.live && time.Now().Before(a.exp.deadline), a.cause
	a.mu.Unlock()
	if !live {
		if cause == nil {
			cause = ErrLeaseExpired
		}
		return fmt.Errorf("%w: %w", ErrNotHeld, cause)
	}
	sentAt := time.Now()
	// ctx is often the acquisition's own context, whose Deadline is the
	// end this call moves: the request is bounded by ReleaseTimeout
	// instead.
	sctx, cancel := IOContext(ctx, ReleaseTimeout)
	ok, err := send(sctx)
	cancel()
	if err != nil {
		return err
	}
	if !ok {
		if a.end(ErrLeaseLost) {
			told = ErrLeaseLost
		}
		return ErrNotHeld
	}
	a.mu.Lock()
	if a.live && time.Now().Before(a.exp.deadline) {
		a.exp.deadline = sentAt.Add(a.hold.holds.core.Watchdog.Trust(lease))
		a.exp.timer.Reset(time.Until(a.exp.deadline))
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	// Confirmed after the lease ended here: the context has ended (or ends
	// now) whatever the server says, and what the server extended goes back.
	if a.endIf(ErrLeaseExpired, true) {
		told = ErrLeaseExpired
	}
	a.mu.Lock()
	cause = a.cause
	a.mu.Unlock()
	if errors.Is(cause, ErrLeaseExpired) {
		a.hold.holds.core.Go(func(jctx context.Context) { a.unlock(jctx) })
	}
	return fmt.Errorf("%w: %w", ErrNotHeld, cause)
}

// End ends every live acquisition of the hold of key by owner in this
// process with cause, without a release: the server no longer holds it (it
// was released by id from elsewhere, say).
func (h *Holds) End(key, owner string, cause error) {
	h.mu.Lock()
	var acqs []*Acq
	if hd := h.find(key, owner); hd != nil {
		acqs = hd.appendAcqs(nil, nil)
	}
	h.mu.Unlock()
	for _, a := range acqs {
		if a.end(cause) {
			a.tellEnd(cause)
		}
	}
}
