// Package integration_test holds tests across primitives on real servers:
// replication, Cluster, Sentinel and faults.
package integration_test

import (
	"testing"

	"github.com/distsync/distsync/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
