package distsyncotel_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	distsyncotel "github.com/distsync/distsync/otel"
)

func TestMain(m *testing.M) {
	options = dstest.ExampleOptions(0)
	redistest.Main(m)
}

// telemetry is an Observer whose metrics and spans the test reads back.
type telemetry struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
}

// client returns a Client on the test server observed through the
// adapter, with options edited by edit.
func client(t *testing.T, edit ...func(*distsync.Options)) (*distsync.Client, *telemetry) {
	t.Helper()
	tel := &telemetry{reader: sdkmetric.NewManualReader(), spans: tracetest.NewInMemoryExporter()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tel.spans))
	obs, err := distsyncotel.NewObserver(
		distsyncotel.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))),
		distsyncotel.WithTracerProvider(tel.tp),
		distsyncotel.WithNameAttribute(),
	)
	require.NoError(t, err)
	c := dstest.Client(t, append([]func(*distsync.Options){func(o *distsync.Options) { o.Observer = obs }}, edit...)...)
	return c, tel
}

// metrics collects the metrics recorded so far, by name.
func (tel *telemetry) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != distsyncotel.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// has reports whether set holds every attribute of want.
func has(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// sum returns the value of the counter or up-down counter name over the
// data points that have every attribute of want.
func (tel *telemetry) sum(t *testing.T, name string, want ...attribute.KeyValue) int64 {
	t.Helper()
	data, ok := tel.metrics(t)[name]
	if !ok {
		return 0
	}
	s, ok := data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a %T", name, data)
	var n int64
	for _, dp := range s.DataPoints {
		if has(dp.Attributes, want) {
			n += dp.Value
		}
	}
	return n
}

// histogram returns the count and the sum of the histogram name over the
// data points that have every attribute of want.
func (tel *telemetry) histogram(t *testing.T, name string, want ...attribute.KeyValue) (uint64, float64) {
	t.Helper()
	data, ok := tel.metrics(t)[name]
	if !ok {
		return 0, 0
	}
	h, ok := data.(metricdata.Histogram[float64])
	require.True(t, ok, "%s is a %T", name, data)
	var (
		n   uint64
		sum float64
	)
	for _, dp := range h.DataPoints {
		if has(dp.Attributes, want) {
			n += dp.Count
			sum += dp.Sum
		}
	}
	return n, sum
}

func kind(k distsync.Kind) attribute.KeyValue { return distsyncotel.KindKey.String(string(k)) }
func outcome(o string) attribute.KeyValue     { return distsyncotel.OutcomeKey.String(o) }

func TestAcquisitionsHoldsAndSpans(t *testing.T) {
	c, tel := client(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	tracer := tel.tp.Tracer("test")
	ctx, parent := tracer.Start(context.Background(), "request")

	held, err := m.Lock(ctx)
	require.NoError(t, err)
	token, err := m.Token(held)
	require.NoError(t, err)
	assert.EqualValues(t, 1, tel.sum(t, "distsync.held", kind(distsync.KindMutex)), "one lease held")

	// Refused at once, then granted after a wait for the holder's release.
	_, err = m.TryLock(ctx, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	type result struct {
		ctx context.Context
		err error
	}
	done := make(chan result, 1)
	go func() {
		lctx, err := m.Lock(ctx)
		done <- result{lctx, err}
	}()
	dstest.WaitWaiters(t, c, m.Key()+":waiters", 1)
	require.NoError(t, m.Unlock(held))
	res := <-done
	require.NoError(t, res.err)
	require.NoError(t, m.Unlock(res.ctx))
	parent.End()

	mutex := kind(distsync.KindMutex)
	name := distsyncotel.NameKey.String(m.Name())
	contended := distsyncotel.ContendedKey.Bool(true)
	for _, c := range []struct {
		want uint64
		attr []attribute.KeyValue
	}{
		{3, nil},
		{2, []attribute.KeyValue{name, outcome("acquired")}},
		{1, []attribute.KeyValue{outcome("not_acquired")}},
		{1, []attribute.KeyValue{outcome("acquired"), contended}},
		{1, []attribute.KeyValue{outcome("not_acquired"), contended}},
	} {
		n, _ := tel.histogram(t, "distsync.acquire.duration", append([]attribute.KeyValue{mutex}, c.attr...)...)
		assert.Equal(t, c.want, n, "acquisitions with %v", c.attr)
	}
	for _, gone := range []string{"distsync.acquisitions", "distsync.acquisitions.contended", "distsync.acquire.wait"} {
		assert.NotContains(t, tel.metrics(t), gone, "distsync.acquire.duration's count and attributes say it")
	}
	n, sum := tel.histogram(t, "distsync.hold.duration", mutex, distsyncotel.EndKey.String("released"))
	assert.EqualValues(t, 2, n, "both holds, released")
	assert.Positive(t, sum)
	assert.Zero(t, tel.sum(t, "distsync.held", mutex), "nothing held after both releases")

	acq, rel := tel.ours(t, "distsync.acquire "), tel.ours(t, "distsync.release ")
	require.Len(t, acq, 3, "a span per acquisition")
	for _, s := range acq {
		assert.Equal(t, "distsync.acquire mutex", s.Name)
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID(), "a child of the caller's span")
		attrs := attribute.NewSet(s.Attributes...)
		assert.True(t, has(attrs, []attribute.KeyValue{mutex, name}), "%v", s.Attributes)
		_, ok := attrs.Value("distsync.wait")
		assert.False(t, ok, "the wait is the span's own duration")
		assert.False(t, s.EndTime.Before(s.StartTime))
	}
	first := attribute.NewSet(acq[0].Attributes...)
	got, _ := first.Value(distsyncotel.TokenKey)
	assert.Equal(t, token, got.AsInt64(), "the fencing token")
	refused := attribute.NewSet(acq[1].Attributes...)
	assert.Equal(t, codes.Unset, acq[1].Status.Code, "a TryLock not acquired is no error")
	assert.Empty(t, acq[1].Events, "no error recorded")
	assert.True(t, has(refused, []attribute.KeyValue{outcome("not_acquired"), contended}), "%v", acq[1].Attributes)
	_, ok := refused.Value(distsyncotel.ErrorTypeKey)
	assert.False(t, ok, "no error.type")
	last := attribute.NewSet(acq[2].Attributes...)
	assert.True(t, has(last, []attribute.KeyValue{outcome("acquired"), contended}), "%v", acq[2].Attributes)

	require.Len(t, rel, 2, "a span per release")
	for _, s := range rel {
		assert.Equal(t, "distsync.release mutex", s.Name)
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID(), "a child of the caller's span")
		assert.Equal(t, codes.Unset, s.Status.Code)
		attrs := attribute.NewSet(s.Attributes...)
		assert.True(t, has(attrs, []attribute.KeyValue{mutex, name, distsyncotel.EndKey.String("released"), distsyncotel.AutoKey.Bool(false)}), "%v", s.Attributes)
		held, ok := attrs.Value(distsyncotel.HeldForKey)
		assert.True(t, ok, "how long the acquisition was held")
		assert.Positive(t, held.AsFloat64())
		_, ok = attrs.Value("distsync.hold.duration")
		assert.False(t, ok, "no attribute named as a metric")
		assert.False(t, s.EndTime.Before(s.StartTime))
	}
}

// ours returns the spans of distsync's scope whose name begins with prefix.
func (tel *telemetry) ours(t *testing.T, prefix string) tracetest.SpanStubs {
	t.Helper()
	var out tracetest.SpanStubs
	for _, s := range tel.spans.GetSpans() {
		if s.InstrumentationScope.Name == distsyncotel.ScopeName && strings.HasPrefix(s.Name, prefix) {
			require.Equal(t, distsyncotel.Version(), s.InstrumentationScope.Version, "the scope carries the module version")
			out = append(out, s)
		}
	}
	return out
}

// A real failure is an error with error.type, on the span and the metrics.
func TestErrorsHaveAType(t *testing.T) {
	redistest.RequireReal(t, redistest.Shared(t), redistest.ErrorTables)
	c, tel := client(t)
	ctx := context.Background()
	name := dstest.Name(t)
	sem, err := c.Semaphore(name + "-sem")
	require.NoError(t, err)
	_, err = sem.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	t.Cleanup(func() { sem.Delete(ctx) })
	m, err := c.Mutex(sem.Name())
	require.NoError(t, err)
	_, err = m.TryLock(ctx, 0, 0)
	require.ErrorIs(t, err, distsync.ErrWrongKind)

	mutex := kind(distsync.KindMutex)
	wrongKind := distsyncotel.ErrorTypeKey.String("wrong_kind")
	n, _ := tel.histogram(t, "distsync.acquire.duration", mutex, outcome("error"), wrongKind)
	assert.EqualValues(t, 1, n)
	acq := tel.ours(t, "distsync.acquire ")
	require.Len(t, acq, 1)
	assert.Equal(t, codes.Error, acq[0].Status.Code)
	assert.True(t, has(attribute.NewSet(acq[0].Attributes...), []attribute.KeyValue{outcome("error"), wrongKind}), "%v", acq[0].Attributes)
}

// A release that found its acquisition no longer held is an error with
// error.type not_held.
func TestReleaseNotHeldHasAType(t *testing.T) {
	c, tel := client(t)
	ctx := context.Background()
	m2, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	held, err := m2.TryLock(ctx, 0, time.Minute)
	require.NoError(t, err)
	// The key deleted by hand, which nothing tells the holder of (a
	// ForceUnlock would, by push, and the Unlock after it might then send
	// nothing): the release is sent and finds the lock not held.
	rc := c.Rueidis()
	require.NoError(t, rc.Do(ctx, rc.B().Del().Key(m2.Key()).Build()).Error())
	require.ErrorIs(t, m2.Unlock(held), distsync.ErrNotHeld)
	rel := tel.ours(t, "distsync.release ")
	require.Len(t, rel, 1)
	assert.Equal(t, codes.Error, rel[0].Status.Code)
	assert.True(t, has(attribute.NewSet(rel[0].Attributes...), []attribute.KeyValue{distsyncotel.EndKey.String("not_held"), distsyncotel.ErrorTypeKey.String("not_held")}), "%v", rel[0].Attributes)
}

// Metrics carry the module version in their scope, and no name carries a
// unit: durations are in the metrics' unit.
func TestScopeAndUnits(t *testing.T) {
	c, tel := client(t)
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	require.NoError(t, m.Unlock(held))

	assert.NotEmpty(t, distsyncotel.Version())
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	found := false
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != distsyncotel.ScopeName {
			continue
		}
		found = true
		assert.Equal(t, distsyncotel.Version(), sm.Scope.Version)
		for _, md := range sm.Metrics {
			assert.NotRegexp(t, `_(seconds|ms|milliseconds)$`, md.Name)
			if _, ok := md.Data.(metricdata.Histogram[float64]); ok {
				// OpenTelemetry's conventions name a histogram of how long
				// something took *.duration (db.client.operation.duration).
				assert.True(t, strings.HasSuffix(md.Name, ".duration"), md.Name)
				assert.Equal(t, "s", md.Unit, md.Name)
			}
		}
	}
	assert.True(t, found)
	for _, s := range tel.ours(t, "distsync.") {
		for _, kv := range s.Attributes {
			assert.NotRegexp(t, `_(seconds|ms|milliseconds)$`, string(kv.Key), s.Name)
		}
	}
}

func TestRenewalsAndLostLease(t *testing.T) {
	c, tel := client(t, func(o *distsync.Options) { o.Watchdog.Lease = 300 * time.Millisecond })
	m, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	mutex := kind(distsync.KindMutex)
	require.Eventually(t, func() bool { return tel.sum(t, "distsync.renewals", mutex, outcome("renewed")) >= 2 }, 10*time.Second, 5*time.Millisecond,
		"the watchdog renews the lease; the renewals carry its kind")
	n, _ := tel.histogram(t, "distsync.renewal.duration")
	assert.Positive(t, n)

	rc := c.Rueidis()
	require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key(m.Key()).Build()).Error())
	// The observer hears of the loss just after the holder's context ends.
	// The loss's records (lost, the hold's end, held) are several Adds
	// made one after another on the reporting goroutine: wait for the
	// last of them, so that a busy machine does not catch them halfway.
	require.Eventually(t, func() bool {
		return tel.sum(t, "distsync.leases.lost", mutex, distsyncotel.CauseKey.String("lost")) == 1 &&
			tel.sum(t, "distsync.held", mutex) == 0
	}, 10*time.Second, 5*time.Millisecond,
		"the watchdog reports the lease lost")
	require.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	assert.EqualValues(t, 1, tel.sum(t, "distsync.renewals", mutex, outcome("failed")))
	n, _ = tel.histogram(t, "distsync.hold.duration", mutex, distsyncotel.EndKey.String("lost"))
	assert.EqualValues(t, 1, n)
	assert.EqualValues(t, 1, tel.sum(t, "distsync.leases.lost", mutex, distsyncotel.CauseKey.String("lost")))
}

func TestSemaphoresAndClose(t *testing.T) {
	c, tel := client(t)
	ctx := context.Background()
	name := dstest.Name(t) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) // Close leaves a permit held
	sem, err := c.Semaphore(name)
	require.NoError(t, err)
	_, err = sem.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	require.NoError(t, sem.Acquire(ctx, 1))
	ps, err := c.PermitSemaphore(name + "-permits")
	require.NoError(t, err)
	require.NoError(t, ps.SetPermits(ctx, 2))
	p, err := ps.Acquire(ctx)
	require.NoError(t, err)
	_, err = ps.Acquire(ctx)
	require.NoError(t, err)
	require.NoError(t, ps.Release(ctx, p))

	n, _ := tel.histogram(t, "distsync.acquire.duration", kind(distsync.KindSemaphore), outcome("acquired"))
	assert.EqualValues(t, 1, n)
	n, _ = tel.histogram(t, "distsync.acquire.duration", kind(distsync.KindPermitSemaphore), outcome("acquired"))
	assert.EqualValues(t, 2, n)
	assert.Zero(t, tel.sum(t, "distsync.held", kind(distsync.KindSemaphore)), "a counting semaphore's permits belong to nobody")
	assert.EqualValues(t, 1, tel.sum(t, "distsync.held", kind(distsync.KindPermitSemaphore)))

	c.Close()
	assert.Zero(t, tel.sum(t, "distsync.held"), "Close ends every hold")
	assert.EqualValues(t, 1, tel.sum(t, "distsync.leases.lost", kind(distsync.KindPermitSemaphore), distsyncotel.CauseKey.String("closed")))
}

// A ForceLock that replaced a holder is a contended take-over, on the
// metric and the span; one of a free lock is neither.
func TestForceLockIsATakeOver(t *testing.T) {
	c, tel := client(t)
	dstest.TakeOver(t, c, dstest.Name(t))
	mutex, takeOver := kind(distsync.KindMutex), distsyncotel.TakeOverKey.Bool(true)
	n, _ := tel.histogram(t, "distsync.acquire.duration", mutex, takeOver, distsyncotel.ContendedKey.Bool(true), outcome("acquired"))
	assert.EqualValues(t, 1, n, "the take-over")
	n, _ = tel.histogram(t, "distsync.acquire.duration", mutex, distsyncotel.ContendedKey.Bool(false))
	assert.EqualValues(t, 2, n, "the Lock and the ForceLock of a free lock")
	acq := tel.ours(t, "distsync.acquire ")
	require.Len(t, acq, 3)
	for i, s := range acq {
		attrs := attribute.NewSet(s.Attributes...)
		v, ok := attrs.Value(distsyncotel.TakeOverKey)
		assert.Equal(t, i == 1, ok && v.AsBool(), "span %d: %v", i, s.Attributes)
	}
}
