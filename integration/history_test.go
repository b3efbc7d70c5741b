package integration_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A history records, for one lock name, every hold that the holders of a
// scenario were granted, and checks the two properties a lock promises:
// exclusion (no two holds at once) and fencing (tokens increase in the order
// of acquisition).
//
// The model. A holder may act on the protected resource only between the
// moment its acquire call returned and the last moment it saw its hold alive:
// when it invokes Unlock, or the last check of its lock context before that
// context reported the loss (ctx.Done). Every instant is read from this
// process's monotonic clock, and each window is conservative on both sides:
//
//   - start: taken after TryLock returned, so after the server granted;
//   - end: taken before the check of ctx.Err() that found the context alive
//     (cancellation is permanent, so it was alive at that instant), or before
//     Unlock is sent, so before the server deleted the lock.
//
// So each observed window lies inside the span in which the holder's context
// was alive, which the library promises lies inside the true hold on the
// server: the watchdog's deadline is computed from the send time of the
// request that last extended the lease, which precedes the server's expiry.
// Two overlapping observed windows therefore prove that two holders were both
// entitled to act at once: a double grant, or a context cancelled too late.
// The time ctx.Done was seen is recorded too (lostAt) but is not a window end:
// it comes after the cancellation by however long the goroutine took to run.
//
// Why an interval check and not porcupine's linearizability search: the
// windows are exact instants of one clock, not call/return intervals of
// operations with an unknown linearization point, and a lease can end on the
// server with no client operation at all (expiry, a restart, a failover),
// which a mutex model could only express as a release whose call time is
// unknown. With point windows, linearizability of a mutex reduces to "sorted
// by start, each hold ends before the next starts": an O(n log n) sweep with
// no dependency, which also names the offending pair.
type history struct {
	name string
	base time.Time

	mu    sync.Mutex
	holds []*hold
}

// hold is one grant in a history. Times are offsets from the history's base.
type hold struct {
	h      *history
	who    string
	token  int64
	start  time.Duration // acquire returned
	end    time.Duration // last instant known held: release invoked or last live check
	lostAt time.Duration // ctx.Done observed; 0 when not lost
	how    string        // "held", "released", "lost", "killed"
}

func newHistory(name string) *history {
	return &history{name: name, base: time.Now()}
}

func (h *history) now() time.Duration { return time.Since(h.base) }

// acquired records a hold that starts now: call it right after the acquire
// call returned.
func (h *history) acquired(who string, token int64) *hold {
	t := h.now()
	return h.add(&hold{who: who, token: token, start: t, end: t, how: "held"})
}

// add records a hold made elsewhere (tests of the checker, other processes).
func (h *history) add(hd *hold) *hold {
	hd.h = h
	h.mu.Lock()
	h.holds = append(h.holds, hd)
	h.mu.Unlock()
	return hd
}

// alive samples the holder's view: it reports whether ctx (the context the
// acquire call returned) is still alive, extending the window if so and
// recording the loss if not.
func (hd *hold) alive(ctx context.Context) bool {
	h := hd.h
	t := h.now()
	err := ctx.Err()
	h.mu.Lock()
	defer h.mu.Unlock()
	if hd.how != "held" {
		return false
	}
	if err != nil {
		hd.how, hd.lostAt = "lost", h.now()
		return false
	}
	hd.end = t
	return true
}

// sampleEvery is how often a working holder checks its context: the window's
// end can be this much earlier than the true cancellation, never later.
const sampleEvery = time.Millisecond

// work acts as a holder doing work under ctx until stop is closed or ctx is
// done, checking ctx every sampleEvery. It reports whether the hold was alive
// when stop closed.
func (hd *hold) work(ctx context.Context, stop <-chan struct{}) bool {
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		if !hd.alive(ctx) {
			return false
		}
		select {
		case <-stop:
			return hd.alive(ctx)
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// release ends the window as the holder invokes unlock, if the hold is still
// alive, and then calls unlock.
func (hd *hold) release(ctx context.Context, unlock func(context.Context) error) error {
	if hd.alive(ctx) {
		hd.h.mu.Lock()
		hd.how = "released"
		hd.h.mu.Unlock()
	}
	return unlock(ctx)
}

// killed ends the window at the kill of the holder's process: call it once
// the process is gone. The end is the kill, later than the holder's last act.
func (hd *hold) killed() {
	h := hd.h
	t := h.now()
	h.mu.Lock()
	hd.end, hd.how = t, "killed"
	h.mu.Unlock()
}

// overlap is two holds whose windows intersect.
type overlap struct{ first, second hold }

func (o overlap) String() string {
	return fmt.Sprintf("%s (token %d) held until %v, %s (token %d) acquired at %v: %v overlap",
		o.first.who, o.first.token, o.first.end, o.second.who, o.second.token, o.second.start, o.first.end-o.second.start)
}

// snapshot returns the holds sorted by start.
func (h *history) snapshot() []hold {
	h.mu.Lock()
	out := make([]hold, len(h.holds))
	for i, hd := range h.holds {
		out[i] = *hd
	}
	h.mu.Unlock()
	slices.SortStableFunc(out, func(a, b hold) int { return int(a.start - b.start) })
	return out
}

// overlaps sweeps the holds in order of start and reports each hold that
// starts before the latest end seen so far, paired with the hold that ends
// there.
func (h *history) overlaps() []overlap {
	var out []overlap
	var last *hold
	holds := h.snapshot()
	for i := range holds {
		hd := &holds[i]
		if last != nil && hd.start < last.end {
			out = append(out, overlap{*last, *hd})
		}
		if last == nil || hd.end > last.end {
			last = hd
		}
	}
	return out
}

// tokenErrors reports consecutive holds (in order of start) whose tokens do
// not strictly increase.
func (h *history) tokenErrors() []string {
	var out []string
	holds := h.snapshot()
	for i := 1; i < len(holds); i++ {
		a, b := holds[i-1], holds[i]
		if b.token <= a.token {
			out = append(out, fmt.Sprintf("%s acquired at %v with token %d after %s at %v with token %d",
				b.who, b.start, b.token, a.who, a.start, a.token))
		}
	}
	return out
}

func (h *history) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "history of %q:", h.name)
	for _, hd := range h.snapshot() {
		fmt.Fprintf(&b, "\n  %-10s token %-17d [%v, %v] %s", hd.who, hd.token, hd.start, hd.end, hd.how)
		if hd.lostAt > 0 {
			fmt.Fprintf(&b, " (loss seen at %v)", hd.lostAt)
		}
	}
	return b.String()
}

// histories counts the histories checked in this run, for the log.
var histories struct {
	sync.Mutex
	checked, holds int
}

func counted(h *history) {
	histories.Lock()
	histories.checked++
	histories.holds += len(h.snapshot())
	histories.Unlock()
}

// requireExclusive fails the test unless the history has no overlap and its
// tokens increase: what a deployment that promises exclusion must show.
func requireExclusive(t *testing.T, h *history) {
	t.Helper()
	counted(h)
	t.Log(h)
	require.Empty(t, h.overlaps(), "double grant where exclusion is promised\n%v", h)
	require.Empty(t, h.tokenErrors(), "fencing tokens out of order\n%v", h)
}

// requireDoubleGrant fails the test unless the checker finds an overlap: the
// scenario is one where the deployment does not promise exclusion and the test
// shows why. Fencing tokens must still increase: they are the defence.
func requireDoubleGrant(t *testing.T, h *history) {
	t.Helper()
	counted(h)
	t.Log(h)
	ov := h.overlaps()
	require.NotEmpty(t, ov, "expected the checker to find a double grant\n%v", h)
	for _, o := range ov {
		t.Logf("double grant: %v", o)
	}
	require.Empty(t, h.tokenErrors(), "fencing tokens out of order\n%v", h)
}

// The checker accepts a clean history (back to back holds, touching ends
// included) and finds an overlap and an out-of-order token.
func TestHistoryChecker(t *testing.T) {
	ms := time.Millisecond
	clean := newHistory("clean")
	clean.add(&hold{who: "a", token: 10, start: 0, end: 10 * ms, how: "released"})
	clean.add(&hold{who: "c", token: 12, start: 25 * ms, end: 40 * ms, how: "lost", lostAt: 45 * ms})
	clean.add(&hold{who: "b", token: 11, start: 10 * ms, end: 20 * ms, how: "released"})
	assert.Empty(t, clean.overlaps())
	assert.Empty(t, clean.tokenErrors())

	double := newHistory("double")
	double.add(&hold{who: "a", token: 10, start: 0, end: 100 * ms, how: "lost"})
	double.add(&hold{who: "b", token: 11, start: 10 * ms, end: 20 * ms, how: "released"})
	double.add(&hold{who: "c", token: 12, start: 50 * ms, end: 60 * ms, how: "released"})
	ov := double.overlaps()
	require.Len(t, ov, 2, "a's long window overlaps both b and c")
	assert.Equal(t, "a", ov[0].first.who)
	assert.Equal(t, "b", ov[0].second.who)
	assert.Equal(t, "c", ov[1].second.who)
	assert.Contains(t, ov[0].String(), "90ms overlap")
	assert.Empty(t, double.tokenErrors())

	fenced := newHistory("fenced")
	fenced.add(&hold{who: "a", token: 10, start: 0, end: 10 * ms})
	fenced.add(&hold{who: "b", token: 10, start: 20 * ms, end: 30 * ms})
	assert.Empty(t, fenced.overlaps())
	require.Len(t, fenced.tokenErrors(), 1)

	// Recording through the holder's view: a released hold ends when the
	// release was invoked; a lost one at its last live check.
	live := newHistory("live")
	ctx, cancel := context.WithCancel(context.Background())
	hd := live.acquired("x", 1)
	require.True(t, hd.alive(ctx))
	cancel()
	stop := make(chan struct{})
	close(stop)
	assert.False(t, hd.work(ctx, stop))
	assert.Equal(t, "lost", hd.how)
	assert.GreaterOrEqual(t, hd.lostAt, hd.end)
	hd2 := live.acquired("y", 2)
	require.NoError(t, hd2.release(context.Background(), func(context.Context) error { return nil }))
	assert.Equal(t, "released", hd2.how)
	assert.Empty(t, live.overlaps())
}
