package election_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/dstest"
)

// BenchmarkHandOver is Campaign+Resign of one election from parallel
// goroutines: nearly every leadership is handed over by a resignation to
// the head candidate. It reports the server's commands and command time per
// hand-over (INFO commandstats, scripts' inner calls included) and the
// campaign attempts per hand-over.
func BenchmarkHandOver(b *testing.B) {
	c := dstest.Client(b)
	e := newElection(b, c, dstest.Name(b))
	ctx := context.Background()
	rc := c.Rueidis()
	if err := rc.Do(ctx, rc.B().ConfigResetstat().Build()).Error(); err != nil {
		b.Fatal(err)
	}
	attempts := acquire.Counters().Attempts.Load()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l, _, err := e.Campaign(ctx, "v")
			if err != nil {
				b.Error(err)
				return
			}
			if err := e.Resign(l); err != nil {
				b.Error(err)
				return
			}
		}
	})
	calls, usec := commandStats(b, c)
	b.ReportMetric(float64(calls)/float64(b.N), "cmds/op")
	b.ReportMetric(float64(usec)/float64(b.N), "server-µs/op")
	b.ReportMetric(float64(acquire.Counters().Attempts.Load()-attempts)/float64(b.N), "attempts/op")
}

// commandStats sums the calls of INFO commandstats (each call in a script
// counted) and the microseconds of the scripts (which include their
// calls'), the INFO and CONFIG commands left out.
func commandStats(b *testing.B, c *distsync.Client) (calls, usec int64) {
	rc := c.Rueidis()
	info, err := rc.Do(context.Background(), rc.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || strings.HasPrefix(name, "cmdstat_info") || strings.HasPrefix(name, "cmdstat_config") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				if name == "cmdstat_evalsha" || name == "cmdstat_eval" {
					usec += n
				}
			}
		}
	}
	return calls, usec
}
