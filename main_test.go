package distsync_test

import (
	"testing"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// options points the examples at the test server; in a program it would be
// distsync.Options{Addrs: []string{"127.0.0.1:6379"}}.
var options distsync.Options

func TestMain(m *testing.M) {
	options = dstest.ExampleOptions(0)
	redistest.Main(m)
}
