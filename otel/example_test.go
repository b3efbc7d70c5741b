package distsyncotel_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/distsync/distsync"
	distsyncotel "github.com/distsync/distsync/otel"
)

// options points the examples at the test server; in a program it would be
// distsync.Options{Addrs: []string{"127.0.0.1:6379"}}.
var options distsync.Options

func ExampleNewObserver() {
	// In a program the providers are the ones the process exports with
	// (or leave the options out for the global ones).
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tp := sdktrace.NewTracerProvider()
	obs, err := distsyncotel.NewObserver(distsyncotel.WithMeterProvider(mp), distsyncotel.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}

	opts := options
	opts.Observer = obs
	c, err := distsync.New(opts)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	m, err := c.Mutex("example-otel")
	if err != nil {
		panic(err)
	}
	ctx, err := m.Lock(context.Background())
	if err != nil {
		panic(err)
	}
	_ = m.Unlock(ctx)

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, metric := range rm.ScopeMetrics[0].Metrics {
		fmt.Println(metric.Name)
	}
	// Unordered output:
	// distsync.acquire.duration
	// distsync.held
	// distsync.hold.duration
}
