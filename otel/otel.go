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
// # Metrics
//
// Durations are in seconds. Every metric but the renewals' carries
// distsync.kind (one of the distsync.Kind constants), and distsync.name
// with WithNameAttribute.
//
//   - distsync.acquire.wait (histogram, s): how long each acquisition
//     waited, with distsync.outcome (acquired, not_acquired, canceled,
//     error) and distsync.contended (whether it had to wait).
//   - distsync.acquisitions (counter): acquisitions, with distsync.outcome.
//   - distsync.acquisitions.contended (counter): acquisitions that found
//     the primitive held and had to wait (or, with no wait, were turned
//     away), with distsync.outcome.
//   - distsync.hold.duration (histogram, s): how long each acquisition was
//     held, with distsync.end: released, not_held (the server no longer
//     held it), release_failed (no release attempt got an answer), lost,
//     expired (an explicit lease ran out) or closed (Client.Close).
//   - distsync.held (up-down counter): acquisitions held now; a counting
//     semaphore's permits, owned by nobody, are not counted.
//   - distsync.leases.lost (counter): acquisitions that ended without a
//     release, with distsync.cause: lost, expired or closed.
//   - distsync.renewals (counter): watchdog renewals, with distsync.outcome
//     renewed or failed (failed on the network, retried until the lease's
//     deadline, or found the lease gone).
//   - distsync.renewal.latency (histogram, s): the round trip of each
//     batch of renewals.
//
// # Spans
//
// Each acquisition is a span "distsync.acquire <kind>", a child of the
// context passed to Lock or Acquire, from the start of the call to the
// grant (or the failure, recorded as the span's error), with the
// attributes distsync.kind, distsync.name, distsync.contended,
// distsync.wait_seconds and, when granted, distsync.token (the fencing
// token of a lock).
package distsyncotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/distsync/distsync"
)

// ScopeName is the instrumentation scope of the meter and the tracer.
const ScopeName = "github.com/distsync/distsync/otel"

// Attribute keys.
const (
	KindKey      = attribute.Key("distsync.kind")
	SideKey      = attribute.Key("distsync.side")
	NameKey      = attribute.Key("distsync.name")
	OutcomeKey   = attribute.Key("distsync.outcome")
	ContendedKey = attribute.Key("distsync.contended")
	EndKey       = attribute.Key("distsync.end")
	CauseKey     = attribute.Key("distsync.cause")
	TokenKey     = attribute.Key("distsync.token")
	WaitKey      = attribute.Key("distsync.wait_seconds")
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
	names     bool
	tracer    trace.Tracer
	wait      metric.Float64Histogram
	hold      metric.Float64Histogram
	acquired  metric.Int64Counter
	contended metric.Int64Counter
	held      metric.Int64UpDownCounter
	lost      metric.Int64Counter
	renewals  metric.Int64Counter
	latency   metric.Float64Histogram
}

// NewObserver returns an Observer that records distsync's metrics and
// spans (see the package documentation). One Observer may serve several
// Clients; their metrics add up. It returns an error when an instrument
// cannot be made.
func NewObserver(opts ...Option) (*distsync.Observer, error) {
	cfg := config{mp: otel.GetMeterProvider(), tp: otel.GetTracerProvider()}
	for _, o := range opts {
		o(&cfg)
	}
	m := cfg.mp.Meter(ScopeName)
	r := &recorder{names: cfg.names, tracer: cfg.tp.Tracer(ScopeName)}
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
	r.wait = hist("distsync.acquire.wait", "How long an acquisition waited until granted or given up.")
	r.hold = hist("distsync.hold.duration", "How long an acquisition was held.")
	r.latency = hist("distsync.renewal.latency", "The round trip of a batch of watchdog renewals.")
	r.acquired = counter("distsync.acquisitions", "{acquisition}", "Acquisitions, by outcome.")
	r.contended = counter("distsync.acquisitions.contended", "{acquisition}", "Acquisitions that found the primitive held.")
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
	outcome := "acquired"
	switch {
	case errors.Is(i.Err, distsync.ErrNotAcquired):
		outcome = "not_acquired"
	case errors.Is(i.Err, context.Canceled), errors.Is(i.Err, context.DeadlineExceeded):
		outcome = "canceled"
	case i.Err != nil:
		outcome = "error"
	}
	set := r.attrs(i.Kind, i.Side, i.Name, OutcomeKey.String(outcome))
	r.acquired.Add(ctx, 1, set)
	if i.Contended {
		r.contended.Add(ctx, 1, set)
	}
	r.wait.Record(ctx, i.Wait.Seconds(), r.attrs(i.Kind, i.Side, i.Name, OutcomeKey.String(outcome), ContendedKey.Bool(i.Contended)))
	if i.Err == nil && i.Kind != distsync.KindSemaphore {
		r.held.Add(ctx, 1, r.attrs(i.Kind, i.Side, i.Name))
	}

	_, span := r.tracer.Start(ctx, "distsync.acquire "+string(i.Kind),
		trace.WithTimestamp(i.Start),
		trace.WithAttributes(KindKey.String(string(i.Kind)), NameKey.String(i.Name), ContendedKey.Bool(i.Contended), WaitKey.Float64(i.Wait.Seconds())))
	if i.Err == nil {
		if i.Token != 0 {
			span.SetAttributes(TokenKey.Int64(i.Token))
		}
	} else {
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
	if n := i.Leases - i.Failed; n > 0 {
		r.renewals.Add(ctx, int64(n), metric.WithAttributes(OutcomeKey.String("renewed")))
	}
	if i.Failed > 0 {
		r.renewals.Add(ctx, int64(i.Failed), metric.WithAttributes(OutcomeKey.String("failed")))
	}
	r.latency.Record(ctx, i.Latency.Seconds())
}
