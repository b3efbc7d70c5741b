package dstest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/core"
)

// Keys returns the keys matching pattern on c's server (KEYS), to check what
// a primitive leaves behind. A primitive's record of finished acquisitions
// (":done", or the mutex's ":done:<id>" marks) is not returned: it must
// expire within core.ReleaseMemory, and Keys fails the test when it would
// not.
func Keys(tb testing.TB, c *distsync.Client, pattern string) []string {
	tb.Helper()
	rc := c.Rueidis()
	ctx := context.Background()
	keys, err := rc.Do(ctx, rc.B().Keys().Pattern(pattern).Build()).AsStrSlice()
	if err != nil {
		tb.Fatalf("KEYS %s: %v", pattern, err)
	}
	var out []string
	for _, k := range keys {
		if !strings.HasSuffix(k, ":done") && !strings.Contains(k, ":done:") {
			out = append(out, k)
			continue
		}
		ms, err := rc.Do(ctx, rc.B().Pttl().Key(k).Build()).AsInt64()
		if err != nil {
			tb.Fatalf("PTTL %s: %v", k, err)
		}
		if ttl := time.Duration(ms) * time.Millisecond; ms != -2 && (ms < 0 || ttl > core.ReleaseMemory) {
			tb.Errorf("%s expires in %v, want at most %v", k, ttl, core.ReleaseMemory)
		}
	}
	return out
}
