// Package dstest builds distsync Clients on the test servers of redistest.
package dstest

import (
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

// Name returns a key name unique to the test.
func Name(tb testing.TB) string {
	return tb.Name()
}
