// Package distsyncotel records what distsync's locks and semaphores do as
// OpenTelemetry metrics and spans. Give the Observer that NewObserver
// returns to a Client:
//
//	obs, err := distsyncotel.NewObserver()
//	...
//	c, err := distsync.New(distsync.Options{Addrs: addrs, Observer: obs})
//
// It is a module of its own, so that the library's importers do not get
// OpenTelemetry. For spans of the Redis commands themselves, hand distsync
// a rueidisotel client through distsync.FromClient (see the README).
//
// Each acquisition and each release is a span, and metrics count and time
// acquisitions, holds, lost leases and renewals: NewObserver lists them, the
// attribute keys say what each attribute means. An acquisition not granted
// because the lock was taken or its context ended is an outcome, not an
// error. The meter's and the tracer's instrumentation scope is ScopeName,
// with the module's version (Version).
package distsyncotel

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/distsync/distsync"
)

// ScopeName is the instrumentation scope of the meter and the tracer: the
// module's path.
const ScopeName = "github.com/distsync/distsync/otel"

// Version is the version of this module the program was built with, as the
// instrumentation scope carries it: the module version ("v0.1.0"); for a
// build from distsync's own source tree (a go.work workspace, a replace),
// "devel+" and the VCS revision and time when the build recorded them
// ("devel+4f2a9c1e8d3b 2026-11-25T21:30:00Z"), else "devel".
func Version() string { return version(debug.ReadBuildInfo()) }

func version(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "devel"
	}
	v := ""
	if bi.Main.Path == ScopeName {
		v = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == ScopeName {
			v = d.Version
			if d.Replace != nil {
				v = d.Replace.Version
			}
		}
	}
	if v != "" && v != "(devel)" {
		return v
	}
	// A source build: the revision is this module's only when the program
	// is built from distsync's repository.
	var rev, at string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case "vcs.time":
			at = s.Value
		}
	}
	if rev == "" || !strings.HasPrefix(bi.Main.Path, repoPath) {
		return "devel"
	}
	return strings.TrimSpace(fmt.Sprintf("devel+%s %s", rev, at))
}

// repoPath is the path of the repository's root module.
const repoPath = "github.com/distsync/distsync"

// Attribute keys. Every metric but distsync.renewal.duration carries
// KindKey; all but the renewals' carry SideKey for a read-write lock, and
// NameKey with WithNameAttribute. Their values:
//
//   - KindKey: the primitive's kind, a distsync.Kind (mutex, rwlock,
//     permitsemaphore, ...).
//   - SideKey: a read-write lock's side, read or write.
//   - NameKey: the primitive's name; always on spans.
//   - OutcomeKey: of an acquisition, acquired; not_acquired (the wait budget
//     was spent, as a TryLock with no wait that finds the lock taken);
//     canceled (the context ended first); error (anything else, with
//     ErrorTypeKey). Of a renewal, renewed or failed (failed on the
//     network, retried until the lease's deadline, or found the lease gone).
//   - ContendedKey: whether the acquisition found the primitive held, so it
//     waited or, with no wait, was turned away, or took it over.
//   - TakeOverKey: true only on a ForceLock that replaced another owner's
//     hold.
//   - TokenKey: a granted lock's fencing token, on its acquisition's span.
//   - EndKey: how an acquisition ended: released, not_held (the server no
//     longer held it), release_failed (no release attempt got an answer),
//     lost, expired (an explicit lease ran out) or closed (Client.Close).
//   - CauseKey: why an acquisition ended without a release: lost, expired
//     or closed.
//   - HeldForKey: on a release's span, how long the acquisition was held, in
//     seconds (the span lasts only the release).
//   - AutoKey: on a release's span, whether distsync released the
//     acquisition because the context it was made on ended.
const (
	KindKey      = attribute.Key("distsync.kind")
	SideKey      = attribute.Key("distsync.side")
	NameKey      = attribute.Key("distsync.name")
	OutcomeKey   = attribute.Key("distsync.outcome")
	ContendedKey = attribute.Key("distsync.contended")
	EndKey       = attribute.Key("distsync.end")
	CauseKey     = attribute.Key("distsync.cause")
	TokenKey     = attribute.Key("distsync.token")
	TakeOverKey  = attribute.Key("distsync.take_over")
	HeldForKey   = attribute.Key("distsync.held_for") // seconds, on a release's span
	AutoKey      = attribute.Key("distsync.auto")
	// ErrorTypeKey is OpenTelemetry's error.type: see errorType.
	ErrorTypeKey = attribute.Key("error.type")
)

// Buckets are the histograms' bucket boundaries, in seconds: from a
// millisecond (an uncontended acquisition on a near server) to five minutes
// (a long hold).
var Buckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// Option configures NewObserver.
type Option func(*config)

type config struct {
	mp    metric.MeterProvider
	tp    trace.TracerProvider
	names bool
}

// WithMeterProvider records metrics with mp instead of the global
// MeterProvider.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithTracerProvider records spans with tp instead of the global
// TracerProvider.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithNameAttribute adds the primitive's name (distsync.name) to the
// metrics' attributes. Every name then makes series of its own: use it only
// when a process uses a bounded set of names. Spans always carry the name.
func WithNameAttribute() Option { return func(c *config) { c.names = true } }

// recorder holds the instruments.
type recorder struct {
	names    bool
	tracer   trace.Tracer
	acquired metric.Float64Histogram
	hold     metric.Float64Histogram
	held     metric.Int64UpDownCounter
	lost     metric.Int64Counter
	renewals metric.Int64Counter
	renewal  metric.Float64Histogram
}

// NewObserver returns an Observer that records distsync's metrics and
// spans. One Observer may serve several Clients; their metrics add up. It
// returns an error when an instrument cannot be made.
//
// Durations are in seconds, said by each metric's unit, and a histogram of
// how long something took is named *.duration, as OpenTelemetry's
// conventions name them (db.client.operation.duration). The metrics (the
// attribute keys say which attributes each carries):
//
//   - distsync.acquire.duration (histogram, s): how long each acquisition
//     took, until granted or given up; its count is the acquisitions. With
//     OutcomeKey, ContendedKey and TakeOverKey.
//   - distsync.hold.duration (histogram, s): how long each acquisition was
//     held, with EndKey.
//   - distsync.held (up-down counter): acquisitions held now; a counting
//     semaphore's permits, owned by nobody, are not counted.
//   - distsync.leases.lost (counter): acquisitions that ended without a
//     release, with CauseKey.
//   - distsync.renewals (counter): watchdog renewals, with KindKey and
//     OutcomeKey.
//   - distsync.renewal.duration (histogram, s): the round trip of each
//     batch of renewals; a batch renews leases of every kind, so it has no
//     KindKey.
//
// Each acquisition is a span "distsync.acquire <kind>", a child of the
// context passed to Lock or Acquire, from the start of the call to the grant
// or the end of the wait (the span's duration is the wait), with KindKey,
// SideKey, NameKey, OutcomeKey, ContendedKey, TakeOverKey and, when granted,
// TokenKey. Not being granted (not_acquired, canceled) is an outcome, not an
// error: a cron job's skip is no failure. Only an error (a wrong kind, a
// closed Client, the network) sets the span's status to Error, records the
// error and sets ErrorTypeKey. Each release of a lock or of a permit is a
// span "distsync.release <kind>", a child of the context passed to Unlock
// (or Release), for the release's round trips, with KindKey, SideKey,
// NameKey, EndKey, AutoKey and HeldForKey; a release that found the
// acquisition no longer held, or that got no answer, is an error with
// error.type not_held or release_failed.
func NewObserver(opts ...Option) (*distsync.Observer, error) {
	cfg := config{mp: otel.GetMeterProvider(), tp: otel.GetTracerProvider()}
	for _, o := range opts {
		o(&cfg)
	}
	v := Version()
	m := cfg.mp.Meter(ScopeName, metric.WithInstrumentationVersion(v))
	r := &recorder{names: cfg.names, tracer: cfg.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(v))}
	var errs []error
	hist := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(Buckets...))
		errs = append(errs, err)
		return h
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	r.acquired = hist("distsync.acquire.duration", "How long an acquisition took until granted or given up, by outcome and whether it found the primitive held.")
	r.hold = hist("distsync.hold.duration", "How long an acquisition was held.")
	r.renewal = hist("distsync.renewal.duration", "The round trip of a batch of watchdog renewals.")
	r.lost = counter("distsync.leases.lost", "{acquisition}", "Acquisitions that ended without a release: lost, expired or closed.")
	r.renewals = counter("distsync.renewals", "{renewal}", "Watchdog renewals, by outcome.")
	var err error
	r.held, err = m.Int64UpDownCounter("distsync.held", metric.WithUnit("{acquisition}"), metric.WithDescription("Acquisitions held now."))
	if err := errors.Join(append(errs, err)...); err != nil {
		return nil, err
	}
	return &distsync.Observer{
		Acquired: r.acquire,
		Released: r.release,
		Renewed:  r.renew,
		Lost:     r.lose,
	}, nil
}

// attrs returns the attributes of a primitive's metrics, then more.
func (r *recorder) attrs(kind distsync.Kind, side, name string, more ...attribute.KeyValue) metric.MeasurementOption {
	kv := append(make([]attribute.KeyValue, 0, 3+len(more)), KindKey.String(string(kind)))
	if side != "" {
		kv = append(kv, SideKey.String(side))
	}
	if r.names {
		kv = append(kv, NameKey.String(name))
	}
	return metric.WithAttributes(append(kv, more...)...)
}

func (r *recorder) acquire(ctx context.Context, i distsync.AcquireInfo) {
	outcome, errType := "acquired", ""
	switch {
	case i.Err == nil:
	case errors.Is(i.Err, distsync.ErrNotAcquired):
		outcome = "not_acquired"
	case errors.Is(i.Err, context.Canceled), errors.Is(i.Err, context.DeadlineExceeded):
		outcome = "canceled"
	default:
		outcome, errType = "error", errorType(i.Err)
	}
	more := []attribute.KeyValue{OutcomeKey.String(outcome), ContendedKey.Bool(i.Contended)}
	if i.TakeOver {
		more = append(more, TakeOverKey.Bool(true))
	}
	if errType != "" {
		more = append(more, ErrorTypeKey.String(errType))
	}
	r.acquired.Record(ctx, i.Wait.Seconds(), r.attrs(i.Kind, i.Side, i.Name, more...))
	if i.Err == nil && i.Kind != distsync.KindSemaphore {
		r.held.Add(ctx, 1, r.attrs(i.Kind, i.Side, i.Name))
	}

	_, span := r.tracer.Start(ctx, "distsync.acquire "+string(i.Kind),
		trace.WithTimestamp(i.Start),
		trace.WithAttributes(append(spanAttrs(i.Kind, i.Side, i.Name), more...)...))
	if i.Err == nil && i.Token != 0 {
		span.SetAttributes(TokenKey.Int64(i.Token))
	}
	if errType != "" {
		span.RecordError(i.Err)
		span.SetStatus(codes.Error, i.Err.Error())
	}
	span.End(trace.WithTimestamp(i.Start.Add(i.Wait)))
}

func (r *recorder) release(ctx context.Context, i distsync.ReleaseInfo) {
	end := "released"
	switch {
	case errors.Is(i.Err, distsync.ErrNotHeld):
		end = "not_held"
	case i.Err != nil:
		end = "release_failed"
	}
	r.ended(ctx, i.Kind, i.Side, i.Name, i.Held.Seconds(), end)

	start := i.Start
	if start.IsZero() {
		start = time.Now()
	}
	_, span := r.tracer.Start(ctx, "distsync.release "+string(i.Kind),
		trace.WithTimestamp(start),
		trace.WithAttributes(append(spanAttrs(i.Kind, i.Side, i.Name),
			EndKey.String(end), AutoKey.Bool(i.Auto), HeldForKey.Float64(i.Held.Seconds()))...))
	if i.Err != nil {
		span.SetAttributes(ErrorTypeKey.String(end))
		span.RecordError(i.Err)
		span.SetStatus(codes.Error, i.Err.Error())
	}
	span.End()
}

// spanAttrs are a span's attributes naming the primitive.
func spanAttrs(kind distsync.Kind, side, name string) []attribute.KeyValue {
	kv := []attribute.KeyValue{KindKey.String(string(kind)), NameKey.String(name)}
	if side != "" {
		kv = append(kv, SideKey.String(side))
	}
	return kv
}

// errorType is error.type for an acquisition's error: the distsync
// sentinel it wraps, in snake case ("wrong_kind", "closed",
// "invalid_argument", ...), else the type of the innermost error it wraps
// ("*net.OpError"), else "_OTHER", as OpenTelemetry's conventions ask.
func errorType(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	if t := fmt.Sprintf("%T", err); t != "*errors.errorString" && t != "*fmt.wrapError" && t != "*fmt.wrapErrors" && t != "*errors.joinError" {
		return t
	}
	return "_OTHER"
}

// sentinels are the errors errorType names.
var sentinels = []struct {
	err  error
	name string
}{
	{distsync.ErrClosed, "closed"},
	{distsync.ErrWrongKind, "wrong_kind"},
	{distsync.ErrInvalidName, "invalid_name"},
	{distsync.ErrInvalidArgument, "invalid_argument"},
	{distsync.ErrUpgrade, "upgrade"},
	{distsync.ErrNotHeld, "not_held"},
	{distsync.ErrLeaseLost, "lease_lost"},
	{distsync.ErrLeaseExpired, "lease_expired"},
	{distsync.ErrNotSet, "not_set"},
	{distsync.ErrNotReplicated, "not_replicated"},
}

func (r *recorder) lose(i distsync.LostInfo) {
	cause := "lost"
	switch {
	case errors.Is(i.Cause, distsync.ErrLeaseExpired):
		cause = "expired"
	case errors.Is(i.Cause, distsync.ErrClosed):
		cause = "closed"
	}
	ctx := context.Background()
	r.lost.Add(ctx, 1, r.attrs(i.Kind, i.Side, i.Name, CauseKey.String(cause)))
	r.ended(ctx, i.Kind, i.Side, i.Name, i.Held.Seconds(), cause)
}

// ended records the end of an acquisition held for held seconds.
func (r *recorder) ended(ctx context.Context, kind distsync.Kind, side, name string, held float64, end string) {
	r.hold.Record(ctx, held, r.attrs(kind, side, name, EndKey.String(end)))
	r.held.Add(ctx, -1, r.attrs(kind, side, name))
}

func (r *recorder) renew(i distsync.RenewInfo) {
	ctx := context.Background()
	for _, k := range i.ByKind {
		if n := k.Leases - k.Failed; n > 0 {
			r.renewals.Add(ctx, int64(n), metric.WithAttributes(KindKey.String(string(k.Kind)), OutcomeKey.String("renewed")))
		}
		if k.Failed > 0 {
			r.renewals.Add(ctx, int64(k.Failed), metric.WithAttributes(KindKey.String(string(k.Kind)), OutcomeKey.String("failed")))
		}
	}
	r.renewal.Record(ctx, i.Latency.Seconds())
}
