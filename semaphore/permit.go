package semaphore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

// PermitSemaphore is the permit-expiring semaphore: Java Redisson's
// RPermitExpirableSemaphore, the parking lot. Each acquisition returns a
// Permit with its own id and lease (a sorted set of permit id -> end of
// lease, by the server clock). Permits taken without an explicit lease are
// renewed by the Client's watchdog while their holder lives; when a holder
// crashes its permit's lease ends and the permit returns to the pool by
// itself (every script first returns the permits whose lease ended). A
// PermitSemaphore is a cheap handle, safe for concurrent use.
type PermitSemaphore struct {
	pool
}

// newPermit returns the permit-expiring semaphore called name on c
// (Client.PermitSemaphore).
func newPermit(c *core.Core, name string) (*PermitSemaphore, error) {
	p, err := newPool(c, name, "permit semaphore", observe.KindPermitSemaphore, "pneeds")
	if err != nil {
		return nil, err
	}
	return &PermitSemaphore{p}, nil
}

// Acquire takes one permit with the watchdog lease, renewed until Release,
// blocking until one is available or ctx ends, when it returns an error
// wrapping ctx.Err() (and ErrNotSet if the permits were never set) and
// holds nothing. The permit's context ends with the permit (released, lost,
// expired, at Client.Close) and when ctx ends, which returns the permit.
// Transient failures do not end the wait, and a repeated attempt returns
// the permit an earlier one granted. Uncontended it is one round trip.
func (s *PermitSemaphore) Acquire(ctx context.Context) (*Permit, error) {
	ps, err := s.acquire(ctx, 1, core.Forever, 0)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// TryAcquire takes one permit within wait (0: one attempt, not repeated;
// distsync.Forever: until ctx ends) with lease: 0 gives the watchdog lease,
// renewed until Release; > 0 an explicit lease (Permit.Extend moves its
// end): Redisson's tryAcquire(waitTime, leaseTime). It returns an error
// wrapping ErrNotAcquired when no permit became available in time (with
// ErrNotSet if the permits were never set), one wrapping ctx.Err() when ctx
// ended first, and ErrInvalidArgument for a negative wait or a lease that
// is negative or under distsync.MinLease. Otherwise as Acquire.
func (s *PermitSemaphore) TryAcquire(ctx context.Context, wait, lease time.Duration) (*Permit, error) {
	ps, err := s.TryAcquireN(ctx, 1, wait, lease)
	if err != nil {
		return nil, err
	}
	return ps[0], nil
}

// TryAcquireN takes n permits (1..MaxPermitsPerCall) at once, all or none,
// within wait and with lease, as TryAcquire does one: Redisson's
// acquire(permits, leaseTime) and tryAcquire(permits, waitTime, leaseTime).
// Each permit has its own id and context and is released on its own.
// Waiters needing n are woken only when n permits are available.
func (s *PermitSemaphore) TryAcquireN(ctx context.Context, n int64, wait, lease time.Duration) ([]*Permit, error) {
	s = core.OrZero(s)
	if err := core.CheckDuration("wait", wait); err != nil {
		return nil, s.errorf(err)
	}
	if err := core.CheckDuration("lease", lease); err != nil {
		return nil, s.errorf(err)
	}
	if n < 1 || n > MaxPermitsPerCall {
		return nil, s.errorf(fmt.Errorf("%w: %d permits in one call, want 1..%d", core.ErrInvalidArgument, n, MaxPermitsPerCall))
	}
	return s.acquire(ctx, n, wait, lease)
}

// MaxPermitsPerCall bounds the permits one TryAcquireN takes: each has its
// own id, lease and context.
const MaxPermitsPerCall = 1024

// acquire takes n permits within wait with lease. A grant refused because
// its reply came after its lease could have ended is given back and tried
// again with new ids within what is left of wait (acquire.AgainIfLate).
func (s *PermitSemaphore) acquire(ctx context.Context, n int64, wait, lease time.Duration) ([]*Permit, error) {
	s = core.OrZero(s)
	return acquire.AgainIfLate(ctx, wait, func(wait time.Duration) ([]*Permit, error) {
		return s.acquireOnce(ctx, n, wait, lease)
	})
}

// acquireOnce is one acquisition of acquire, with one set of permit ids.
func (s *PermitSemaphore) acquireOnce(ctx context.Context, n int64, wait, lease time.Duration) ([]*Permit, error) {
	if err := s.c.Track(); err != nil {
		return nil, s.errorf(err)
	}
	defer s.c.Untrack()
	// The permit ids: every attempt carries them, so a repeated attempt
	// returns the permits an earlier one granted. Each names this Client
	// first, as an owner does, so that a ReleaseID elsewhere can tell it on
	// its control channel.
	s.c.WatchControl()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = s.c.ID + ":" + core.NewAcqID()
	}
	leaseArg := lease
	if leaseArg == 0 {
		leaseArg = s.c.Lease
	}
	joined := strings.Join(ids, " ")
	args := s.args(joined, core.Ms(leaseArg), "", core.Ms(s.c.WaiterWindow), "")
	t := acquire.Track{Kind: observe.KindPermitSemaphore, Name: s.name}
	notSet := false // the last refusal found the permits never set
	// A release may grant the queued waiter its permits and tell it on
	// its Client's channel (lib.lua, sem_pgrant).
	leave := func(ctx context.Context) error {
		return s.c.Eval(ctx, leaveScript, s.keys, s.args(ids[0], joined, core.Ms(s.c.UndoLife(lease)))).Error()
	}
	w := acquire.WaitFor(s.c, s.channel+":"+s.c.ID, ids[0], wait, leave)
	w.Bound = s.c.HandoffLease // a waiter nudged as the next in line
	w.Track = &t
	var (
		reg         acquire.Refusal // the last refusal, to time a grant by
		serverLease time.Duration   // of permits a release granted
		listens     bool            // the waiter listens on its channel
	)
	w.Listening = &listens
	w.Handed = func(data string) bool {
		from, sl, ok := reg.Handed(s.c, data, lease)
		if ok {
			serverLease = sl
			t.Sent(from, true, nil)
		}
		return ok
	}
	err := acquire.Do(ctx, w, func(actx context.Context, waiter string) (bool, time.Duration, error) {
		args[4], args[6] = waiter, ""
		if listens && waiter != "" {
			args[6] = "l" // a release may pass the waiter over once it no longer listens
		}
		sent := time.Now()
		var buf [4]int64
		res, err := s.c.TryAcquire(actx, permitAcquireScript, s.keys, args, buf[:0])
		switch {
		case err != nil:
			return false, 0, t.Sent(sent, false, err)
		case res[0] == acquire.CodeFinished:
			return false, 0, acquire.ErrFinished
		case res[0] == 0 || res[0] == codeNotSet:
			notSet = res[0] == codeNotSet
			if len(res) > 2 {
				reg = acquire.Refusal{Sent: sent, At: res[2]}
			}
			return false, core.RetryAfter(res[1]), nil
		}
		serverLease = 0
		return true, 0, t.Sent(sent, true, nil)
	})
	err = notSetErr(ctx, err, notSet)
	undo := func() {
		for _, id := range ids {
			s.c.Undo(s.permitWhat(id), id, lease, s.ownRelease)
		}
	}
	if err := t.Finish(ctx, err, undo); err != nil {
		t.Report(ctx, s.c, 0, err)
		return nil, s.errorf(err)
	}
	// Each permit is its own hold, owned by its id, with one acquisition.
	ps := make([]*Permit, n)
	for i, id := range ids {
		p := &Permit{id: id, s: s, lease: lease}
		p.ctx, p.acq, err = s.c.Holds.Grant(ctx, core.Grant{
			Key: s.keys[1], Owner: id, Lock: (*held)(p), ID: id, SentAt: t.SentAt(),
			Lease: lease, ServerLease: serverLease, Unknown: t.Unknown(),
		})
		t.Report(ctx, s.c, 0, err) // each permit is an acquisition of its own
		if err != nil {
			for _, q := range ps[:i] {
				q.acq.Unlock(context.Background())
			}
			for _, id := range ids[i:] {
				s.c.Undo(s.permitWhat(id), id, lease, s.ownRelease)
			}
			return nil, s.errorf(err)
		}
		ps[i] = p
	}
	return ps, nil
}

// held is a Permit as core.Holdable: each permit is its own hold, owned by
// its id.
type held Permit

func (p *held) What() string { return p.s.permitWhat(p.id) }
func (p *held) Name() string { return p.s.name }

func (p *held) Kind() (observe.Kind, string) { return observe.KindPermitSemaphore, "" }

func (p *held) Release(ctx context.Context, _, id string, life time.Duration) (int64, error) {
	return p.s.release(ctx, id, life, "")
}

func (p *held) Renewal(string) core.Renewal {
	return core.Renewal{Script: permitRenewScript, Keys: p.s.keys, Args: p.s.args(p.id, core.Ms(p.s.c.Lease))}
}

func (s *PermitSemaphore) permitWhat(id string) string {
	return fmt.Sprintf("permit %s of %s %q", id, s.kind, s.name)
}

// ReleaseID returns the permit with id to the pool, from any Client and any
// process: Redisson's release(permitId). It returns nil if the permit was
// held and is now returned, and an error wrapping ErrNotHeld otherwise
// (unknown id, released before, or its lease ended). The permit's context
// ends at once: as by Release when it is held through this Client, else by
// push on its Client's control channel (ErrLeaseLost), or, where push
// cannot reach it, at its next renewal or when its explicit lease ends. Its
// holder's Release then returns ErrNotHeld. One round trip.
func (s *PermitSemaphore) ReleaseID(ctx context.Context, id string) error {
	s = core.OrZero(s)
	if err := s.c.Closed(); err != nil {
		return s.errorf(err)
	}
	if a := s.c.Holds.Local(s.keys[1], id, id); a != nil {
		if err := a.Unlock(ctx); err != nil {
			return s.errorf(fmt.Errorf("permit %s: %w", id, err))
		}
		return nil
	}
	ictx, cancel := core.IOContext(ctx, core.ReleaseTimeout)
	defer cancel()
	r, err := s.release(ictx, id, core.ReleaseMemory, s.c.ControlPrefix())
	if err != nil {
		return s.errorf(err)
	}
	if r != 1 { // not held, or released before
		return s.errorf(fmt.Errorf("%w: permit %s", core.ErrNotHeld, id))
	}
	return nil
}

// ownRelease is release by the permit's holder (a core.ReleaseFunc).
func (s *PermitSemaphore) ownRelease(ctx context.Context, id string, life time.Duration) (int64, error) {
	return s.release(ctx, id, life, "")
}

// Permits returns the semaphore's number of permits: available plus held
// (Redisson's getPermits). One round trip.
func (s *PermitSemaphore) Permits(ctx context.Context) (int64, error) {
	s = core.OrZero(s)
	avail, held, err := s.state(ctx)
	return avail + held, err
}

// release returns permit id to the pool once, remembering it for life (a
// core.ReleaseFunc with ctl ""). For a release by id from elsewhere, ctl is
// the prefix of the control channels, where the holder is told.
func (s *PermitSemaphore) release(ctx context.Context, id string, life time.Duration, ctl string) (int64, error) {
	return s.c.Eval(ctx, permitReleaseScript, s.keys, s.args(id, core.Ms(life), ctl)).AsInt64()
}

// Release ends the permit's context with cause ErrReleased, then returns the
// permit to the pool and wakes a waiter. It works on a cancelled ctx and
// retries transient failures for a few seconds. It returns nil if and only
// if the permit was returned by its holder, by this call or by an earlier
// one whose reply was lost, and an error wrapping ErrNotHeld, returning
// nothing, when the permit is not held (released before, by ReleaseID
// elsewhere too, its lease ended, or it belongs to another semaphore). One
// round trip.
func (s *PermitSemaphore) Release(ctx context.Context, p *Permit) error {
	s = core.OrZero(s)
	if p == nil || p.s == nil || p.s.c != s.c || p.s.key() != s.key() {
		return s.errorf(fmt.Errorf("%w: not a permit of this semaphore", core.ErrNotHeld))
	}
	if err := p.acq.Unlock(ctx); err != nil {
		return p.errorf(err)
	}
	return nil
}

// Held returns the number of permits held now, not counting those whose
// lease ended. One round trip.
func (s *PermitSemaphore) Held(ctx context.Context) (int64, error) {
	s = core.OrZero(s)
	_, held, err := s.state(ctx)
	return held, err
}

// Permit is one permit of a PermitSemaphore: an id and a lease, with the
// context of its holder. In Redisson it is the permit id string that
// RPermitExpirableSemaphore.acquire returns; here it also carries the
// holder's context and the permit's own TTL and Extend (Redisson's
// updateLeaseTime).
type Permit struct {
	id    string
	s     *PermitSemaphore
	ctx   context.Context
	acq   *core.Acq
	lease time.Duration // the explicit lease, 0 when the watchdog renews it
}

// ID returns the permit's id in Redis.
func (p *Permit) ID() string { return core.OrZero(p).id }

// Context returns the permit's context: derived from the context passed to
// Acquire, cancelled with cause ErrLeaseLost if the permit is lost (the
// watchdog found it gone, or could not renew it before its lease ended), with
// ErrLeaseExpired when an explicit lease ends, and with ErrReleased by
// Release. Run the work the permit guards under it.
func (p *Permit) Context() context.Context { return core.OrZero(p).ctx }

// TTL returns the permit's remaining lease by the server's clock, or an error
// wrapping ErrNotHeld when it is no longer held. One round trip.
func (p *Permit) TTL(ctx context.Context) (time.Duration, error) {
	if p == nil || p.s == nil {
		return 0, fmt.Errorf("permit: %w", core.ErrNoClient)
	}
	if err := p.s.c.Closed(); err != nil {
		return 0, p.errorf(err)
	}
	ms, err := p.s.c.Eval(ctx, permitTTLScript, p.s.keys, p.s.args(p.id)).AsInt64()
	if err != nil {
		return 0, p.errorf(err)
	}
	if ms < 0 {
		return 0, p.errorf(core.ErrNotHeld)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Extend (Redisson's updateLeaseTime) sets the remaining lease of a permit
// acquired with an explicit lease to lease from now by the server's clock,
// and moves its context's Deadline with it, when confirmed before the lease
// ends: one confirmed later returns ErrNotHeld, the context having ended with
// the lease, and the permit is returned. It returns an error wrapping ErrNotHeld when the
// permit is no longer held (an ended lease is not revived), and
// ErrInvalidArgument for a lease under MinLease or a permit the watchdog
// renews. One round trip.
func (p *Permit) Extend(ctx context.Context, lease time.Duration) error {
	if p == nil || p.s == nil {
		return fmt.Errorf("permit: %w", core.ErrNoClient)
	}
	if err := p.s.c.Closed(); err != nil {
		return p.errorf(err)
	}
	switch {
	case lease < core.MinLease:
		return p.errorf(fmt.Errorf("%w: lease %v, want at least %v", core.ErrInvalidArgument, lease, core.MinLease))
	case p.lease == 0:
		return p.errorf(fmt.Errorf("%w: the watchdog renews this permit", core.ErrInvalidArgument))
	}
	err := p.acq.Extend(ctx, lease, func(ctx context.Context) (bool, error) {
		r, err := p.s.c.Eval(ctx, permitRenewScript, p.s.keys, p.s.args(p.id, core.Ms(lease))).AsInt64()
		return r == 1, err
	})
	if err != nil {
		return p.errorf(err)
	}
	return nil
}

func (p *Permit) errorf(err error) error {
	return p.s.errorf(fmt.Errorf("permit %s: %w", p.id, err))
}
