// Package dstest builds distsync Clients on the test servers of redistest.
package dstest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/redistest"
)

// Options returns Client options for server s.
func Options(s *redistest.Server) distsync.Options {
	return distsync.Options{Addrs: []string{s.Addr()}, RESP2: s.RESP2()}
}

// Client returns a Client on the shared test server, closed at cleanup;
// edit adjusts its options.
func Client(tb testing.TB, edit ...func(*distsync.Options)) *distsync.Client {
	tb.Helper()
	return ClientOn(tb, redistest.Shared(tb), edit...)
}

// ClientOn returns a Client on s, closed at cleanup.
func ClientOn(tb testing.TB, s *redistest.Server, edit ...func(*distsync.Options)) *distsync.Client {
	tb.Helper()
	o := Options(s)
	for _, f := range edit {
		f(&o)
	}
	c, err := distsync.New(o)
	if err != nil {
		tb.Fatalf("distsync.New: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// Name returns a key name unique to the test run: the test's name, and
// from its second run in this process on (-count=2), the test's name with
// the run's number, so that a run never meets the keys an earlier run of
// the same test left on the shared server. Calls within one run agree.
func Name(tb testing.TB) string {
	names.mu.Lock()
	defer names.mu.Unlock()
	if n, ok := names.of[tb]; ok {
		return n
	}
	if names.of == nil {
		names.of, names.runs = map[testing.TB]string{}, map[string]int{}
	}
	base := tb.Name()
	names.runs[base]++
	n := base
	if r := names.runs[base]; r > 1 {
		n = fmt.Sprintf("%s/run%d", base, r)
	}
	names.of[tb] = n
	tb.Cleanup(func() {
		names.mu.Lock()
		delete(names.of, tb)
		names.mu.Unlock()
	})
	return n
}

// names remembers the name each live test was given and how many runs
// each test name had.
var names struct {
	mu   sync.Mutex
	of   map[testing.TB]string
	runs map[string]int
}
