package dstest

import (
	"fmt"
	"testing"

	"github.com/distsync/distsync/internal/redistest"
)

// Shared returns the shared test server for an Example, which gets no
// testing.TB of its own; it panics where a test would fail. Main (in
// TestMain) stops the server.
func Shared() *redistest.Server { return redistest.Shared(exampleTB{}) }

// exampleTB is the testing.TB of an Example: redistest.Shared calls only the
// methods defined here.
type exampleTB struct{ testing.TB }

func (exampleTB) Helper()                   {}
func (exampleTB) Logf(string, ...any)       {}
func (exampleTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
