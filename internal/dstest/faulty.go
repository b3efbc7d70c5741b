package dstest

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/watchdog"
)

// FaultyClient returns a Client on s whose commands pass through a Faulty
// layer, with the watchdog lease (0: the default); both are closed at
// cleanup.
func FaultyClient(tb testing.TB, s *redistest.Server, lease time.Duration) (*distsync.Client, *Faulty) {
	tb.Helper()
	return FaultyClientWith(tb, s, distsync.Options{Watchdog: watchdog.Config{Lease: lease}})
}

// FaultyClientWith is FaultyClient with opts (their connection fields are
// ignored).
func FaultyClientWith(tb testing.TB, s *redistest.Server, opts distsync.Options) (*distsync.Client, *Faulty) {
	tb.Helper()
	rc, err := rueidis.NewClient(s.ClientOption())
	if err != nil {
		tb.Fatalf("rueidis.NewClient: %v", err)
	}
	f := NewFaulty(rc)
	c, err := distsync.FromClient(f, opts)
	if err != nil {
		rc.Close()
		tb.Fatalf("distsync.FromClient: %v", err)
	}
	tb.Cleanup(func() {
		c.Close()
		rc.Close()
	})
	return c, f
}
