package core

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/observe"
)

// MaxNameLen bounds a primitive's name in bytes.
const MaxNameLen = 1024

// Config is what a Client hands to every primitive it creates.
type Config struct {
	Client rueidis.Client
	// ID identifies the Client; owners are "<ID>:<owner id>".
	ID string
	// Prefix starts every key, e.g. "distsync:".
	Prefix string
	// Lease is the watchdog lease given to holds without an explicit lease.
	Lease time.Duration
	// WaiterWindow is how long a waiter stays registered after its last attempt
	// beyond the remaining lease it was told; it is also its longest sleep when
	// no lease bounds the wait.
	WaiterWindow time.Duration
	// AckReplicas, when > 0, makes every acquisition wait (WAIT) until that
	// many replicas acknowledged it, at most AckTimeout.
	AckReplicas int
	AckTimeout  time.Duration
	Log         *slog.Logger
	// StarveAfter is how long the oldest waiter of a mutex may wait before a
	// release grants the lock to it directly instead of letting a running
	// owner barge in (sync.Mutex's starvation mode). 0: DefaultStarveAfter,
	// which grants always.
	StarveAfter time.Duration
	// HandoffLease bounds the lease of a lock a release granted to a waiter
	// until the waiter's renewal (or confirmation) extends it: a waiter that
	// vanished keeps it at most that long. 0: DefaultHandoffLease. No
	// option sets these two; mutex's tests change them (mutex.Tune).
	HandoffLease time.Duration
	// Spin, when Max > 0, makes waiters poll with back-off instead of
	// subscribing to notifications.
	Spin Spin
	// Observer, when not nil, is told of acquisitions, releases and losses.
	Observer Observer
}

// Defaults of Config's hand-off settings.
const (
	DefaultStarveAfter  = 0 // a release grants the lock to a queued waiter always
	DefaultHandoffLease = time.Second
)

// Spin is the back-off of waiters that do not subscribe: the first retry
// after Min, each next one after twice as long, at most Max. Err, when set,
// is why the Spin a call asked for is invalid: its waits return it.
type Spin struct {
	Min, Max time.Duration
	Err      error
}

type spinKey struct{}

// WithSpin returns ctx carrying s, which overrides the Client's Spin for
// the waits of the calls made with it (Max 0: subscribe).
func WithSpin(ctx context.Context, s Spin) context.Context {
	return context.WithValue(ctx, spinKey{}, s)
}

// SpinOf returns the Spin ctx carries, if any.
func SpinOf(ctx context.Context) (Spin, bool) {
	s, ok := ctx.Value(spinKey{}).(Spin)
	return s, ok
}

// Core is the per-Client environment every primitive shares: the Redis client,
// the identity, the notifier and the watchdog.
type Core struct {
	Config
	// Sharded is true on Redis Cluster: notifications use SSUBSCRIBE/SPUBLISH.
	Sharded  bool
	Notifier Notifier
	Watchdog Watchdog
	Holds    *Holds
	closed   atomic.Bool
	inflight atomic.Int64 // scripts running through Eval
	fence    string       // the fencing counter off a Cluster, made once (Init)

	// Operations and background jobs Close waits for (jobs.go).
	jobsMu   sync.Mutex
	jobs     int
	idle     chan struct{} // closed when jobs falls to 0 during Close
	jobsDone bool          // Close has stopped waiting: Go runs nothing
	jobCtx   context.Context
	jobStop  context.CancelCauseFunc

	// The control channel's subscription (WatchControl).
	ctlMu   sync.Mutex
	ctlUp   atomic.Bool
	ctlBusy bool      // a subscription is being made
	ctlNext time.Time // no new try before
}

// Init completes a Core made from a Config: its registry of holds and the
// context of its background jobs.
func (c *Core) Init() {
	if c.StarveAfter == 0 {
		c.StarveAfter = DefaultStarveAfter
	}
	if c.HandoffLease == 0 {
		c.HandoffLease = DefaultHandoffLease
	}
	c.Holds = NewHolds(c)
	if !c.Sharded {
		c.fence = c.Prefix + "fence"
	}
	c.jobCtx, c.jobStop = context.WithCancelCause(context.Background())
}

// Notifier is the pub/sub fan-out the acquire loop waits on (internal/notify).
type Notifier interface {
	Subscribe(ctx context.Context, channel, waiter string) (Subscription, error)
	// Join is Subscribe when the channel's subscription is up already (it
	// then costs no round trip); otherwise it returns nil.
	Join(channel, waiter string) Subscription
	// SubscribeClassic is Subscribe with SUBSCRIBE on Cluster too (see
	// Core.WatchControl).
	SubscribeClassic(ctx context.Context, channel, waiter string) (Subscription, error)
}

// Subscription is one local waiter's view of a channel.
type Subscription interface {
	// C receives a value when the waiter should look at Take.
	C() <-chan struct{}
	// Take returns, and forgets, what the signals on C said: the data of a
	// grant made to this waiter by a release ("" when none), whether it was
	// woken to try again, and whether it was only nudged as the next in
	// line (it then bounds its sleep by Config.HandoffLease).
	Take() (grant string, woken, nudged bool)
	// Done is closed when no subscription can come back: the notifier
	// closed (its Client was closed), or the rueidis client under it.
	Done() <-chan struct{}
	Close()
}

// Watchdog renews leases (package watchdog).
type Watchdog interface {
	// Add registers a hold whose lease was granted by a request sent at
	// sentAt, renewed to lease each time (0: the watchdog lease), and
	// granted for first when that is shorter (0: lease).
	Add(l Lease, sentAt time.Time, lease, first time.Duration) Entry
	Remove(e Entry)
	// Trust is how long after the send of the request that granted or
	// extended it a lease of lease, explicit or renewed, is trusted: its
	// deadline, less the send.
	Trust(lease time.Duration) time.Duration
}

// Lease is what the watchdog renews: a hold.
type Lease interface {
	// Renewal is what extends the lease, asked for at each renewal (so
	// that nothing of it is kept between renewals).
	Renewal() Renewal
	// What names the lease in logs, e.g. `mutex "orders"`.
	What() string
	// Kind is the kind of primitive it holds and, for a read-write lock,
	// its side.
	Kind() (kind observe.Kind, side string)
	// Lost is called once when the lease is lost, with a cause wrapping
	// ErrLeaseLost. It ends what the lease covers at once (it must not
	// block) and returns what reports the loss (logs, observers; nil when
	// there is nothing to report), which the watchdog calls after ending
	// every lease lost with it.
	Lost(cause error) (report func())
}

// Entry is a lease registered with the watchdog.
type Entry interface {
	// Lapsed reports whether the lease's deadline has passed by this
	// process's clock; when it has, the lease is ended (Lease.Lost) before
	// Lapsed returns, whether or not the watchdog's timer has run yet.
	Lapsed() bool
}

// Renewal is what the watchdog runs to extend one lease by the watchdog lease:
// Script with Keys and Args (which include that lease), replying 1 when the
// lease was extended and 0 when it is gone or held by another owner.
type Renewal struct {
	Script *Script
	Keys   []string
	Args   []string
}

// SetClosed marks the core closed; every later call returns ErrClosed.
func (c *Core) SetClosed() {
	c.jobsMu.Lock()
	defer c.jobsMu.Unlock()
	c.closed.Store(true)
}

// Closed reports ErrClosed after Close, and ErrNoClient on a nil Core: every
// call checks it first, so a handle that no Client made (a nil pointer or a
// zero value) returns an error rather than panic.
func (c *Core) Closed() error {
	if c == nil {
		return ErrNoClient
	}
	if c.closed.Load() {
		return ErrClosed
	}
	return nil
}

// PublishCmd is the command scripts use to notify waiters.
func (c *Core) PublishCmd() string {
	if c.Sharded {
		return "SPUBLISH"
	}
	return "PUBLISH"
}

// ValidateName reports ErrInvalidName for names that are empty, longer than
// MaxNameLen, not UTF-8, contain a brace (which would break the hash tag
// that keeps a primitive's keys in one Cluster slot) or a control character
// (a line break or an escape, which would fake lines where a name is
// printed).
func ValidateName(name string) error {
	if len(name) > 0 && len(name) <= MaxNameLen && printableASCII(name) {
		return nil // the common case, without validateName's UTF-8 and Unicode checks
	}
	return validateName(name)
}

// validateName is ValidateName without its shortcut.
func validateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidName, len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidName)
	case strings.ContainsAny(name, "{}"):
		return fmt.Errorf("%w: %q contains a brace", ErrInvalidName, name)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %q contains a control character", ErrInvalidName, name)
	}
	return nil
}

// printableASCII reports whether s has only printable ASCII characters
// but braces: a valid name when its length is.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b >= 0x7f || b == '{' || b == '}' {
			return false
		}
	}
	return true
}

// Key returns the key of a primitive: prefix, the name as hash tag, then the
// suffix: "distsync:{orders}" or "distsync:{orders}:waiters".
func (c *Core) Key(name, suffix string) string {
	if suffix == "" {
		return c.Prefix + "{" + name + "}"
	}
	return c.Prefix + "{" + name + "}:" + suffix
}

// KeyWith returns c.Key(name, suffix) and, as its start, c.Key(name, ""):
// one string in memory for a handle that keeps both.
func (c *Core) KeyWith(name, suffix string) (withSuffix, key string) {
	s := c.Key(name, suffix)
	if suffix == "" {
		return s, s
	}
	return s, s[:len(s)-1-len(suffix)]
}

// SubKeys returns, for each suffix, key + ":" + suffix (key itself for ""):
// with key = c.Key(name, ""), those of c.Key(name, suffix). It builds them in
// one allocation, so that a handle may keep its main key alone and derive the
// others when a script needs them.
func SubKeys(key string, suffixes ...string) []string {
	n := 0
	for _, s := range suffixes {
		if s != "" {
			n += len(key) + 1 + len(s)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range suffixes {
		if s != "" {
			b.WriteString(key)
			b.WriteByte(':')
			b.WriteString(s)
		}
	}
	all, keys := b.String(), make([]string, len(suffixes))
	for i, s := range suffixes {
		if s == "" {
			keys[i] = key
			continue
		}
		l := len(key) + 1 + len(s)
		keys[i], all = all[:l], all[l:]
	}
	return keys
}

// Ms renders a duration as whole milliseconds for a script argument (at least 1).
// The few values a Client sends on every call (its leases, windows and
// lifetimes) come from a small cache, without an allocation.
func Ms(d time.Duration) string {
	ms := d.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	slot := &msCache[uint64(ms)%uint64(len(msCache))]
	if e := slot.Load(); e != nil && e.ms == ms {
		return e.s
	}
	s := strconv.FormatInt(ms, 10)
	slot.Store(&msEntry{ms, s})
	return s
}

// msCache holds the latest rendering of Ms per slot.
var msCache [64]atomic.Pointer[msEntry]

type msEntry struct {
	ms int64
	s  string
}

// epoch is the origin of Mono.
var epoch = time.Now()

// Mono returns t as a duration since an instant of the process's start, by
// the monotonic clock when t has its reading (as time.Now's do): an instant
// in 8 bytes instead of time.Time's 24, for what is kept per held lease.
func Mono(t time.Time) time.Duration { return t.Sub(epoch) }

// Forever is the wait that lasts until the caller's context is done.
const Forever time.Duration = -1

// MinLease is the shortest lease distsync grants: a holder's view of a
// lease, explicit or renewed, ends Drift(lease) and the watchdog's safety
// margin (at most lease/4) before the server's, and what is left must still
// cover a round trip, so a shorter one would be refused as a late grant,
// like contention. It is also the shortest watchdog lease.
const MinLease = 10 * time.Millisecond

// CheckDuration returns ErrInvalidArgument for a negative duration, but
// Forever as a wait, and for a lease > 0 shorter than MinLease.
func CheckDuration(what string, d time.Duration) error {
	if d < 0 && !(what == "wait" && d == Forever) {
		return fmt.Errorf("%w: negative %s %v", ErrInvalidArgument, what, d)
	}
	if what == "lease" && d > 0 && d < MinLease {
		return fmt.Errorf("%w: lease %v is shorter than the minimum, %v", ErrInvalidArgument, d, MinLease)
	}
	return nil
}

// IOContext is the context for a release or cleanup: it keeps the values of
// ctx (the owner) but not its cancellation, and is bounded by timeout.
func IOContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	return UntilDetached(ctx, time.Now().Add(timeout))
}

// ReleaseTimeout bounds a release made on behalf of a cancelled context.
const ReleaseTimeout = 5 * time.Second

// Unwait removes waiter from the waiter set at key: a waiter that gave up.
func (c *Core) Unwait(ctx context.Context, key, waiter string) error {
	return c.Client.Do(ctx, c.Client.B().Zrem().Key(key).Member(waiter).Build()).Error()
}

// Eval runs s on the Client's connection: the one way primitives run their
// scripts.
//
// A script that runs alone goes straight to a connection of its own, read
// and written by the calling goroutine; scripts that run concurrently share
// the auto-pipelined connection. On a Client made by New (which turns off
// rueidis's auto-pipelining for commands not marked for it) that saves the
// pipeline's goroutine hand-offs on every lone call, about a third of a
// round trip on loopback, and keeps pipelining under load. On a rueidis
// client with auto-pipelining on, every script is pipelined.
func (c *Core) Eval(ctx context.Context, s *Script, keys, args []string) rueidis.RedisResult {
	return s.run(ctx, c, keys, args)
}

// EvalKind is Eval of s for a primitive of kind whose hash is hash: in the
// same script, before s, a hash of another kind is refused (ErrWrongKind,
// as is a key of another type). hash and kind are passed as the last key
// and argument, after keys and args: the read calls, whose scripts do not
// check the kind themselves, run this way.
func (c *Core) EvalKind(ctx context.Context, s *Script, kind observe.Kind, hash string, keys, args []string) rueidis.RedisResult {
	keys = append(keys[:len(keys):len(keys)], hash)
	args = append(args[:len(args):len(args)], string(kind))
	return c.Eval(ctx, s.kinded(), keys, args)
}

// EvalAcquire runs a script that may grant something. Without replica
// acknowledgement it is Eval. With it, the script and a WAIT for
// AckReplicas replicas run back to back on one connection (so WAIT covers
// the script's writes), and when fewer replicas acknowledged in AckTimeout it
// returns the script's result with an error wrapping ErrNotReplicated: the
// caller must then undo what the script granted.
func (c *Core) EvalAcquire(ctx context.Context, s *Script, keys, args []string) (rueidis.RedisResult, error) {
	if c.AckReplicas <= 0 {
		return c.Eval(ctx, s, keys, args), nil
	}
	var res rueidis.RedisResult
	var acked int64
	err := c.Client.Dedicated(func(d rueidis.DedicatedClient) error {
		wait := d.B().Wait().Numreplicas(int64(c.AckReplicas)).Timeout(max(c.AckTimeout.Milliseconds(), 1)).Build()
		rs := d.DoMulti(ctx, s.EvalSHA(d, keys, args), wait)
		if IsNoScript(rs[0].Error()) {
			wait = d.B().Wait().Numreplicas(int64(c.AckReplicas)).Timeout(max(c.AckTimeout.Milliseconds(), 1)).Build()
			rs = d.DoMulti(ctx, s.Eval(d, keys, args), wait)
		}
		res = rs[0]
		if err := res.Error(); err != nil {
			return nil // the script's own error is in res
		}
		var err error
		acked, err = rs[1].AsInt64()
		return err
	})
	if err != nil {
		return res, err
	}
	res = scriptResult(res)
	if res.Error() == nil && acked < int64(c.AckReplicas) {
		return res, fmt.Errorf("%w: %d of %d replicas in %v", ErrNotReplicated, acked, c.AckReplicas, c.AckTimeout)
	}
	return res, nil
}
