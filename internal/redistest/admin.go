package redistest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// requireBinary returns the redis-server binary for topologies, which need
// local processes. Without one it skips the test, or fails it when
// DISTSYNC_REQUIRE_REDIS=1.
func requireBinary(tb testing.TB, what string) string {
	tb.Helper()
	bin := redisBinary()
	if bin != "" {
		return bin
	}
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("redistest: %s needs a redis-server binary and %s=1; install one, e.g. apt-get install redis-server", what, RequireEnv)
	}
	tb.Skipf("redistest: %s needs a redis-server binary, none found (%s); %s", what, where(), GetServer)
	return ""
}

// startNode starts a redis-server process owned by the test.
func startNode(tb testing.TB, bin string, cfg config, args []string) *Server {
	tb.Helper()
	s, err := startProcess(bin, tb.TempDir(), cfg, args)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	remember(s)
	tb.Cleanup(func() { s.Stop(); forget(s) })
	return s
}

// admin holds single-node rueidis clients for setting up topologies.
type admin map[*Server]rueidis.Client

func (a admin) client(tb testing.TB, s *Server) rueidis.Client {
	tb.Helper()
	if c, ok := a[s]; ok {
		return c
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{s.addr},
		ForceSingleClient: true,
		DisableCache:      true,
		DisableRetry:      true,
	})
	if err != nil {
		tb.Fatalf("redistest: connect %s: %v", s.addr, err)
	}
	a[s] = c
	return c
}

// do runs one command on s and returns its string reply.
func (a admin) do(tb testing.TB, s *Server, args ...string) (string, error) {
	tb.Helper()
	c := a.client(tb, s)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Do(ctx, c.B().Arbitrary(args...).Build()).ToString()
}

// must runs one command on s and fails the test on error.
func (a admin) must(tb testing.TB, s *Server, args ...string) string {
	tb.Helper()
	v, err := a.do(tb, s, args...)
	if err != nil {
		tb.Fatalf("redistest: %s on %s: %v", strings.Join(args, " "), s.addr, err)
	}
	return v
}

func (a admin) close() {
	for _, c := range a {
		c.Close()
	}
}

// waitFor polls cond, backing off from 10 ms to 100 ms, until it returns
// true, failing the test with the last reason after timeout.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	delay := 10 * time.Millisecond
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: %s not reached within %v: %s", what, timeout, why)
		}
		time.Sleep(delay) // bounded readiness polling
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// infoField returns the value of field in an INFO or CLUSTER INFO reply
// (the latter is a RESP3 verbatim string, which rueidis returns with "txt:").
func infoField(info, field string) string {
	for _, line := range strings.Split(strings.TrimPrefix(info, "txt:"), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), field+":"); ok {
			return v
		}
	}
	return ""
}

// replicaSynced reports whether the replica s has a live link to its master.
func (a admin) replicaSynced(tb testing.TB, s *Server) (bool, string) {
	info, err := a.do(tb, s, "INFO", "replication")
	if err != nil {
		return false, fmt.Sprintf("%s: %v", s.addr, err)
	}
	if v := infoField(info, "master_link_status"); v != "up" {
		return false, fmt.Sprintf("%s: master_link_status %q", s.addr, v)
	}
	return true, ""
}
