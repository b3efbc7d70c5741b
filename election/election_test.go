package election_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/election"
	"github.com/distsync/distsync/internal/acquire"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/watchdog"
)

func TestMain(m *testing.M) {
	options = dstest.ExampleOptions(0)
	redistest.Main(m)
}

func newElection(t testing.TB, c *distsync.Client, name string) *election.Election {
	t.Helper()
	e, err := c.Election(name)
	require.NoError(t, err)
	return e
}

// campaign runs e.Campaign in the background.
var campaign = dstest.CampaignAsync

// receive returns the outcome of a campaign, which must lead.
func receive(t *testing.T, ch <-chan dstest.Campaign, what string) dstest.Campaign {
	t.Helper()
	return dstest.Elected(t, ch, 10*time.Second, what)
}

// Candidates lead in arrival order, across Clients; a resign hands over at
// once, and each new leader's term is larger.
func TestArrivalOrderAndTerms(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	a := newElection(t, dstest.Client(t), name)
	ctx := context.Background()
	_, err := a.Leader(ctx)
	require.ErrorIs(t, err, distsync.ErrNoLeader)

	la, ta, err := a.Campaign(ctx, "a")
	require.NoError(t, err)
	st, err := a.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, election.State{Leader: true, Value: "a", Term: ta, Since: st.Since}, st)
	assert.False(t, st.Since.IsZero())

	var chans []<-chan dstest.Campaign
	var elections []*election.Election
	for i, v := range []string{"b", "c", "d"} {
		elections = append(elections, newElection(t, dstest.Client(t), name))
		chans = append(chans, campaign(elections[i], ctx, v))
		dstest.AwaitCandidates(t, a, i+1)
	}
	prev, prevCtx, prevE := ta, la, a
	for i, v := range []string{"b", "c", "d"} {
		require.NoError(t, prevE.Resign(prevCtx))
		assert.ErrorIs(t, context.Cause(prevCtx), distsync.ErrReleased)
		w := receive(t, chans[i], v)
		assert.Greater(t, w.Term, prev, "%s's term", v)
		st, err := a.Leader(ctx)
		require.NoError(t, err)
		assert.Equal(t, v, st.Value)
		assert.Equal(t, w.Term, st.Term)
		prev, prevCtx, prevE = w.Term, w.Lead, elections[i]
	}
	require.NoError(t, prevE.Resign(prevCtx))
	st, err = a.Leader(ctx)
	require.ErrorIs(t, err, distsync.ErrNoLeader)
	assert.Equal(t, election.State{}, st)
	assert.Empty(t, dstest.Keys(t, dstest.Client(t), "*{"+name+"}*:cands"), "no candidate left")
	assert.Empty(t, dstest.Keys(t, dstest.Client(t), "*{"+name+"}*:wins"), "no candidate left")
}

func TestProclaim(t *testing.T) {
	t.Parallel()
	e := newElection(t, dstest.Client(t), dstest.Name(t))
	ctx := context.Background()
	l, term, err := e.Campaign(ctx, "v1")
	require.NoError(t, err)
	require.NoError(t, e.Proclaim(l, "v2"))
	st, err := e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "v2", st.Value)
	assert.Equal(t, term, st.Term, "same term")

	// Campaign on the leadership proclaims.
	l2, term2, err := e.Campaign(l, "v3")
	require.NoError(t, err)
	assert.Equal(t, term, term2)
	assert.Equal(t, l, l2)
	st, err = e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "v3", st.Value)

	assert.ErrorIs(t, e.Proclaim(ctx, "x"), distsync.ErrNotHeld, "not a leadership context")
	require.NoError(t, e.Resign(l))
	assert.ErrorIs(t, e.Proclaim(l, "x"), distsync.ErrNotHeld, "after Resign")
	assert.ErrorIs(t, e.Resign(l), distsync.ErrNotHeld, "twice")
}

// A campaign whose context ends while it waits returns ctx's error and
// leaves no candidate entry; the next one is not held up by it.
func TestCancelledCampaignLeavesNothing(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	e := newElection(t, dstest.Client(t), name)
	ctx := context.Background()
	l, _, err := e.Campaign(ctx, "leader")
	require.NoError(t, err)

	cctx, cancel := context.WithCancel(ctx)
	ch := campaign(newElection(t, dstest.Client(t), name), cctx, "quitter")
	dstest.AwaitCandidates(t, e, 1)
	cancel()
	w := <-ch
	require.ErrorIs(t, w.Err, context.Canceled)
	n, err := e.Candidates(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Empty(t, dstest.Keys(t, dstest.Client(t), "*{"+name+"}*:cands"))

	next := campaign(newElection(t, dstest.Client(t), name), ctx, "next")
	dstest.AwaitCandidates(t, e, 1)
	require.NoError(t, e.Resign(l))
	w = receive(t, next, "next")
	assert.NoError(t, context.Cause(w.Lead))
	_, err = e.ForceResign(ctx)
	require.NoError(t, err)
}

// A deposed leader's context ends by push, long before its next renewal.
func TestForceResignEndsLeadershipByPush(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	lease := time.Minute // a renewal would come after 20 s
	leader := newElection(t, dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease }), name)
	other := newElection(t, dstest.Client(t), name)
	ctx := context.Background()
	l, term, err := leader.Campaign(ctx, "old")
	require.NoError(t, err)
	next := campaign(other, ctx, "new")
	dstest.AwaitCandidates(t, other, 1)

	ok, err := other.ForceResign(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	select {
	case <-l.Done():
	case <-time.After(lease / 6):
		t.Fatal("the deposed leader was not told")
	}
	assert.ErrorIs(t, context.Cause(l), distsync.ErrLeaseLost)
	// Worded for a person, not a Go struct: by the Client's control
	// channel or by the election's change channel, whichever comes first.
	if cause := context.Cause(l).Error(); !strings.Contains(cause, "deposed by ForceResign") {
		assert.Contains(t, cause, fmt.Sprintf("deposed: the leadership of term %d ended", term))
	}
	assert.NotContains(t, context.Cause(l).Error(), "{")
	w := receive(t, next, "the head candidate")
	assert.Greater(t, w.Term, term)
	ok, err = other.ForceResign(ctx)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = other.ForceResign(ctx)
	require.NoError(t, err)
	assert.False(t, ok, "nobody leads")
}

// A leader key deleted by hand (which publishes nothing) ends the
// leadership by push, long before the next renewal; a candidate then leads.
func TestDeletedKeyEndsLeadershipByPush(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	lease := time.Minute // a renewal would come after 20 s
	lc := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	redistest.RequireReal(t, redistest.Shared(t), "client-side caching's invalidation messages (RESP3)")
	leader := newElection(t, lc, name)
	ctx := context.Background()
	l, _, err := leader.Campaign(ctx, "leads")
	require.NoError(t, err)
	// Renewals arrive as changes too: the leadership outlives them.
	rc := lc.Rueidis()
	require.NoError(t, rc.Do(ctx, rc.B().Pexpire().Key(leader.Key()).Milliseconds(lease.Milliseconds()).Build()).Error())
	require.NoError(t, rc.Do(ctx, rc.B().Del().Key(leader.Key()+":unrelated").Build()).Error())
	require.NoError(t, rc.Do(ctx, rc.B().Del().Key(leader.Key()).Build()).Error())
	select {
	case <-l.Done():
	case <-time.After(lease / 6):
		t.Fatal("the leader whose key was deleted was not told")
	}
	assert.ErrorIs(t, context.Cause(l), distsync.ErrLeaseLost)
}

// Observe reports the state when it starts and every change a reader
// keeping up is given time for, "nobody leads" included, in term order.
func TestObserveEveryState(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	c := dstest.Client(t)
	e := newElection(t, c, name)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := newElection(t, dstest.Client(t), name).Observe(ctx)
	next := func(what string) election.State {
		t.Helper()
		select {
		case st, ok := <-obs:
			require.True(t, ok, what)
			return st
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no state", what)
		}
		return election.State{}
	}
	first := next("initial")
	assert.Equal(t, election.State{Term: first.Term}, first, "nobody leads")

	l, t1, err := e.Campaign(ctx, "a")
	require.NoError(t, err)
	st := next("a leads")
	assert.Equal(t, election.State{Leader: true, Value: "a", Term: t1, Since: st.Since}, st)

	require.NoError(t, e.Proclaim(l, "a2"))
	st = next("a proclaims")
	assert.Equal(t, election.State{Leader: true, Value: "a2", Term: t1, Since: st.Since}, st)

	require.NoError(t, e.Resign(l))
	assert.Equal(t, election.State{Term: t1}, next("nobody leads"))

	l, t2, err := e.Campaign(ctx, "b")
	require.NoError(t, err)
	st = next("b leads")
	assert.Equal(t, election.State{Leader: true, Value: "b", Term: t2, Since: st.Since}, st)
	assert.Greater(t, t2, t1)

	require.NoError(t, e.Resign(l))
	assert.Equal(t, election.State{Term: t2}, next("nobody leads again"))

	// A leader whose lease runs out publishes nothing: the observer looks
	// when the lease ends.
	fc, f := dstest.FaultyClient(t, redistest.Shared(t), 300*time.Millisecond)
	f.Inject(&dstest.Rule{Match: dstest.Script("Extend the leader's lease"), Fault: dstest.LoseRequest})
	l, t3, err := newElection(t, fc, name).Campaign(ctx, "c")
	require.NoError(t, err)
	st = next("c leads")
	assert.Equal(t, election.State{Leader: true, Value: "c", Term: t3, Since: st.Since}, st)
	assert.Equal(t, election.State{Term: t3}, next("c's lease ran out"))
	<-l.Done()
	assert.ErrorIs(t, context.Cause(l), distsync.ErrLeaseLost)

	cancel()
	for range obs {
	}
}

// A slow reader is given the newest state, not the ones it missed.
func TestObserveSlowReaderSeesNewest(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	e := newElection(t, dstest.Client(t), name)
	ctx := context.Background()
	l, term, err := e.Campaign(ctx, "v0")
	require.NoError(t, err)
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	obs := e.Observe(octx)
	defer e.Resign(l)
	first := <-obs
	assert.Equal(t, "v0", first.Value)
	for _, v := range []string{"v1", "v2", "v3", "v4"} {
		require.NoError(t, e.Proclaim(l, v))
	}
	// The reader came back late: whatever it is given next, the newest is
	// reached, in order, without an older state after a newer one.
	seen := 0
	for st := range obs {
		assert.Equal(t, term, st.Term)
		require.GreaterOrEqual(t, st.Value, "v1")
		if st.Value == "v4" {
			break
		}
		seen++
		require.Less(t, seen, 4)
	}
}

func TestInvalidAndClosed(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	_, err := c.Election("")
	assert.ErrorIs(t, err, distsync.ErrInvalidName)
	e := newElection(t, c, dstest.Name(t))
	c.Close()
	_, _, err = e.Campaign(context.Background(), "x")
	assert.ErrorIs(t, err, distsync.ErrClosed)
	_, err = e.Leader(context.Background())
	assert.ErrorIs(t, err, distsync.ErrClosed)
	_, ok := <-e.Observe(context.Background())
	assert.False(t, ok, "closed at once")
	_, err = c.Election("x")
	assert.True(t, errors.Is(err, distsync.ErrClosed))
}

// Names are one namespace across kinds.
func TestWrongKind(t *testing.T) {
	t.Parallel()
	redistest.RequireReal(t, redistest.Shared(t), redistest.ErrorTables)
	c := dstest.Client(t)
	name := dstest.Name(t)
	m, err := c.Mutex(name)
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	defer m.Unlock(held)
	e := newElection(t, c, name)
	_, _, err = e.Campaign(context.Background(), "x")
	assert.ErrorIs(t, err, distsync.ErrWrongKind)
	_, err = e.Leader(context.Background())
	assert.ErrorIs(t, err, distsync.ErrWrongKind)
}

// A head candidate that vanished (its process died while queued) delays the
// election by the hand-off lease, not by its wait window: the resign nudges
// the next candidate, and the vanished one's window is cut.
func TestVanishedHeadCandidate(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	long := func(o *distsync.Options) { o.Watchdog.Lease, o.WaiterWindow = time.Minute, time.Minute }
	c := dstest.Client(t, long)
	e := newElection(t, c, name)
	ctx := context.Background()
	l, _, err := e.Campaign(ctx, "leader")
	require.NoError(t, err)
	rc := c.Rueidis()
	require.NoError(t, rc.Do(ctx, rc.B().Rpush().Key(e.Key()+":cands").Element("dead").Build()).Error())
	require.NoError(t, rc.Do(ctx, rc.B().Zadd().Key(e.Key()+":wins").ScoreMember().ScoreMember(float64(time.Now().Add(time.Hour).UnixMilli()), "dead").Build()).Error())
	next := campaign(newElection(t, dstest.Client(t, long), name), ctx, "next")
	dstest.AwaitCandidates(t, e, 2)
	require.NoError(t, e.Resign(l))
	select {
	case w := <-next:
		require.NoError(t, w.Err)
		require.NoError(t, context.Cause(w.Lead))
		_, err := e.ForceResign(ctx)
		require.NoError(t, err)
	case <-time.After(15 * time.Second): // the window is a minute
		t.Fatal("the next candidate waits for the vanished head's window")
	}
}

// Where waiters spin (no pub/sub), candidates poll and an observer reads the
// state every back-off: changes are still reported, in term order.
func TestElectionSpinning(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	spin := func(o *distsync.Options) { o.Spin = distsync.Spin{Min: time.Millisecond, Max: 20 * time.Millisecond} }
	e := newElection(t, dstest.Client(t, spin), name)
	other := newElection(t, dstest.Client(t, spin), name)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := other.Observe(ctx)
	first := <-obs
	assert.False(t, first.Leader)
	l, term, err := e.Campaign(ctx, "a")
	require.NoError(t, err)
	st := <-obs
	assert.Equal(t, election.State{Leader: true, Value: "a", Term: term, Since: st.Since}, st)
	next := campaign(other, ctx, "b")
	dstest.AwaitCandidates(t, e, 1)
	require.NoError(t, e.Resign(l))
	w := receive(t, next, "the spinning candidate")
	assert.Greater(t, w.Term, term)
	for st = range obs {
		if st.Term == w.Term && st.Leader {
			break
		}
	}
	require.NoError(t, other.Resign(w.Lead))
}

// An election's value is bounded (election.MaxValue; ErrInvalidArgument
// beyond, for Campaign and Proclaim), and a leader's renewals read no
// value: each renewal is a change of the leader's key that the leader's
// tracking hears of, and what it then reads is the term alone, never the
// state with its value. A leader with the largest value and a short lease
// leads on through its renewals.
func TestValueBoundedAndRenewalsReadNoValue(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "client-side caching's invalidation messages (RESP3)")
	// A 1 s lease, not shorter: what is asserted is what renewals read, and
	// a shorter lease's renewals missed its end on a loaded machine (load 10).
	c, f := dstest.FaultyClient(t, s, time.Second)
	e := newElection(t, c, dstest.Name(t))
	ctx := context.Background()
	_, _, err := e.Campaign(ctx, strings.Repeat("x", election.MaxValue+1))
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	reads := f.Inject(&dstest.Rule{Match: dstest.Script("Who leads (Leader, Observe"), Fault: dstest.Hook, Then: func() {}})
	l, _, err := e.Campaign(ctx, strings.Repeat("x", election.MaxValue))
	require.NoError(t, err)
	assert.ErrorIs(t, e.Proclaim(l, strings.Repeat("y", election.MaxValue+1)), distsync.ErrInvalidArgument)
	before := c.Stats().Renewals
	require.Eventually(t, func() bool { return c.Stats().Renewals >= before+3 }, 20*time.Second, time.Millisecond)
	assert.NoError(t, l.Err(), "it leads on through its renewals")
	assert.Zero(t, reads.Hits(), "states read while it led")
	require.NoError(t, e.Resign(l))
}

// When nobody leads, Observe gives the term of the leader that just ended
// (the election's last term), whether or not this observer read that
// leader: an observer started after a leader resigned, and one that reads
// only every 2 s (spinning, as one cut off from its changes does) and misses
// a whole leadership, both end on the term of the leader that ended.
func TestObserveNobodyLeadsCarriesTheLastTerm(t *testing.T) {
	t.Parallel()
	e := newElection(t, dstest.Client(t), dstest.Name(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, t1, err := e.Campaign(ctx, "a")
	require.NoError(t, err)
	require.NoError(t, e.Resign(l))
	assert.Equal(t, election.State{Term: t1}, <-e.Observe(ctx), "started after the leader of term %d resigned", t1)

	obs := e.Observe(distsync.WithSpin(ctx, distsync.Spin{Max: 2 * time.Second}))
	require.Equal(t, election.State{Term: t1}, <-obs)
	l, t2, err := e.Campaign(ctx, "b")
	require.NoError(t, err)
	require.NoError(t, e.Resign(l))
	var last election.State
	for last.Leader || last.Term < t2 {
		select {
		case st := <-obs:
			require.GreaterOrEqual(t, st.Term, last.Term, "term order")
			last = st
		case <-time.After(20 * time.Second):
			t.Fatalf("no state with nobody leading after term %d; the last %v", t2, last)
		}
	}
	assert.Equal(t, election.State{Term: t2}, last)
}

// An election's lease is its own (WithLease), not the Client's: the
// leader's key lives that long, its renewals keep it at that, and when its
// renewals stop (a leader that died) a successor leads within about that
// lease, not the Client's 30 s.
func TestElectionLeaseOfItsOwn(t *testing.T) {
	t.Parallel()
	const lease = 300 * time.Millisecond
	s := redistest.Shared(t)
	name := dstest.Name(t)
	lc, f := dstest.FaultyClient(t, s, 0) // the Client's lease: the default, 30 s
	leader, err := lc.Election(name, election.WithLease(lease))
	require.NoError(t, err)
	ctx := context.Background()
	l, term, err := leader.Campaign(ctx, "short")
	require.NoError(t, err)
	rc := lc.Rueidis()
	pttl := func() time.Duration {
		ms, err := rc.Do(ctx, rc.B().Pttl().Key(leader.Key()).Build()).AsInt64()
		require.NoError(t, err)
		return time.Duration(ms) * time.Millisecond
	}
	assert.LessOrEqual(t, pttl(), lease)
	before := lc.Stats().Renewals
	require.Eventually(t, func() bool { return lc.Stats().Renewals >= before+3 }, 20*time.Second, time.Millisecond)
	require.NoError(t, l.Err(), "renewed at its own lease's pace")
	assert.LessOrEqual(t, pttl(), lease, "renewed to its own lease")

	f.Inject(&dstest.Rule{Match: dstest.Script("Extend the leader's lease"), Fault: dstest.LoseRequest})
	start := time.Now()
	next := campaign(newElection(t, dstest.Client(t), name), ctx, "next")
	w := receive(t, next, "the successor of a leader whose renewals stopped")
	assert.Less(t, time.Since(start), 10*time.Second, "succeeded within about its lease, not the Client's")
	assert.Greater(t, w.Term, term)
	<-l.Done()
	assert.ErrorIs(t, context.Cause(l), distsync.ErrLeaseLost)

	_, err = lc.Election(name, election.WithLease(time.Millisecond))
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	_, err = lc.Election(name, election.WithLiveness(nil))
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
}

// A liveness check (WithLiveness) is called at each renewal; when it
// fails, the leader resigns, its context ends with the check's error (and
// ErrReleased) as cause, and the next candidate leads at once.
func TestElectionLivenessCheck(t *testing.T) {
	t.Parallel()
	const lease = 300 * time.Millisecond
	name := dstest.Name(t)
	stuck := errors.New("the work loop is stuck")
	var calls atomic.Int64
	var failing atomic.Bool
	lc := dstest.Client(t)
	leader, err := lc.Election(name, election.WithLease(lease), election.WithLiveness(func(ctx context.Context) error {
		calls.Add(1)
		if failing.Load() {
			return stuck
		}
		return ctx.Err()
	}))
	require.NoError(t, err)
	ctx := context.Background()
	l, term, err := leader.Campaign(ctx, "checked")
	require.NoError(t, err)
	next := campaign(newElection(t, dstest.Client(t), name), ctx, "next")
	dstest.AwaitCandidates(t, leader, 1)
	require.Eventually(t, func() bool { return calls.Load() >= 3 }, 20*time.Second, time.Millisecond, "called at each renewal")
	require.NoError(t, l.Err(), "a passing check changes nothing")

	failing.Store(true)
	select {
	case <-l.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("a failing liveness check did not end the leadership")
	}
	assert.ErrorIs(t, context.Cause(l), stuck)
	assert.ErrorIs(t, context.Cause(l), distsync.ErrReleased)
	w := receive(t, next, "the next candidate, after the resignation")
	assert.Greater(t, w.Term, term)
}

// A resignation grants the leadership to the head candidate, which leads
// when the message arrives, without another campaign attempt.
func TestResignGrantsTheNextCandidate(t *testing.T) {
	// Not parallel: it reads the process-wide acquisition counters.
	name := dstest.Name(t)
	e := newElection(t, dstest.Client(t), name)
	ctx := context.Background()
	l, term, err := e.Campaign(ctx, "first")
	require.NoError(t, err)
	next := campaign(newElection(t, dstest.Client(t), name), ctx, "next")
	dstest.AwaitCandidates(t, e, 1)
	stats := acquire.Counters()
	handed, attempts := stats.Handed.Load(), stats.Attempts.Load()
	require.NoError(t, e.Resign(l))
	w := receive(t, next, "next")
	assert.Equal(t, handed+1, stats.Handed.Load(), "granted by the resignation")
	assert.Equal(t, attempts, stats.Attempts.Load(), "no attempt after the resignation")
	assert.Greater(t, w.Term, term)
	st, err := e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, election.State{Leader: true, Value: "next", Term: w.Term, Since: st.Since}, st)
	require.NoError(t, context.Cause(w.Lead))
	_, err = e.ForceResign(ctx)
	require.NoError(t, err)
	assert.Empty(t, dstest.Keys(t, dstest.Client(t), "*{"+name+"}*:vals"), "no value left")
}

// A grant to a candidate that vanished (its process crashed) lapses with
// the hand-off lease, and the candidate after it, nudged by the grant, leads
// within that bound: without the nudge it would sleep until the leader's
// lease (a minute) ends.
func TestGrantToVanishedCandidateMovesOnWithinHandoffLease(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	long := func(o *distsync.Options) { o.Watchdog.Lease, o.WaiterWindow = time.Minute, time.Minute }
	c := dstest.Client(t, long)
	e := newElection(t, c, name)
	ctx := context.Background()
	l, _, err := e.Campaign(ctx, "leader")
	require.NoError(t, err)
	gone := dstest.Client(t, long)
	ghost := campaign(newElection(t, gone, name), ctx, "ghost")
	dstest.AwaitCandidates(t, e, 1)
	next := campaign(newElection(t, dstest.Client(t, long), name), ctx, "next")
	dstest.AwaitCandidates(t, e, 2)
	dstest.Crash(gone) // the head candidate vanishes
	require.ErrorIs(t, (<-ghost).Err, distsync.ErrClosed)

	start := time.Now()
	require.NoError(t, e.Resign(l))
	w := receive(t, next, "the next candidate, within the hand-off lease (1 s; 10 s on a loaded machine)")
	t.Logf("the next candidate led %v after the resignation", time.Since(start).Round(time.Millisecond))
	leadsDeposed(t, e, w, "next")
}

// A leadership granted to a candidate whose Client closes is given back by
// Close (the candidate's leave, or Close giving back the hold it took), not
// left to lapse with the hand-off lease.
func TestGrantDuringCloseIsGivenBack(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	e := newElection(t, dstest.Client(t), name)
	ctx := context.Background()
	for i := range 10 {
		l, _, err := e.Campaign(ctx, "leader")
		require.NoError(t, err)
		w := dstest.Client(t)
		cand := campaign(newElection(t, w, name), ctx, "candidate")
		dstest.AwaitCandidates(t, e, 1)
		resigned := make(chan error, 1)
		go func() { resigned <- e.Resign(l) }()
		time.Sleep(time.Duration(i%5) * 100 * time.Microsecond) // vary the interleaving
		w.Close()
		require.NoError(t, <-resigned)
		if c := <-cand; c.Err != nil {
			require.ErrorIs(t, c.Err, distsync.ErrClosed, "round %d", i)
		}
		// Within less than the hand-off lease (1 s), which would end a
		// grant nobody gave back too.
		deadline := time.Now().Add(500 * time.Millisecond)
		_, err = e.Leader(ctx)
		for err == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			_, err = e.Leader(ctx)
		}
		require.ErrorIs(t, err, distsync.ErrNoLeader, "round %d: the leadership came back", i)
	}
}

// A head candidate that vanished, when the leadership lapses without a
// resignation (the leader's process died too), delays the next candidate
// by about the hand-off lease: the first campaign attempt that finds nobody
// leading with another candidate at the head wakes the head, as a
// resignation would, cutting its window. Before, nothing woke it, and the
// next candidate waited for its window to end: the leader's lease and a
// candidate window (30 s) after its last attempt.
func TestVanishedHeadCandidateOfLapsedLeadership(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	const lease = time.Second // the leader's, which lapses
	leader := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	e := newElection(t, leader, name)
	ctx := context.Background()
	_, _, err := e.Campaign(ctx, "leader")
	require.NoError(t, err)
	gone, other := dstest.Client(t), dstest.Client(t)
	ghost := campaign(newElection(t, gone, name), ctx, "ghost")
	dstest.AwaitCandidates(t, e, 1)
	eo := newElection(t, other, name)
	next := campaign(eo, ctx, "next")
	dstest.AwaitCandidates(t, e, 2)
	start := time.Now()
	dstest.Crash(gone) // the head candidate vanishes
	require.ErrorIs(t, (<-ghost).Err, distsync.ErrClosed)
	dstest.Crash(leader) // and the leader: its leadership lapses

	w := dstest.Elected(t, next, time.Minute, "the next candidate")
	// The next candidate would have tried again when the leader's lease
	// ended: it leads within the hand-off lease (1 s) after that (the
	// margin covers a loaded machine), not a candidate window (30 s) later.
	assert.Less(t, time.Since(start), lease+time.Second+5*time.Second, "the next candidate leads within the hand-off lease of the lease's end")
	leadsDeposed(t, eo, w, "next")
}

// Two head candidates that vanished (their process died) delay the next
// by about twice the hand-off lease: the resignation grants the leadership
// to the first and nudges the two after it, so the live third campaigns
// within the hand-off lease, finds the leadership lapsed and wakes the
// second, whose window that cuts. Before, only the second was nudged, and
// the third slept until the retry time of its refusal: the leader's lease
// (30 s).
func TestTwoVanishedHeadCandidates(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	e := newElection(t, dstest.Client(t), name)
	ctx := context.Background()
	l, _, err := e.Campaign(ctx, "leader")
	require.NoError(t, err)
	gone := dstest.Client(t)
	eg := newElection(t, gone, name)
	var ghosts []<-chan dstest.Campaign
	for i := range 2 {
		ghosts = append(ghosts, campaign(eg, ctx, "ghost"))
		dstest.AwaitCandidates(t, e, i+1) // queued in this order
	}
	next := campaign(newElection(t, dstest.Client(t), name), ctx, "next")
	dstest.AwaitCandidates(t, e, 3)
	dstest.Crash(gone) // both vanish
	for _, g := range ghosts {
		require.ErrorIs(t, (<-g).Err, distsync.ErrClosed)
	}

	start := time.Now()
	require.NoError(t, e.Resign(l))
	w := dstest.Elected(t, next, time.Minute, "the next candidate")
	// The bound is about twice the hand-off lease (1 s); the margin covers
	// a loaded machine.
	assert.Less(t, time.Since(start), 2*time.Second+5*time.Second, "the next candidate leads within twice the hand-off lease")
	leadsDeposed(t, e, w, "next")
}

// The election's last term (Observe's "nobody leads" state) outlives the
// leader's lease by a minute, extended with it at each renewal, and is kept
// a minute once the leadership ends: a name nobody leads any more leaves
// nothing behind for long. Before, it was kept an hour after each grant
// (and forgotten during a leadership longer than that).
func TestLastTermKeptAMinuteAfterTheLeadership(t *testing.T) {
	t.Parallel()
	const lease = time.Second // renewed every 333 ms
	const minute = int64(60_000)
	c := dstest.Client(t)
	e, err := c.Election(dstest.Name(t), election.WithLease(lease))
	require.NoError(t, err)
	ctx := context.Background()
	rc := c.Rueidis()
	pttl := func(key string) int64 {
		ms, err := rc.Do(ctx, rc.B().Pttl().Key(key).Build()).AsInt64()
		require.NoError(t, err)
		return ms
	}
	l, _, err := e.Campaign(ctx, "leader")
	require.NoError(t, err)
	// Three leases later, renewed all along, the last term still ends a
	// minute after the lease (a minute after the grant's, it would end
	// in 58 s).
	time.Sleep(3 * lease)
	require.NoError(t, l.Err(), "renewed")
	got := pttl(e.Key() + ":last")
	assert.Greater(t, got, minute-lease.Milliseconds()/2, "the last term's expiry follows the renewals")
	assert.LessOrEqual(t, got, minute+lease.Milliseconds())
	require.NoError(t, e.Resign(l))
	got = pttl(e.Key() + ":last")
	assert.Positive(t, got, "kept after the leadership ended")
	assert.LessOrEqual(t, got, minute, "kept a minute")
	st := <-e.Observe(ctx)
	assert.False(t, st.Leader)
	assert.Positive(t, st.Term, "nobody leads, after the last term")
}

// A live candidate whose presence subscription ends while it waits (here
// the server closes it: its user loses that channel, as a dropped
// connection would end it) is passed over by a resignation in the meantime
// and forgotten, and the candidate behind it leads; once its Client has
// subscribed again it is woken, tries, and queues anew. With the leader's
// lease of an hour, its own timer would wake it only then.
func TestCandidatePassedOverWhileResubscribingQueuesAgain(t *testing.T) {
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "ACL users: the embedded server has none")
	ctx := context.Background()
	user, acl := dstest.ACLUser(t, s, "presence")
	hour := func(o *distsync.Options) { o.Watchdog.Lease = time.Hour }
	lc, bc := dstest.Client(t, hour), dstest.Client(t, hour)
	// The candidate's Client, as the user, through the fault layer: a hook
	// tells when its attempts ran on the server.
	wc, f := userClient(t, s, user)
	name := dstest.Name(t)
	e, eb, ew := newElection(t, lc, name), newElection(t, bc, name), newElection(t, wc, name)
	l, _, err := e.Campaign(ctx, "leader")
	require.NoError(t, err)
	w := campaign(ew, ctx, "w")
	dstest.AwaitCandidates(t, e, 1)
	b := campaign(eb, ctx, "b")
	dstest.AwaitCandidates(t, e, 2)
	require.Equal(t, int64(1), dstest.Listeners(t, lc, presenceOf(e, wc)))

	// The server closes the candidate's subscriptions; it may take back the
	// election's own channels, not its presence. Back on the wake-up
	// channel, the candidate tries once (still queued, in its place).
	ran := make(chan struct{}, 8)
	f.Inject(&dstest.Rule{Match: dstest.Script("A candidate's attempt to lead"), Fault: dstest.Hook, Then: func() { ran <- struct{}{} }})
	acl("resetchannels", "&"+e.Key()+":wake", "&"+e.Key()+":obs")
	dstest.WaitUnsubscribed(t, lc, presenceOf(e, wc))
	select {
	case <-ran:
	case <-time.After(20 * time.Second):
		t.Fatal("the candidate did not try again once back on the wake-up channel")
	}
	f.Clear()
	require.NoError(t, e.Resign(l))
	lb := dstest.Elected(t, b, 20*time.Second, "the candidate behind the one passed over")
	n, err := e.Candidates(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "the candidate, its presence gone, is passed over and forgotten")

	acl("allchannels") // the Client subscribes again and wakes its candidate
	dstest.AwaitCandidates(t, e, 1)
	require.NoError(t, eb.Resign(lb.Lead))
	lw := dstest.Elected(t, w, 20*time.Second, "the candidate queued again")
	require.NoError(t, ew.Resign(lw.Lead))
}

// userClient is a Client of server s as user (dstest.ACLUser), through the
// fault layer, with a watchdog lease of an hour.
func userClient(t *testing.T, s *redistest.Server, user string) (*distsync.Client, *dstest.Faulty) {
	t.Helper()
	opt := s.ClientOption()
	opt.Username, opt.Password = user, "pw"
	rc, err := rueidis.NewClient(opt)
	require.NoError(t, err)
	f := dstest.NewFaulty(rc)
	c, err := distsync.FromClient(f, distsync.Options{Watchdog: watchdog.Config{Lease: time.Hour}})
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Close()
		rc.Close()
	})
	return c, f
}

// A candidate that gives up while a resignation grants it the leadership
// (its context ends right after the server applied the resignation) gives
// the grant back, by its leave or, when it took the grant first, by a
// resignation, and that hands the leadership on past the dead candidate
// behind it to the live one, under a lost request, a lost reply and a late
// reply of that give-back: it is sent again or waited for, and the live
// candidate leads once. With the hand-off lease of an hour, only that
// passing over elects it within the guard.
func TestGivenBackGrantPassesOverUnderFaults(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for _, fc := range []struct {
		name  string
		fault dstest.Fault
	}{{"lost request", dstest.LoseRequest}, {"lost reply", dstest.LoseReply}, {"late reply", dstest.LateReply}} {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			lc, lf := dstest.FaultyClient(t, s, time.Hour)
			wc, wf := dstest.FaultyClient(t, s, time.Hour)
			hour := func(o *distsync.Options) { o.Watchdog.Lease = time.Hour }
			bc, gc := dstest.Client(t, hour), dstest.Client(t, hour)
			name := dstest.Name(t)
			e, eb, eg, ew := newElection(t, lc, name), newElection(t, bc, name), newElection(t, gc, name), newElection(t, wc, name)
			for _, x := range []*election.Election{e, eb, eg, ew} {
				election.Tune(x, time.Hour)
			}
			l, _, err := e.Campaign(ctx, "leader")
			require.NoError(t, err)
			wctx, giveUp := context.WithCancel(ctx)
			defer giveUp()
			w := campaign(ew, wctx, "w")
			dstest.AwaitCandidates(t, e, 1)
			ghost := campaign(eg, ctx, "ghost")
			dstest.AwaitCandidates(t, e, 2)
			b := campaign(eb, ctx, "b")
			dstest.AwaitCandidates(t, e, 3)
			dstest.Crash(gc) // the candidate after w dies
			require.ErrorIs(t, (<-ghost).Err, distsync.ErrClosed)
			dstest.WaitUnsubscribed(t, bc, presenceOf(e, gc))

			giveBack := []func([]string) bool{dstest.Script("A candidate gives up"), dstest.Script("The leader resigns")}
			rule := &dstest.Rule{Match: func(cmd []string) bool { return giveBack[0](cmd) || giveBack[1](cmd) }, Fault: fc.fault, Delay: 300 * time.Millisecond, Times: 1}
			wf.Inject(rule)
			lf.Inject(&dstest.Rule{Match: giveBack[1], Fault: dstest.Hook, Times: 1, Then: giveUp})
			require.NoError(t, e.Resign(l)) // grants w, who gives up meanwhile
			if c := <-w; c.Err == nil {
				// w took the grant before it gave up: the leadership, whose
				// parent ended, ends and is given back by a resignation.
				<-c.Lead.Done()
			} else {
				require.ErrorIs(t, c.Err, context.Canceled)
			}
			lb := dstest.Elected(t, b, 20*time.Second, "the live candidate past the dead one")
			require.Equal(t, 1, rule.Hits(), "the give-back met its fault")
			st, err := e.Leader(ctx)
			require.NoError(t, err)
			assert.Equal(t, "b", st.Value)
			assert.Equal(t, lb.Term, st.Term, "led once, by that give-back")
			n, err := e.Candidates(ctx)
			require.NoError(t, err)
			assert.Zero(t, n, "the dead candidate is forgotten")
			require.NoError(t, eb.Resign(lb.Lead))
		})
	}
}

// presenceOf is the channel on which c's candidates of e listen while they
// wait, beside the wake-up channel: nothing is published there.
func presenceOf(e *election.Election, c *distsync.Client) string {
	return e.Key() + ":wake:" + c.ID()
}

// Head candidates whose process died (their connections closed, and the
// server closed their subscriptions) are passed over and forgotten, with
// every candidate of their Clients, by the resignation, a deposition
// (ForceResign), the first campaign attempt that finds nobody leading, or
// the head candidate giving up while nobody leads (leave: here a candidate
// of no process; before, it woke the next candidate only, dead or not), and
// the live candidate behind them leads. With the hand-off lease of an hour,
// only that passing over elects it within the guard: a grant or wake-up to
// a dead head would lapse after an hour. From the second dead Client on,
// every dead Client's candidates go at once ("70 Clients": one Client a
// turn would stop after 64). A live candidate queued behind keeps its
// place.
func TestDeadCandidatesArePassedOver(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		dead, clients int
		how           string // resign, force (ForceResign from another Client), lapse (the leader's process dies) or leave
	}{
		{"resign/3 of a Client", 3, 1, "resign"},
		{"resign/70 of 70 Clients", 70, 70, "resign"},
		{"force/70 of 70 Clients", 70, 70, "force"},
		{"lapse/3 of a Client", 3, 1, "lapse"},
		{"lapse/70 of 70 Clients", 70, 70, "lapse"},
		{"leave/none", 0, 0, "leave"},
		{"leave/3 of a Client", 3, 1, "leave"},
		{"leave/70 of 70 Clients", 70, 70, "leave"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			deadCandidatesPassedOver(t, tc.dead, tc.clients, tc.how)
		})
	}
}

func deadCandidatesPassedOver(t *testing.T, dead, clients int, how string) {
	name := dstest.Name(t)
	lease := time.Hour // the leader's, unless its leadership lapses
	if how == "lapse" {
		lease = time.Second
	}
	// Long windows: a campaign attempt that finds nobody leading passes over
	// dead heads too, and a candidate makes one half a window after its last.
	long := func(o *distsync.Options) { o.WaiterWindow = 10 * time.Minute }
	leader := dstest.Client(t, long, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	other := dstest.Client(t, long)
	e := newElection(t, leader, name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var l context.Context
	ahead := 0 // candidates queued ahead of the dead ones
	if how == "leave" {
		queueGhost(t, other, e, 10*time.Minute)
		ahead = 1
	} else {
		var err error
		l, _, err = e.Campaign(ctx, "leader")
		require.NoError(t, err)
	}
	crashed, ces := make([]*distsync.Client, clients), make([]*election.Election, clients)
	for i := range crashed {
		crashed[i] = dstest.Client(t, long)
		ces[i] = newElection(t, crashed[i], name)
		election.Tune(ces[i], time.Hour)
	}
	election.Tune(e, time.Hour)
	ghosts := make([]<-chan dstest.Campaign, dead)
	for i := range dead {
		ghosts[i] = campaign(ces[i%clients], ctx, "ghost")
		dstest.AwaitCandidates(t, e, ahead+i+1) // queued in this order
	}
	eo := newElection(t, other, name)
	election.Tune(eo, time.Hour)
	next := campaign(eo, ctx, "next")
	dstest.AwaitCandidates(t, e, ahead+dead+1)
	el := newElection(t, dstest.Client(t, long), name) // a live candidate behind, who stays queued
	election.Tune(el, time.Hour)
	last := campaign(el, ctx, "last")
	dstest.AwaitCandidates(t, e, ahead+dead+2)
	if clients > 0 {
		require.Equal(t, int64(1), dstest.Listeners(t, other, presenceOf(e, crashed[0])), "the dead candidates' Client listened")
	}
	for _, c := range crashed {
		dstest.Crash(c)
	}
	for _, g := range ghosts {
		require.ErrorIs(t, (<-g).Err, distsync.ErrClosed)
	}
	for _, c := range crashed {
		dstest.WaitUnsubscribed(t, other, presenceOf(e, c))
	}

	switch how {
	case "leave":
		require.NoError(t, election.Leave(ctx, e, ghostCandidate))
	case "lapse":
		dstest.Crash(leader) // its leadership lapses within a second
	case "force":
		led, err := eo.ForceResign(ctx)
		require.NoError(t, err)
		require.True(t, led)
	default:
		require.NoError(t, e.Resign(l))
	}
	w := dstest.Elected(t, next, 20*time.Second, "the live candidate behind the dead ones")
	n, err := eo.Candidates(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the dead candidates are forgotten, the live one behind stays")
	rc := other.Rueidis()
	vals, err := rc.Do(ctx, rc.B().Hlen().Key(e.Key()+":vals").Build()).AsInt64()
	require.NoError(t, err)
	assert.Equal(t, int64(1), vals, "only the live candidate's value is kept")
	leadsDeposed(t, eo, w, "next")
	leadsDeposed(t, el, dstest.Elected(t, last, 20*time.Second, "the live candidate behind"), "last")
}

// ghostCandidate is the candidate of no process that queueGhost queues.
const ghostCandidate = "ghost:1"

// queueGhost queues ghostCandidate in e at the tail, with a window of d.
func queueGhost(t *testing.T, c *distsync.Client, e *election.Election, d time.Duration) {
	t.Helper()
	dstest.QueueGhost(t, c, e.Key()+":cands", e.Key()+":wins", ghostCandidate, d, false)
}

// leadsDeposed checks that campaign w, with value, leads e, then deposes it.
func leadsDeposed(t *testing.T, e *election.Election, w dstest.Campaign, value string) {
	t.Helper()
	st, err := e.Leader(context.Background())
	require.NoError(t, err)
	assert.Equal(t, value, st.Value)
	assert.Equal(t, w.Term, st.Term, "it leads")
	_, err = e.ForceResign(context.Background())
	require.NoError(t, err)
}
