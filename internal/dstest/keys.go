package dstest

import (
	"context"
	"testing"

	"github.com/distsync/distsync"
)

// Keys returns the keys matching pattern on c's server (KEYS), to check what
// a primitive leaves behind.
func Keys(tb testing.TB, c *distsync.Client, pattern string) []string {
	tb.Helper()
	rc := c.Rueidis()
	keys, err := rc.Do(context.Background(), rc.B().Keys().Pattern(pattern).Build()).AsStrSlice()
	if err != nil {
		tb.Fatalf("KEYS %s: %v", pattern, err)
	}
	return keys
}
