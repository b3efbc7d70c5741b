package renewal_test

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/core"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/internal/renewal"
	"github.com/distsync/distsync/observe"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// renew extends KEYS[1] if it holds ARGV[1]: the shape of every renewal.
var renew = core.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

// lostLog records lost callbacks. Its callbacks never block, so a failing
// test cannot leave the watchdog stuck in one.
type lostLog struct {
	mu    sync.Mutex
	calls map[string][]error
	ch    chan string
}

func newLostLog() *lostLog { return &lostLog{calls: map[string][]error{}, ch: make(chan string, 1024)} }

func (l *lostLog) fn(key string) func(error) {
	return func(err error) {
		l.mu.Lock()
		l.calls[key] = append(l.calls[key], err)
		l.mu.Unlock()
		select {
		case l.ch <- key:
		default: // counted in calls; only the first 1024 are announced
		}
	}
}

func (l *lostLog) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls[key])
}

// testLease is a core.Lease renewed with r, reporting to lost.
type testLease struct {
	r    core.Renewal
	what string
	lost func(error)
}

func (l *testLease) Renewal() core.Renewal        { return l.r }
func (l *testLease) What() string                 { return l.what }
func (l *testLease) Kind() (observe.Kind, string) { return observe.KindMutex, "" }
func (l *testLease) Lost(err error) func()        { return func() { l.lost(err) } }

// leaseOf is the lease of key holding "me" for lease, renewed by renew.
func leaseOf(key string, lease time.Duration, lost func(error)) *testLease {
	return &testLease{core.Renewal{Script: renew, Keys: []string{key}, Args: []string{"me", core.Ms(lease)}}, key, lost}
}

// hold sets key with lease and registers it.
func hold(t *testing.T, rc rueidis.Client, w *renewal.Watchdog, key string, lease time.Duration, lost func(error)) core.Entry {
	t.Helper()
	sent := time.Now()
	require.NoError(t, rc.Do(context.Background(), rc.B().Set().Key(key).Value("me").Px(lease).Build()).Error())
	return w.Add(leaseOf(key, lease, lost), sent, 0, 0)
}

func exists(t *testing.T, rc rueidis.Client, key string) bool {
	t.Helper()
	n, err := rc.Do(context.Background(), rc.B().Exists().Key(key).Build()).AsInt64()
	require.NoError(t, err)
	return n == 1
}

func TestRenewsManyLeasesInBatches(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireReal(t, s, "2000 renewals every 200 ms outrun the embedded server's Lua")
	rc := s.Client(t)
	// A lease of 2 s: the renewals come every 667 ms, and a tick of 2000
	// renewals may be that late on a loaded machine (at 600 ms, a lease ran
	// out there before its renewal).
	const lease, n = 2 * time.Second, 2000
	w := renewal.New(rc, lease, nil)
	defer w.Close()
	lost := newLostLog()
	cmds := make(rueidis.Commands, 0, n)
	for i := range n {
		cmds = append(cmds, rc.B().Set().Key("k"+strconv.Itoa(i)).Value("me").Px(lease).Build())
	}
	sent := time.Now()
	for _, r := range rc.DoMulti(context.Background(), cmds...) {
		require.NoError(t, r.Error())
	}
	for i := range n {
		key := "k" + strconv.Itoa(i)
		w.Add(leaseOf(key, lease, lost.fn(key)), sent, 0, 0)
	}
	// Three leases pass: only renewals keep the keys.
	time.Sleep(3 * lease)
	for i := range n {
		require.True(t, exists(t, rc, "k"+strconv.Itoa(i)), "k%d expired", i)
	}
	// Stop the watchdog first, so that no tick is half counted (a round
	// trip sent, its tick not yet ended) when the counters are read.
	w.Close()
	st := w.Stats()
	assert.Zero(t, st.Lost.Load())
	ticks, trips, renewals := st.Ticks.Load(), st.RoundTrips.Load(), st.Renewals.Load()
	t.Logf("%d ticks, %d round trips, %d renewals", ticks, trips, renewals)
	assert.GreaterOrEqual(t, renewals, int64(2*n), "every lease renewed at least twice")
	// Leases registered together are renewed together: a round trip per
	// tick (at most one batch each), not one per lease; plus one when the
	// server first lacks the script (NOSCRIPT, resent with its source).
	assert.LessOrEqual(t, trips, ticks*int64((n+renewal.BatchSize-1)/renewal.BatchSize)+1)
	assert.Less(t, trips, renewals/100)
}

func TestGoneLeaseIsLostAtOnce(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rc := s.Client(t)
	const lease = 900 * time.Millisecond
	w := renewal.New(rc, lease, nil)
	defer w.Close()
	lost := newLostLog()
	hold(t, rc, w, "kept", lease, lost.fn("kept"))
	hold(t, rc, w, "deleted", lease, lost.fn("deleted"))
	hold(t, rc, w, "taken", lease, lost.fn("taken"))
	require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key("deleted").Build()).Error())
	require.NoError(t, rc.Do(context.Background(), rc.B().Set().Key("taken").Value("other").Build()).Error())
	got := map[string]bool{<-lost.ch: true, <-lost.ch: true}
	assert.Equal(t, map[string]bool{"deleted": true, "taken": true}, got)
	for _, k := range []string{"deleted", "taken"} {
		assert.Equal(t, 1, lost.count(k), "lost is reported once")
		assert.ErrorIs(t, lost.calls[k][0], core.ErrLeaseLost)
	}
	assert.Equal(t, 1, w.Len())
	assert.Zero(t, lost.count("kept"))
	v, err := rc.Do(context.Background(), rc.B().Get().Key("taken").Build()).ToString()
	require.NoError(t, err)
	assert.Equal(t, "other", v, "a renewal never touches a foreign lease")
}

func TestRemovedLeaseIsNotRenewed(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rc := s.Client(t)
	const lease = 300 * time.Millisecond
	w := renewal.New(rc, lease, nil)
	defer w.Close()
	lost := newLostLog()
	e := hold(t, rc, w, "released", lease, lost.fn("released"))
	hold(t, rc, w, "kept", lease, lost.fn("kept"))
	w.Remove(e)
	require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key("released").Build()).Error())
	before := w.Stats().Renewals.Load()
	require.Eventually(t, func() bool { return w.Stats().Renewals.Load() >= before+3 }, 10*time.Second, time.Millisecond)
	assert.Zero(t, lost.count("released"), "a removed lease is never reported lost")
	assert.Equal(t, 1, w.Len())
}

func TestNetworkFailureRetriedUntilDeadline(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	rc := s.Client(t)
	const lease = 1500 * time.Millisecond
	w := renewal.New(rc, lease, nil)
	defer w.Close()
	lost := newLostLog()

	// A pause shorter than what is left of the lease after a renewal is
	// bridged by retries.
	hold(t, rc, w, "k", lease, lost.fn("k"))
	require.Eventually(t, func() bool { return w.Stats().Renewals.Load() >= 1 }, 10*time.Second, time.Millisecond)
	s.Pause()
	time.Sleep(lease / 3)
	s.Resume()
	before := w.Stats().Renewals.Load()
	require.Eventually(t, func() bool { return w.Stats().Renewals.Load() >= before+2 }, 10*time.Second, time.Millisecond)
	assert.Zero(t, lost.count("k"))
	assert.True(t, exists(t, rc, "k"))

	// A pause past the deadline is reported lost, with the lease's deadline
	// passed and not before.
	s.Pause()
	paused := time.Now()
	var got string
	select {
	case got = <-lost.ch:
	case <-time.After(10 * lease):
		s.Resume()
		t.Fatal("lease not reported lost")
	}
	s.Resume()
	assert.Equal(t, "k", got)
	assert.GreaterOrEqual(t, time.Since(paused), lease/3, "reported only once the deadline passed")
	assert.ErrorIs(t, lost.calls["k"][0], core.ErrLeaseLost)
	assert.ErrorContains(t, lost.calls["k"][0], "the lease ran out", "said as what happened")
}

func TestCloseStopsRenewing(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rc := s.Client(t)
	w := renewal.New(rc, time.Second, nil)
	lost := newLostLog()
	hold(t, rc, w, "k", time.Second, lost.fn("k"))
	w.Close()
	w.Close() // idempotent
	assert.Zero(t, w.Len())
	e := w.Add(leaseOf("x", time.Second, lost.fn("x")), time.Now(), 0, 0)
	w.Remove(e)
	assert.Zero(t, w.Len(), "a closed watchdog registers nothing")
}

// A Lost callback that never returns holds up neither the renewal of the
// other leases nor Close.
func TestBlockedLostHoldsUpNothing(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rc := s.Client(t)
	const lease = 300 * time.Millisecond
	w := renewal.New(rc, lease, nil)
	defer w.Close() // after unblock, should the test fail early
	called, unblock := make(chan struct{}), make(chan struct{})
	defer close(unblock)
	hold(t, rc, w, "blocked", lease, func(error) { close(called); <-unblock })
	lost := newLostLog()
	hold(t, rc, w, "kept", lease, lost.fn("kept"))
	require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key("blocked").Build()).Error())
	<-called
	before := w.Stats().Renewals.Load()
	require.Eventually(t, func() bool { return w.Stats().Renewals.Load() >= before+2 }, 10*time.Second, time.Millisecond)
	assert.True(t, exists(t, rc, "kept"))
	closed := make(chan struct{})
	go func() { w.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close waits for a Lost callback that never returns")
	}
	assert.Zero(t, lost.count("kept"))
}

// A server that lost its script cache (a restart, SCRIPT FLUSH) gets the
// renewal script again; no lease is lost for it.
func TestScriptFlushIsSurvived(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	rc := s.Client(t)
	const lease = 900 * time.Millisecond
	w := renewal.New(rc, lease, nil)
	defer w.Close()
	lost := newLostLog()
	hold(t, rc, w, "k", lease, lost.fn("k"))
	require.Eventually(t, func() bool { return w.Stats().Renewals.Load() >= 1 }, 10*time.Second, time.Millisecond)
	require.NoError(t, rc.Do(context.Background(), rc.B().ScriptFlush().Build()).Error())
	before := w.Stats().Renewals.Load()
	require.Eventually(t, func() bool { return w.Stats().Renewals.Load() >= before+2 }, 10*time.Second, time.Millisecond)
	assert.Zero(t, lost.count("k"))
	assert.True(t, exists(t, rc, "k"))
}

// BenchmarkAddRemove is what a watchdog lock and unlock cost the watchdog:
// registering a lease in the renewal queue and the expiry heap, and
// removing it, among b.N others registered.
// Leases that come and go, each due after the ones before, never wake the
// renewing goroutine: not even when it finds them gone (a lock and its
// unlock take less than its wake-up), as it then looks again about when the
// next one would be due.
func TestAddRemoveWakesNobody(t *testing.T) {
	w := renewal.New(nil, 30*time.Second, nil) // no renewal falls due
	defer w.Close()
	l := leaseOf("k", 30*time.Second, func(error) {})
	for range 1000 {
		w.Remove(w.Add(l, time.Now(), 0, 0))
		runtime.Gosched() // lets the renewing goroutine look at the empty queue
	}
	assert.Zero(t, w.Stats().Wakes.Load())
}

func BenchmarkAddRemove(b *testing.B) {
	w := renewal.New(nil, time.Hour, nil) // no renewal falls due
	defer w.Close()
	l := leaseOf("k", time.Hour, func(error) {})
	for range 10000 {
		w.Add(l, time.Now(), 0, 0)
	}
	b.ReportAllocs()
	for b.Loop() {
		w.Remove(w.Add(l, time.Now(), 0, 0))
	}
}
