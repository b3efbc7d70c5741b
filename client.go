// Package distsync is a toolkit of Redisson-style distributed synchronization
// primitives on Redis: reentrant mutexes, read-write locks, fair locks,
// semaphores and countdown latches, composable with multilock and redlock.
//
// A Client is the factory: it owns one connection (a rueidis client), one
// lease watchdog that renews every lease its holders hold, and one pub/sub
// notifier that wakes its waiters. Handles such as Client.Mutex are cheap and
// make no I/O until used.
//
// Ownership travels in a context.Context: acquiring returns a context that
// carries the owner (acquiring again with it re-enters) and that is cancelled
// when the lease is lost. The README in the repository shows each primitive,
// how to connect and what an ACL user needs; docs/primitives.md is the
// reference of each primitive and docs/safety.md says what each deployment
// guarantees. How it works (leases, the watchdog, waiting, closing):
// docs/how-it-works.md.
package distsync

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/notify"
	"github.com/distsync/distsync/internal/renewal"
	"github.com/distsync/distsync/watchdog"
)

// MinLease is the shortest lease: an explicit lease (TryLock, TryAcquire),
// an Extend and a Watchdog.Lease below it return ErrInvalidArgument. A holder
// stops trusting a lease a margin before the server ends it (1% + 2 ms, for
// clock drift), and what is left must still cover the grant's round trip, so
// a shorter lease would be refused as late, which looks like contention.
// 10 ms holds on a local server; over a network, leave several round trips.
const MinLease time.Duration = core.MinLease

// Defaults.
const (
	DefaultPrefix       = "distsync:"
	DefaultLease        = watchdog.DefaultLease
	DefaultWaiterWindow = 30 * time.Second
	DefaultFlushDelay   = 20 * time.Microsecond
)

// Options configure a Client. The zero value of each field means its default.
type Options struct {
	// Addrs are the server addresses ("host:port"): one for a standalone
	// server, any nodes of a Cluster (detected automatically), or the
	// Sentinels when MasterName is set. Default "127.0.0.1:6379".
	Addrs []string
	// Username and Password authenticate (ACL or requirepass).
	Username string
	Password string
	// DB selects a database on a standalone server.
	DB int
	// TLS, when set, is used for every connection.
	TLS *tls.Config
	// MasterName is the Sentinel master set name; set it to connect through
	// Sentinel (Addrs are then the Sentinels).
	MasterName string
	// RESP2 is for servers that speak only RESP2, such as the in-process
	// server the demo uses: the connection speaks RESP2 and Cluster
	// detection is off (a single node). Not for Redis Cluster.
	RESP2 bool
	// Prefix starts every key; default "distsync:". It must not contain a
	// brace ('{' or '}'): each name is the hash tag of its primitive's keys,
	// and a brace in the prefix would put every name in one Cluster slot
	// (ErrInvalidArgument).
	Prefix string
	// Watchdog sets the lease watchdog: its lease, renewal interval and
	// batch size (package watchdog says how renewal works).
	Watchdog watchdog.Config
	// WaiterWindow is how long a waiter stays registered beyond the lease it
	// was told, and its longest sleep when no lease bounds it. Default 30 s.
	WaiterWindow time.Duration
	// ReplicaAck, when Replicas > 0, makes every acquisition and renewal
	// wait (Redis WAIT, at most Timeout) until that many replicas
	// acknowledged it: an acquisition too few acknowledged is undone and
	// returns ErrNotReplicated, a renewal does not count. It costs a
	// dedicated connection and a replication round trip per acquisition;
	// docs/safety.md says what it guards against.
	ReplicaAck ReplicaAck
	// Logger receives lost-lease and reconnect reports; default slog.Default().
	Logger *slog.Logger
	// Spin, when Max > 0, makes waiters poll with back-off (Min, doubling
	// up to Max) instead of subscribing, as Redisson's RSpinLock: for
	// deployments without SUBSCRIBE (some proxies). Each retry costs a round
	// trip and a release is noticed up to one back-off late (see
	// docs/how-it-works.md#spinning). Default off; WithSpin sets it for the
	// calls made with a context.
	Spin Spin
	// ClientName names the Client in every owner it makes ("<name>/<random
	// id>:<owner id>" in Redis), so that an operator sees which host or
	// process holds a lock. Default "<host name>-<pid>". Characters other
	// than letters, digits, '.', '_' and '-' are replaced by '_'.
	ClientName string
	// Observer, when set, is told of every acquisition, release, renewal
	// batch and lost lease (see Observer); it is copied when the Client is made.
	Observer *Observer
	// FlushDelay is how long the connection's writer may wait after each
	// write, while more than one request is in flight, for more requests
	// to send with the next (rueidis's MaxFlushDelay): under concurrency,
	// fewer system calls on both sides, so less CPU in the process and in
	// the server, for at most this much more latency; a lone request is
	// never delayed. Default 20 µs; negative writes at once. New only
	// (FromClient uses the caller's client as it is).
	FlushDelay time.Duration
}

// WithSpin returns ctx carrying s: the waits of the calls made with it (a
// Lock, TryLock, Acquire or Await, and what their contexts re-enter) poll
// with s's back-off instead of subscribing, whatever Options.Spin says, as
// Redisson's getSpinLock does for one lock; Spin{} makes them subscribe.
// Min defaults to 1 ms when Max is set. For a negative Min or Max, or Min
// above Max, the calls made with the returned context return
// ErrInvalidArgument instead of waiting (as context.WithValue, WithSpin
// itself returns no error).
func WithSpin(ctx context.Context, s Spin) context.Context {
	if s.Min < 0 || s.Max < 0 || (s.Max > 0 && s.Min > s.Max) {
		return core.WithSpin(ctx, core.Spin{Err: fmt.Errorf("%w: Spin %+v", ErrInvalidArgument, s)})
	}
	if s.Max > 0 && s.Min == 0 {
		s.Min = time.Millisecond
	}
	return core.WithSpin(ctx, core.Spin{Min: s.Min, Max: s.Max})
}

// Spin is the back-off of waiters that do not subscribe (Options.Spin and
// WithSpin).
type Spin struct {
	// Min is the first retry's delay (default 1 ms when Max is set); Max
	// the longest.
	Min, Max time.Duration
}

// ReplicaAck configures replica acknowledgement of acquisitions.
type ReplicaAck struct {
	// Replicas is how many replicas must acknowledge; 0 turns it off.
	Replicas int
	// Timeout bounds the wait for them; default 100 ms.
	Timeout time.Duration
}

// Client hands out distributed primitives that share one connection, one
// watchdog and one notifier. It is safe for concurrent use.
type Client struct {
	core     *core.Core
	notifier *notify.Notifier
	watchdog *renewal.Watchdog
	owned    bool // the rueidis client is ours to close
}

// New connects to Redis as opts say and returns a Client. Close it when done.
func New(opts Options) (*Client, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	rc, err := rueidis.NewClient(opts.rueidisOption())
	if err != nil {
		return nil, fmt.Errorf("distsync: connect: %w", err)
	}
	c := newClient(rc, opts)
	c.owned = true
	return c, nil
}

// rueidisOption is the rueidis client New makes for o.
func (o *Options) rueidisOption() rueidis.ClientOption {
	addrs := o.Addrs
	if len(addrs) == 0 {
		addrs = []string{"127.0.0.1:6379"}
	}
	ro := rueidis.ClientOption{
		// Commands go to a pooled connection of their own unless marked
		// for the pipeline; core.Eval marks scripts that run concurrently.
		DisableAutoPipelining: true,
		// distsync reads nothing through rueidis's client-side cache
		// (DoCache): without this, every RESP3 connection would send CLIENT
		// TRACKING and the server keep invalidation state for nothing.
		DisableCache: true,
		InitAddress:  addrs,
		Username:     o.Username,
		Password:     o.Password,
		SelectDB:     o.DB,
		TLSConfig:    o.TLS,
		// Under concurrency the pipeline's writer waits a little after
		// each write so that one write carries more requests (FlushDelay).
		MaxFlushDelay: DefaultFlushDelay,
	}
	if o.FlushDelay != 0 {
		ro.MaxFlushDelay = max(o.FlushDelay, 0)
	}
	if o.MasterName != "" {
		ro.Sentinel = rueidis.SentinelOption{MasterSet: o.MasterName, Username: o.Username, Password: o.Password, TLSConfig: o.TLS}
	}
	if o.RESP2 {
		ro.AlwaysRESP2 = true
		ro.DisableCache = true
		ro.ForceSingleClient = true
	}
	return ro
}

// FromClient returns a Client on a rueidis client the caller owns: Close
// stops distsync's watchdog and notifier but leaves rc open. Connection
// fields of opts (Addrs, credentials, TLS, MasterName, RESP2) are ignored.
func FromClient(rc rueidis.Client, opts Options) (*Client, error) {
	if rc == nil {
		return nil, fmt.Errorf("%w: nil rueidis client", ErrInvalidArgument)
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	return newClient(rc, opts), nil
}

func (o *Options) check() error {
	var errs []error
	if o.WaiterWindow < 0 {
		errs = append(errs, fmt.Errorf("%w: negative WaiterWindow %v", ErrInvalidArgument, o.WaiterWindow))
	}
	w := o.Watchdog
	if w.Lease < 0 {
		errs = append(errs, fmt.Errorf("%w: negative Watchdog.Lease %v", ErrInvalidArgument, w.Lease))
	}
	if w.Lease > 0 && w.Lease < MinLease {
		errs = append(errs, fmt.Errorf("%w: Lease %v is shorter than the minimum, %v", ErrInvalidArgument, w.Lease, MinLease))
	}
	if w.Lease == 0 {
		w.Lease = DefaultLease
	}
	if w.Interval < 0 || (w.Interval > 0 && w.Interval < time.Millisecond) || w.Interval > w.Lease/2 {
		errs = append(errs, fmt.Errorf("%w: Watchdog.Interval %v, want 1ms to half the lease (%v)", ErrInvalidArgument, w.Interval, w.Lease/2))
	}
	if w.SafetyMargin < 0 || w.SafetyMargin > w.Lease/4 {
		errs = append(errs, fmt.Errorf("%w: Watchdog.SafetyMargin %v, want 0 to a quarter of the lease (%v)", ErrInvalidArgument, w.SafetyMargin, w.Lease/4))
	}
	if w.BatchSize < 0 {
		errs = append(errs, fmt.Errorf("%w: negative Watchdog.BatchSize %d", ErrInvalidArgument, w.BatchSize))
	}
	if o.ReplicaAck.Replicas < 0 || o.ReplicaAck.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%w: negative ReplicaAck %+v", ErrInvalidArgument, o.ReplicaAck))
	}
	if o.Spin.Min < 0 || o.Spin.Max < 0 || (o.Spin.Max > 0 && o.Spin.Min > o.Spin.Max) {
		errs = append(errs, fmt.Errorf("%w: Spin %+v", ErrInvalidArgument, o.Spin))
	}
	if strings.ContainsAny(o.Prefix, "{}") {
		errs = append(errs, fmt.Errorf("%w: Prefix %q contains a brace, which would put every name in one Cluster slot", ErrInvalidArgument, o.Prefix))
	}
	if o.DB < 0 {
		errs = append(errs, fmt.Errorf("%w: negative DB %d", ErrInvalidArgument, o.DB))
	}
	return errors.Join(errs...)
}

func newClient(rc rueidis.Client, opts Options) *Client {
	cfg := core.Config{
		Client:       rc,
		ID:           clientName(opts.ClientName) + "/" + randomID(),
		Prefix:       opts.Prefix,
		Lease:        opts.Watchdog.Lease,
		WaiterWindow: opts.WaiterWindow,
		AckReplicas:  opts.ReplicaAck.Replicas,
		AckTimeout:   opts.ReplicaAck.Timeout,
		Log:          opts.Logger,
		Spin:         core.Spin{Min: opts.Spin.Min, Max: opts.Spin.Max},
	}
	if cfg.Spin.Max > 0 && cfg.Spin.Min <= 0 {
		cfg.Spin.Min = time.Millisecond
	}
	if cfg.AckReplicas > 0 && cfg.AckTimeout == 0 {
		cfg.AckTimeout = 100 * time.Millisecond
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.WaiterWindow == 0 {
		cfg.WaiterWindow = DefaultWaiterWindow
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	sharded := rc.Mode() == rueidis.ClientModeCluster
	c := &Client{
		notifier: notify.New(rc, sharded, cfg.Log),
		watchdog: renewal.New(rc, cfg.Lease, cfg.Log),
	}
	c.watchdog.Tune(opts.Watchdog.Interval, opts.Watchdog.BatchSize)
	if m := opts.Watchdog.SafetyMargin; m > 0 {
		c.watchdog.SetMargin(m)
	}
	if cfg.AckReplicas > 0 {
		c.watchdog.RequireReplicas(cfg.AckReplicas, cfg.AckTimeout)
	}
	if opts.Observer != nil {
		obs := &observer{o: *opts.Observer, log: cfg.Log}
		cfg.Observer = obs
		if obs.o.Renewed != nil {
			c.watchdog.OnBatch(obs.renewed)
		}
	}
	c.core = &core.Core{Config: cfg, Sharded: sharded, Notifier: c.notifier, Watchdog: c.watchdog}
	c.core.Init()
	return c
}

// ID returns the Client's identity, "<client name>/<random id>": every owner
// of this Client is named "<ID>:<owner id>" in Redis.
func (c *Client) ID() string {
	if c.cc() == nil {
		return ""
	}
	return c.core.ID
}

// cc returns the Client's core, or nil for a nil or zero Client, whose
// calls then return errors wrapping ErrInvalidArgument (core.ErrNoClient).
func (c *Client) cc() *core.Core {
	if c == nil {
		return nil
	}
	return c.core
}

// clientName returns name, or "<host name>-<pid>" when it is empty, with
// the characters an owner name must not carry replaced by '_'.
func clientName(name string) string {
	if name == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "host"
		}
		name = host + "-" + strconv.Itoa(os.Getpid())
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, name)
}

// randomID returns 96 random bits in 16 characters (base64url): a Client's
// id is in every owner stored in Redis, twice in each held lock's hash, so
// it is kept short (a UUID takes 36).
func randomID() string {
	var b [12]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Rueidis returns the underlying rueidis client.
func (c *Client) Rueidis() rueidis.Client {
	if c.cc() == nil {
		return nil
	}
	return c.core.Client
}

// Close gives back every hold and permit of the Client (one pipelined
// burst of releases, bounded by a second) and ends their contexts with a
// cause wrapping ErrClosed; waiters return ErrClosed, and a grant that
// lands meanwhile is given back too. It then closes the connection if New
// made it, and returns when every goroutine of the Client has ended. A
// holder that crashes instead keeps its locks until their leases end (see
// docs/how-it-works.md#closing).
func (c *Client) Close() {
	if c.cc().Closed() != nil {
		return
	}
	c.core.SetClosed()
	c.notifier.Close()
	c.watchdog.Close()
	c.core.Holds.GiveBack(core.CloseGiveBack, fmt.Errorf("%w: its holds were given back", ErrClosed))
	c.core.WaitJobs(core.CloseGrace)
	if c.owned {
		c.core.Client.Close()
	}
}
