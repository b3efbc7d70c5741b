package distsync_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/distsync/distsync"
)

// Log the acquisitions that waited long, and every hold that ended without
// a release.
func ExampleObserver() {
	opts := options // in a program: distsync.Options{Addrs: []string{"127.0.0.1:6379"}}
	opts.Observer = &distsync.Observer{
		Acquired: func(ctx context.Context, a distsync.AcquireInfo) {
			if a.Wait > time.Second {
				slog.WarnContext(ctx, "slow lock", "kind", a.Kind, "name", a.Name, "wait", a.Wait)
			}
			fmt.Println("acquired", a.Kind, a.Name, "contended:", a.Contended, "error:", a.Err)
		},
		Released: func(_ context.Context, r distsync.ReleaseInfo) {
			fmt.Println("released", r.Kind, r.Name, "error:", r.Err)
		},
		Lost: func(l distsync.LostInfo) {
			slog.Error("lock lost", "kind", l.Kind, "name", l.Name, "held", l.Held, "cause", l.Cause)
		},
	}
	c, err := distsync.New(opts)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	m, err := c.Mutex("example-observed")
	if err != nil {
		panic(err)
	}
	ctx, err := m.Lock(context.Background())
	if err != nil {
		panic(err)
	}
	_ = m.Unlock(ctx)
	// Output:
	// acquired mutex example-observed contended: false error: <nil>
	// released mutex example-observed error: <nil>
}
