package dstest

import (
	"fmt"
	"testing"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/redistest"
)

// ExampleOptions returns Client options for the shared test server, for
// Examples, which get no testing.TB. It panics if no server can be started.
func ExampleOptions() distsync.Options {
	return Options(redistest.Shared(exampleTB{}))
}

// exampleTB is the testing.TB of an Example: it logs nothing and panics on
// failure. Only the methods redistest.Shared calls are implemented.
type exampleTB struct{ testing.TB }

func (exampleTB) Helper()                        {}
func (exampleTB) Logf(string, ...any)            {}
func (exampleTB) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
