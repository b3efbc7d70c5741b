package dstest

import (
	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/redistest"
)

// Shared returns the shared test server for an Example, which gets no
// testing.TB of its own; it panics where a test would fail. Main (in
// TestMain) stops the server.
func Shared() *redistest.Server {
	s, err := redistest.SharedServer()
	if err != nil {
		panic("redistest: shared server: " + err.Error())
	}
	return s
}

// ExampleOptions returns Client options for the shared test server, for
// Examples. It panics if no server can be started.
func ExampleOptions() distsync.Options { return Options(Shared()) }
