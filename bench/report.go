package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/distsync/distsync"
)

type row struct {
	sc      scenario
	results []result // by library, in report.libs order
}

type report struct {
	cfg       config
	addr      string
	version   string
	libs      []library
	started   time.Time
	rows      []row
	watchdog  []wdResult
	footprint *fpResult
}

func (r *report) header(w io.Writer) {
	fmt.Fprintf(w, "distsync benchmarks, %s\n", r.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "machine: %s, %d CPUs (GOMAXPROCS %d), %s %s/%s\n", cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "redis: %s at %s; rounds %d, window %v per library per round, handoff %d reps, libraries %s\n\n",
		r.version, r.addr, r.cfg.rounds, r.cfg.dur, (r.cfg.reps+r.cfg.rounds-1)/r.cfg.rounds*r.cfg.rounds, strings.Join(r.cfg.libs, ", "))
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func pct(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	i := int(p * float64(len(lat)-1))
	return lat[i]
}

func (res result) rate() float64 {
	if res.window <= 0 {
		return 0
	}
	return float64(res.ops) / res.window.Seconds()
}

func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

func num(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}

func (r *report) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tlibrary\tops/s\tp50\tp99\tmax\tvs distsync\tclient CPU/op\tserver CPU/op\tserver cmd/op\tcmds/op\tpub/op\tviolations\tnotes\t")
	for _, rw := range r.rows {
		ds := slices.IndexFunc(r.libs, func(l library) bool { return l.name == "distsync" })
		for i, res := range rw.results {
			slices.Sort(res.lat)
			rw.results[i] = res
		}
		for i, res := range rw.results {
			title := ""
			if i == 0 {
				title = rw.sc.id + " " + rw.sc.title
				if rw.sc.unit != "" {
					title += " [" + rw.sc.unit + "]"
				}
			}
			if res.na {
				why := "n/a (no such primitive)"
				if r.libs[i].neverWaits {
					why = "n/a (never waits)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\t\t\t\t\t\t\t\t\t\n", title, r.libs[i].name, why)
				continue
			}
			rate, ratio := "-", "-"
			if rw.sc.unit != "" {
				rate = num(res.rate())
				if ds >= 0 && rw.results[ds].rate() > 0 {
					ratio = fmt.Sprintf("%.2fx", res.rate()/rw.results[ds].rate())
				}
			} else if ds >= 0 && len(res.lat) > 0 && len(rw.results[ds].lat) > 0 {
				ratio = fmt.Sprintf("p50 %.1fx", float64(pct(res.lat, .5))/float64(pct(rw.results[ds].lat, .5)))
			}
			cpuOp := func(d time.Duration) string {
				if d <= 0 || len(res.lat) == 0 {
					return "-"
				}
				return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond)/float64(len(res.lat)))
			}
			perOp := func(n int64) string {
				if res.ops+int64(len(res.lat)) == 0 {
					return "-"
				}
				return fmt.Sprintf("%.2f", float64(n)/float64(len(res.lat)))
			}
			var notes []string
			if res.retries > 0 {
				notes = append(notes, fmt.Sprintf("%d lock calls gave up, retried", res.retries))
			}
			if res.errors > 0 {
				notes = append(notes, fmt.Sprintf("%d errors (first: %s)", res.errors, res.firstErr))
			}
			if n := float64(len(res.lat)); n > 0 && res.msgs > 0 {
				notes = append(notes, fmt.Sprintf("notifier %.2f msgs, %.2f wakes/op", float64(res.msgs)/n, float64(res.wakes)/n))
			}
			if len(res.fair) > 0 && rw.sc.waits && rw.sc.unit != "" {
				notes = append(notes, fmt.Sprintf("fairness %.2f", slices.Min(res.fair)))
			}
			if len(res.rel) > 0 {
				slices.Sort(res.rel)
				notes = append(notes, fmt.Sprintf("the releasing call itself: p50 %s, p99 %s", dur(pct(res.rel, .5)), dur(pct(res.rel, .99))))
			}
			if res.peak > 0 {
				notes = append(notes, fmt.Sprintf("peak %d held", res.peak))
			}
			if len(res.rlat) > 0 {
				slices.Sort(res.rlat)
				notes = append(notes, fmt.Sprintf("reads (%d): p50 %s, p99 %s", len(res.rlat), dur(pct(res.rlat, .5)), dur(pct(res.rlat, .99))))
			}
			if len(res.wlat) > 0 {
				slices.Sort(res.wlat)
				notes = append(notes, fmt.Sprintf("writes (%d): p50 %s, p99 %s", len(res.wlat), dur(pct(res.wlat, .5)), dur(pct(res.wlat, .99))))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", title, r.libs[i].name, rate,
				dur(pct(res.lat, .5)), dur(pct(res.lat, .99)), dur(pct(res.lat, 1)), ratio,
				cpuOp(res.clientCPU), cpuOp(res.serverCPU), cpuOp(res.serverCmd), perOp(res.cmds), perOp(res.pubs), res.violations, strings.Join(notes, "; "))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\nops/s counts operations completed in the timed windows; p50/p99/max are of lock+unlock (1a, 1b, 7), of the wait for the lock (2),")
	fmt.Fprintln(w, "of release-start to waiter-holds (3, and 5: from the previous holder's release to the next in the queue holding), of acquire+release")
	fmt.Fprintln(w, "(6). vs distsync: ops/s ratio (p50 ratio for 3). CPU/op: CPU time of this process and of redis-server per operation (robust to")
	fmt.Fprintln(w, "a loaded machine, unlike wall time). server cmd/op: redis-server's command time per operation (INFO commandstats usec of the")
	fmt.Fprintln(w, "scripts and of the commands the library sends itself; a command a script calls is counted in its script's time only). cmds/op, pub/op: server commands per operation, counting each call inside a script (INFO")
	fmt.Fprintln(w, "commandstats), and PUBLISHes among them. Notes: notifier msgs/wakes per op = pub/sub messages distsync's Client received and")
	fmt.Fprintln(w, "local waiters they woke; peak held = permits minus the lowest available count a poller read on the server (6); violations of 5")
	fmt.Fprintln(w, "include waiters granted out of order. Commands the harness sends to observe (5: FairLock.Waiting, 6: the poller) are left out.")
	fmt.Fprintln(w, "fairness (2, 2m, 9): Jain's index of the goroutines' acquisition counts, the lowest of the rounds (1 = all equal).")
	fmt.Fprintln(w, "rueidislock: NewLocker with its defaults (KeyMajority 2: 3 keys, a majority of 2); rueidislock-m1: as its README configures one")
	fmt.Fprintln(w, "instance (KeyMajority 1: 1 key; NoLoopTracking). client CPU/op is this process's CPU (all its goroutines) over the operations.")
	fmt.Fprintf(w, "floor, exact-floor: rueidis clients with distsync's default flush delay (Options.FlushDelay, %v); rueidislock's: %v (-peer-flush).\n", distsync.DefaultFlushDelay, peerFlush)
	fmt.Fprintln(w, "8, 9: a Redlock over 3 local redis-servers (redsync: redsync.New over 3 pools); server CPU and commands are those of the first master.")

	if len(r.watchdog) > 0 {
		fmt.Fprintln(w, "\n4 watchdog: hold N leases at once, one renewal interval")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "library\tleases\tacquire\tinterval\trenew all (ticks)\tround trips\tclient CPU/interval\tserver cmds/interval\tmemory/lease\tlost\t")
		var notes []string
		for _, x := range r.watchdog {
			if x.skipped != "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\t\t\t\t\t\t\t\t\n", x.lib, num(float64(x.n)), x.skipped)
				continue
			}
			pass, trips := "n/a (per-lock timers)", "n/a"
			if x.lib == "distsync" {
				pass = fmt.Sprintf("%s (%d)", dur(x.pass), x.ticks)
				trips = fmt.Sprint(x.roundTrips)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", x.lib, num(float64(x.n)), dur(x.acquire), dur(x.interval),
				pass, trips, dur(x.cpu), num(float64(x.cmds)), fmt.Sprintf("%.0f B", x.memPerHold), x.lost)
			if x.note != "" {
				notes = append(notes, x.lib+": "+x.note)
			}
		}
		tw.Flush()
		for _, n := range slices.Compact(notes) {
			fmt.Fprintln(w, "  "+n)
		}
	}
	if r.footprint != nil {
		r.footprint.print(w)
	}
	r.targets(w)
}

// targets prints the targets against this run's figures.
func (r *report) targets(w io.Writer) {
	ds := slices.IndexFunc(r.libs, func(l library) bool { return l.name == "distsync" })
	if ds < 0 {
		return
	}
	fmt.Fprintln(w, "\ntargets (same run):")
	check := func(ok bool, format string, args ...any) {
		mark := "MISS"
		if ok {
			mark = "ok  "
		}
		fmt.Fprintf(w, "  %s %s\n", mark, fmt.Sprintf(format, args...))
	}
	get := func(id string) *row {
		for i := range r.rows {
			if r.rows[i].sc.id == id {
				return &r.rows[i]
			}
		}
		return nil
	}
	peer := func(rw *row, lib string) (result, bool) {
		i := slices.IndexFunc(r.libs, func(l library) bool { return l.name == lib })
		if i < 0 || rw.results[i].na {
			return result{}, false
		}
		return rw.results[i], true
	}
	if rw := get("1a"); rw != nil {
		d := rw.results[ds].rate()
		if f, ok := peer(rw, "floor"); ok && f.rate() > 0 {
			check(d >= 0.95*f.rate(), "1a %s: distsync %s pairs/s = %.2fx the floor (%s); target >= 0.95x", rw.sc.title, num(d), d/f.rate(), num(f.rate()))
		}
	}
	if rw := get("1b"); rw != nil {
		d := rw.results[ds]
		best, name := 0.0, ""
		for _, lib := range []string{"rueidislock", "rueidislock-m1", "redislock", "redsync"} {
			if p, ok := peer(rw, lib); ok && p.rate() > best {
				best, name = p.rate(), lib
			}
		}
		if best > 0 {
			check(d.rate() >= 1.1*best, "1b %s: distsync %s pairs/s = %.2fx the best peer (%s, %s); target >= 1.1x", rw.sc.title, num(d.rate()), d.rate()/best, name, num(best))
			if e, ok := peer(rw, "exact-floor"); ok && e.rate() > 0 {
				fmt.Fprintf(w, "       (the exact floor, distsync's guarantees on the server with a bare client: %s pairs/s = %.2fx %s; distsync = %.2fx the exact floor)\n", num(e.rate()), e.rate()/best, name, d.rate()/e.rate())
			}
		}
		if n := float64(len(d.lat)); n > 0 {
			srv, cli := float64(d.serverCmd)/float64(time.Microsecond)/n, float64(d.clientCPU)/float64(time.Microsecond)/n
			floor := ""
			if f, ok := peer(rw, "floor"); ok && len(f.lat) > 0 {
				fn := float64(len(f.lat))
				floor = fmt.Sprintf(" (the floor: %.1fµs, %.1fµs)", float64(f.serverCmd)/float64(time.Microsecond)/fn, float64(f.clientCPU)/float64(time.Microsecond)/fn)
			}
			check(srv <= 30 && cli <= 30, "1b: distsync server command time %.1fµs, client CPU %.1fµs per pair%s; target <= 30µs each", srv, cli, floor)
		}
	}
	for _, id := range []string{"2", "2m"} {
		rw := get(id)
		if rw == nil {
			continue
		}
		d := rw.results[ds]
		mx := pct(d.lat, 1)
		wakes := 0.0
		if n := len(d.lat); n > 0 {
			wakes = float64(d.wakes) / float64(n)
		}
		if rl, ok := peer(rw, "redislock"); ok && rl.rate() > 0 {
			fair := 0.0
			if len(d.fair) > 0 {
				fair = slices.Min(d.fair)
			}
			check(d.rate() >= rl.rate() && mx <= 50*time.Millisecond && fair >= 0.95 && wakes <= 1.5,
				"%s %s: distsync %s acq/s = %.2fx redislock (%s), max wait %s, fairness %.2f, %.2f wake-ups per acquisition; target >= 1x, max <= 50ms, fairness >= 0.95, about 1 wake-up",
				id, rw.sc.title, num(d.rate()), d.rate()/rl.rate(), num(rl.rate()), dur(mx), fair, wakes)
		}
	}
	if rw := get("3"); rw != nil {
		d := rw.results[ds]
		p50, p99 := pct(d.lat, .5), pct(d.lat, .99)
		check(len(d.lat) > 0 && p50 <= 300*time.Microsecond && p99 <= time.Millisecond, "3 handoff: distsync p50 %s, p99 %s; target p50 <= 0.3ms, p99 <= 1ms", dur(p50), dur(p99))
	}
	if rw := get("5"); rw != nil {
		d := rw.results[ds]
		n := float64(len(d.lat))
		check(n > 0 && d.pubs == int64(n) && d.msgs == int64(n) && d.wakes == int64(n) && d.violations == 0,
			"5 fair lock: per release %.2f PUBLISH, %.2f messages, %.2f wakes; %d violations (order or exclusion); target exactly 1.00 notification per release",
			float64(d.pubs)/n, float64(d.msgs)/n, float64(d.wakes)/n, d.violations)
	}
	if rw := get("8"); rw != nil {
		d := rw.results[ds]
		p50, p99 := pct(d.lat, .5), pct(d.lat, .99)
		check(len(d.lat) > 0 && p50 <= 2*time.Millisecond, "8 Redlock handoff over 3 masters: distsync p50 %s, p99 %s; target p50 <= 2ms", dur(p50), dur(p99))
	}
	if rw := get("9"); rw != nil {
		d := rw.results[ds]
		if rs, ok := peer(rw, "redsync"); ok && rs.rate() > 0 {
			check(d.rate() >= rs.rate() && pct(d.lat, 1) < pct(rs.lat, 1), "9 Redlock contended over 3 masters: distsync %s acq/s = %.2fx redsync (%s), max wait %s (redsync %s); target >= 1x with a lower max wait",
				num(d.rate()), d.rate()/rs.rate(), num(rs.rate()), dur(pct(d.lat, 1)), dur(pct(rs.lat, 1)))
		}
		if s := get("9s"); s != nil && s.results[ds].rate() > 0 {
			// The contended Redlock hands over one acquisition at a time:
			// its pace is at most the uncontended one at G=1.
			fmt.Fprintf(w, "  info 9 vs 9s: distsync contended %s acq/s = %.2fx its uncontended G=1 pairs/s (%s)",
				num(d.rate()), d.rate()/s.results[ds].rate(), num(s.results[ds].rate()))
			if rs, ok := peer(s, "redsync"); ok && rs.rate() > 0 {
				fmt.Fprintf(w, "; redsync's uncontended G=1 %s", num(rs.rate()))
			}
			fmt.Fprintln(w)
		}
	}
	if rw := get("7"); rw != nil {
		d := rw.results[ds]
		slices.Sort(d.rlat)
		check(len(d.rlat) > 0 && pct(d.rlat, .99) <= 20*time.Millisecond, "7 read-write lock, 95%% reads: reads' p99 %s (p50 %s); target <= 20ms",
			dur(pct(d.rlat, .99)), dur(pct(d.rlat, .5)))
	}
	if rw := get("7w"); rw != nil {
		d := rw.results[ds]
		slices.Sort(d.wlat)
		fmt.Fprintf(w, "  info 7w PreferWriters: writes' wait p99 %s (target: a few read hold times; reads p50 %s)\n", dur(pct(d.wlat, .99)), dur(pct(d.lat, .5)))
	}
	if x := r.footprint; x != nil && x.skipped == "" {
		rate := 0.0
		if x.drain > 0 {
			rate = float64(x.drained) / x.drain.Seconds()
		}
		check(x.perHold <= 300, "f footprint: %.0f B per held mutex (%s held); target <= 300 B", x.perHold, num(float64(x.holds)))
		check(x.keysLeft <= 16384 && x.bytesLeft <= 20, "f footprint: %s released names leave %d keys, %.1f B per name; target <= 16 384 keys, <= 20 B per name", num(float64(x.holds)), x.keysLeft, x.bytesLeft)
		check(rate >= 10000 && x.drained == int64(x.waiters), "f footprint: %s waiters on %s names drain at %s acquisitions/s; target >= 10 000", num(float64(x.waiters)), num(float64(x.names)), num(rate))
	}
	for _, x := range r.watchdog {
		if x.lib == "distsync" && x.n >= 100000 && x.skipped == "" {
			check(x.memPerHold <= 1024 && x.lost == 0, "4 watchdog: %s leases renewed in %s (%d ticks, %d round trips), %.0f B per lease; target <= 1 KiB per lease",
				num(float64(x.n)), dur(x.pass), x.ticks, x.roundTrips, x.memPerHold)
		}
	}
}
