// Package semaphore holds two distributed semaphores on Redis, with the
// semantics of Java Redisson's RSemaphore and RPermitExpirableSemaphore:
//
//   - Semaphore, a counting semaphore: permits are a number, not owned. A
//     holder that crashes without releasing loses its permits for good.
//   - PermitSemaphore, the permit-expiring semaphore: every permit has an id
//     and a lease, renewed by the Client's watchdog while its holder lives,
//     so a crashed holder's permit comes back by itself when its lease ends.
//
// Acquiring from a semaphore whose permits were never set waits until they
// are set (TrySetPermits, AddPermits), as in Redisson; a wait that ends
// before they are set returns an error wrapping ErrNotSet, beside
// ErrNotAcquired or ctx.Err(), so that a semaphore nobody sized is told
// apart from a full one. A Semaphore's release wakes as many waiters as
// permits became available, not all of them, without fairness (a newcomer
// that finds enough permits takes them). A PermitSemaphore's release grants
// the permits to its queued waiters in the order they queued, while the
// oldest's need fits (a newcomer takes only permits too few for the oldest
// waiter); the waiter holds when the release's message arrives, and a
// grant to a waiter that vanished comes back within the Client's hand-off
// lease. Acquisitions survive lost replies; a permit's
// Release is exact, a Semaphore's Release is sent once and never repeated
// (docs/safety.md, "At the edges of a hold's life"). A name is one kind:
// a Semaphore refuses a PermitSemaphore's name, and the reverse, with
// ErrWrongKind. Errors wrap package distsync's: test them with errors.Is.
//
// Keys: docs/primitives.md#semaphores. How it works:
// docs/how-it-works.md#semaphores-and-the-latch.
package semaphore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/observe"
)

// MaxPermits bounds every permit count: 2^53, the largest integer the
// server's Lua numbers hold exactly. Counts beyond it, and sums that would
// leave [-MaxPermits, MaxPermits], return ErrInvalidArgument.
const MaxPermits = 1 << 53

var (
	//go:embed lib.lua
	libLua string
	//go:embed acquirefast.lua
	acquireFast string
	//go:embed acquire.lua
	acquireLua string
	//go:embed addfast.lua
	addFast string
	//go:embed add.lua
	addLua string
	//go:embed trysetpermits.lua
	trySetLua string
	//go:embed setpermits.lua
	setLua string
	//go:embed state.lua
	stateLua string
	//go:embed drain.lua
	drainLua string
	//go:embed leave.lua
	leaveLua string
	//go:embed permit_acquirefast.lua
	permitAcquireFast string
	//go:embed permit_acquire.lua
	permitAcquireLua string
	//go:embed permit_releasefast.lua
	permitReleaseFast string
	//go:embed permit_release.lua
	permitReleaseLua string
	//go:embed permit_renew.lua
	permitRenewLua string
	//go:embed permit_renew_full.lua
	permitRenewFullLua string
	//go:embed permit_ttl.lua
	permitTTLLua string
	//go:embed undo.lua
	undoLua string
	//go:embed delete.lua
	deleteLua string

	acquireScript       = newFastScript(acquireFast, acquireLua)
	addScript           = newFastScript(addFast, addLua)
	trySetScript        = newScript(trySetLua)
	setScript           = newScript(setLua)
	stateScript         = newScript(stateLua)
	drainScript         = newScript(drainLua)
	leaveScript         = newScript(leaveLua)
	permitAcquireScript = newFastScript(permitAcquireFast, permitAcquireLua)
	permitReleaseScript = newFastScript(permitReleaseFast, permitReleaseLua)
	permitRenewScript   = core.NewFastScript(permitRenewLua, libLua+permitRenewFullLua)
	permitTTLScript     = newScript(permitTTLLua)
	undoScript          = newScript(undoLua)
	deleteScript        = newScript(deleteLua)
)

// newScript prepends the semaphore helpers (lib.lua) to body.
func newScript(body string) *core.Script { return core.NewScript(libLua + body) }

// newFastScript is newScript with fast, a common case that needs none of
// the helpers (the few of them and of the shared library it uses are
// inlined: X.in.lua), run before they are defined (core.NewFastScript).
func newFastScript(fast, body string) *core.Script {
	return core.NewFastScript(fast, libLua+body)
}

// pool is what both semaphores share: the keys and the calls on the count of
// available permits.
type pool struct {
	c       *core.Core
	name    string
	kind    string       // "semaphore" or "permit semaphore", for errors
	marker  observe.Kind // the kind the scripts store and check (see lib.lua)
	keys    []string     // the semaphore, held permits, waiters, needs, finished (see lib.lua)
	channel string
}

func newPool(c *core.Core, name, kind string, marker observe.Kind, needs string) (pool, error) {
	if err := core.ValidateName(name); err != nil {
		return pool{}, err
	}
	return pool{
		c:      c,
		name:   name,
		kind:   kind,
		marker: marker,
		keys: []string{
			c.Key(name, ""),
			c.Key(name, "permits"),
			c.Key(name, "waiters"),
			c.Key(name, needs),
			c.Key(name, "done"),
		},
		channel: c.Key(name, "ch"),
	}, nil
}

func (s *pool) nameOf() string { return s.name }

func (s *pool) key() string {
	if len(s.keys) == 0 {
		return ""
	}
	return s.keys[0]
}

// trySetPermits sets the permits if they were never set; with ttl (ms),
// the semaphore's idle time to live (see sem_used).
func (s *pool) trySetPermits(ctx context.Context, n int64, ttl ...string) (bool, error) {
	if err := s.check(0, n); err != nil {
		return false, err
	}
	r, err := s.c.Eval(ctx, trySetScript, s.keys, s.args(append([]string{strconv.FormatInt(n, 10)}, ttl...)...)).AsInt64()
	if err != nil {
		return false, s.errorf(err)
	}
	return r == 1, nil
}

func (s *pool) addPermits(ctx context.Context, n int64) error {
	if err := s.check(-MaxPermits, n); err != nil {
		return err
	}
	return s.add(ctx, n, "a")
}

// add adds n permits; how is "r" for a release, refused when the permits
// are not set, "a" for AddPermits, which sets them.
func (s *pool) add(ctx context.Context, n int64, how string) error {
	r, err := s.c.Eval(ctx, addScript, s.keys, s.args(strconv.FormatInt(n, 10), how)).AsIntSlice()
	if err != nil {
		return s.errorf(err)
	}
	if len(r) != 2 {
		return s.errorf(fmt.Errorf("unexpected reply %v", r))
	}
	if r[0] == -1 {
		return s.errorf(fmt.Errorf("%w (or it was deleted, or its time to live ended): nothing released", core.ErrNotSet))
	}
	if r[0] == 0 {
		return s.errorf(fmt.Errorf("%w: %d available %+d would exceed ±%d", core.ErrInvalidArgument, r[1], n, int64(MaxPermits)))
	}
	return nil
}

func (s *pool) setPermits(ctx context.Context, n int64) error {
	if err := s.check(0, n); err != nil {
		return err
	}
	if err := s.eval(ctx, setScript, n).Error(); err != nil {
		return s.errorf(err)
	}
	return nil
}

func (s *pool) available(ctx context.Context) (int64, error) {
	avail, _, err := s.state(ctx)
	return avail, err
}

func (s *pool) state(ctx context.Context) (avail, held int64, err error) {
	if err := s.c.Closed(); err != nil {
		return 0, 0, s.errorf(err)
	}
	r, err := s.c.Eval(ctx, stateScript, s.keys, s.args()).AsIntSlice()
	if err != nil {
		return 0, 0, s.errorf(err)
	}
	if len(r) != 2 {
		return 0, 0, s.errorf(fmt.Errorf("unexpected reply %v", r))
	}
	return r[0], r[1], nil
}

func (s *pool) drain(ctx context.Context) (int64, error) {
	if err := s.c.Closed(); err != nil {
		return 0, s.errorf(err)
	}
	n, err := s.c.Eval(ctx, drainScript, s.keys, s.args()).AsInt64()
	if err != nil {
		return 0, s.errorf(err)
	}
	return n, nil
}

func (s *pool) remove(ctx context.Context) (bool, error) {
	if err := s.c.Closed(); err != nil {
		return false, s.errorf(err)
	}
	n, err := s.c.Eval(ctx, deleteScript, s.keys, s.args()).AsInt64()
	if err != nil {
		return false, s.errorf(err)
	}
	return n > 0, nil
}

// check returns ErrClosed after Close and ErrInvalidArgument unless
// min <= n <= MaxPermits.
func (s *pool) check(min, n int64) error {
	if err := s.c.Closed(); err != nil {
		return s.errorf(err)
	}
	if n < min || n > MaxPermits {
		return s.errorf(fmt.Errorf("%w: permit count %d out of [%d, %d]", core.ErrInvalidArgument, n, min, int64(MaxPermits)))
	}
	return nil
}

// args returns the arguments of a semaphore script: the two every one starts
// with, more, and the hand-off lease and the kind, last (see lib.lua).
func (s *pool) args(more ...string) []string {
	a := make([]string, 0, len(more)+4)
	a = append(a, s.channel, s.c.PublishCmd())
	a = append(a, more...)
	return append(a, core.Ms(s.c.HandoffLease), string(s.marker))
}

func (s *pool) eval(ctx context.Context, script *core.Script, n int64) rueidis.RedisResult {
	return s.c.Eval(ctx, script, s.keys, s.args(strconv.FormatInt(n, 10)))
}

// codeNotSet is the reply code of a refusal because the permits were never
// set.
const codeNotSet = -4

// notSetErr adds ErrNotSet to the error of a wait that ended without the
// permits, by its budget (ErrNotAcquired) or by ctx (ctx.Err()), when the
// last refused attempt found them never set: such a semaphore is not full,
// it has none.
func notSetErr(ctx context.Context, err error, notSet bool) error {
	ended := errors.Is(err, core.ErrNotAcquired) || (ctx.Err() != nil && errors.Is(err, ctx.Err()))
	if notSet && ended {
		return fmt.Errorf("%w: %w", err, core.ErrNotSet)
	}
	return err
}

func (s *pool) what() string { return fmt.Sprintf("%s %q", s.kind, s.name) }

func (s *pool) errorf(err error) error {
	return fmt.Errorf("%s %q: %w", s.kind, s.name, err)
}

// leave returns the acquire loop's Leave for waiter: unregister it, and wake
// others in its place in case it was woken and gives up without taking the
// permits that woke it.
func (s *pool) leave(waiter string) func(context.Context) error {
	return func(ctx context.Context) error {
		return s.c.Eval(ctx, leaveScript, s.keys, s.args(waiter)).Error()
	}
}

// channelFor is the channel of waiters needing n permits.
func (s *pool) channelFor(n int64) string {
	if n == 1 {
		return s.channel
	}
	return s.channel + ":" + strconv.FormatInt(n, 10)
}

// Semaphore is a counting semaphore: Java Redisson's RSemaphore. Permits are
// a number in Redis, not owned by anyone: any caller may release permits it
// never acquired, and a holder that crashes without releasing loses its
// permits for good (use PermitSemaphore when holders may crash). Waiters
// are woken as the package doc says, without fairness. A Semaphore is a
// cheap handle, safe for concurrent use.
type Semaphore struct {
	pool
}

func init() {
	core.Register(observe.KindSemaphore, newSemaphore)
	core.Register(observe.KindPermitSemaphore, newPermit)
}

// newSemaphore returns the counting semaphore called name on c
// (Client.Semaphore).
func newSemaphore(c *core.Core, name string) (*Semaphore, error) {
	p, err := newPool(c, name, "semaphore", observe.KindSemaphore, "needs")
	if err != nil {
		return nil, err
	}
	return &Semaphore{p}, nil
}

// Acquire takes n permits (1..MaxPermits), blocking until they are
// available or ctx ends, when it returns an error wrapping ctx.Err() (and
// ErrNotSet if the permits were never set). Transient failures do not end
// the wait, and what a failed attempt may have taken is given back.
// Uncontended it is one round trip.
func (s *Semaphore) Acquire(ctx context.Context, n int64) error {
	s = core.OrZero(s)
	return s.acquire(ctx, n, -1)
}

// TryAcquire takes n permits (1..MaxPermits) within wait: with wait 0 it
// tries once. It returns an error wrapping ErrNotAcquired when the permits
// were not available in time, one wrapping ctx.Err() when ctx ended first, and
// ErrInvalidArgument for a negative wait. Either of the first two also wraps
// ErrNotSet when the permits were never set (as for Acquire). Failures are
// handled as for Acquire; with wait 0 a failed attempt is not repeated.
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) error {
	s = core.OrZero(s)
	if err := core.CheckDuration("wait", wait); err != nil {
		return s.errorf(err)
	}
	return s.acquire(ctx, n, wait)
}

func (s *Semaphore) acquire(ctx context.Context, n int64, wait time.Duration) error {
	if err := s.check(1, n); err != nil {
		return err
	}
	if err := s.c.Track(); err != nil {
		return s.errorf(err)
	}
	defer s.c.Untrack()
	// The acquisition's id makes a repeated attempt take nothing more, and
	// lets an acquisition whose outcome is unknown give back what it took.
	id := core.NewAcqID()
	waiter := uuid.NewString()
	num := strconv.FormatInt(n, 10)
	window := core.Ms(s.c.WaiterWindow)
	memory := core.Ms(s.c.UndoLife(0))
	t := acquire.Track{Kind: observe.KindSemaphore, Name: s.name}
	notSet := false // the last refusal found the permits never set
	how := acquire.WaitFor(s.c, s.channelFor(n), waiter, wait, s.leave(waiter))
	how.Track = &t
	err := acquire.Do(ctx, how, func(actx context.Context, w string) (bool, time.Duration, error) {
		sent := time.Now()
		res, ackErr := s.c.EvalAcquire(actx, acquireScript, s.keys, s.args(num, w, window, id, memory))
		r, err := res.AsInt64()
		if err == nil && r == 1 && ackErr != nil {
			err = ackErr // taken, but too few replicas know: give them back
		}
		switch {
		case err != nil:
			return false, 0, t.Sent(sent, false, err)
		case r == acquire.CodeFinished:
			return false, 0, acquire.ErrFinished
		}
		notSet = r == codeNotSet
		return r == 1, 0, t.Sent(sent, r == 1, nil)
	})
	err = notSetErr(ctx, err, notSet)
	err = t.Finish(ctx, err, func() {
		s.c.Undo(s.what(), id, 0, func(ctx context.Context, id string, life time.Duration) (int64, error) {
			return s.c.Eval(ctx, undoScript, s.keys, s.args(num, id, core.Ms(life))).AsInt64()
		})
	})
	t.Report(ctx, s.c, 0, err)
	if err != nil {
		return s.errorf(err)
	}
	return nil
}

// Release returns n permits (1..MaxPermits) to the semaphore, whether or not
// the caller acquired them, and wakes up to n waiters that can now proceed
// (it publishes only when someone waits). It returns ErrInvalidArgument when
// the count would exceed MaxPermits, and ErrNotSet, releasing nothing, when
// the permits are not set (never set, deleted, or the time to live of
// TrySetPermitsTTL ended): it does not make a semaphore. One round trip. It is sent once, never
// repeated (the semaphore is not owned, so a release is not idempotent, as
// in Redisson): after an error whose reply was lost it may or may not have
// been applied; read Available before releasing again.
func (s *Semaphore) Release(ctx context.Context, n int64) error {
	s = core.OrZero(s)
	if err := s.check(1, n); err != nil {
		return err
	}
	return s.add(ctx, n, "r")
}
