package integration_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/election"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/watchdog"
)

// The election's must-holds (issue 23), on a real server, with the fault
// layer where a fault is what they are about.

func electionOf(t *testing.T, c *distsync.Client, name string) *election.Election {
	t.Helper()
	e, err := c.Election(name)
	require.NoError(t, err)
	return e
}

// Scripts of the election, for fault rules: each matches a line of one.
var (
	campaignLua = dstest.Script("A candidate's attempt to lead")
	resignLua   = dstest.Script("The leader resigns")
	renewLua    = dstest.Script("Extend the leader's lease")
	leaveLua    = dstest.Script("A candidate gives up")
)

// Never two leaders with live leadership contexts at once: candidates on
// Clients whose campaigns, resignations and renewals lose requests and
// replies, or get them late, campaign over and over, each leader works
// while its context lives, and the history of their leaderships is checked
// for overlaps and for terms that do not increase. (A deposition,
// ForceResign, is a take-over: the successor may lead before the deposed
// leader hears of it, which the term fences; it has no place here.)
func TestElectionHistoryUnderFaults(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	redistest.RequireReal(t, s)
	name := dstest.Name(t)
	h := newHistory(name)
	const lease = 400 * time.Millisecond
	run := 3 * time.Second
	if testing.Short() {
		run = time.Second
	}
	stop := make(chan struct{})
	time.AfterFunc(run, func() { close(stop) })

	var wg sync.WaitGroup
	var leads sync.Map // who -> count
	for i := range 4 {
		c, f := faultyClient(t, s, lease)
		e := electionOf(t, c, name)
		who := fmt.Sprintf("candidate-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 23))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				f.Clear()
				switch rng.IntN(6) {
				case 0:
					f.Inject(&dstest.Rule{Match: campaignLua, Fault: dstest.LoseReply, Times: 1})
				case 1:
					f.Inject(&dstest.Rule{Match: campaignLua, Fault: dstest.LoseRequest, Times: 1})
				case 2:
					f.Inject(&dstest.Rule{Match: campaignLua, Fault: dstest.LateReply, Delay: lease + lease/2, Times: 1})
				case 3:
					f.Inject(&dstest.Rule{Match: resignLua, Fault: dstest.LoseReply, Times: 1})
				case 4:
					f.Inject(&dstest.Rule{Match: renewLua, Fault: dstest.LoseRequest, Times: 3})
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				l, term, err := e.Campaign(ctx, who)
				if err != nil {
					cancel()
					continue
				}
				hd := h.acquired(who, term)
				v, _ := leads.LoadOrStore(who, new(int))
				*v.(*int)++
				work := make(chan struct{})
				time.AfterFunc(time.Duration(rng.IntN(int(lease))), func() { close(work) })
				if hd.work(l, work) {
					_ = hd.release(l, e.Resign)
				}
				cancel()
			}
		}()
	}
	wg.Wait()

	assert.Empty(t, h.overlaps(), "two live leaders at once")
	assert.Empty(t, h.tokenErrors(), "terms that do not increase")
	holds := h.snapshot()
	assert.GreaterOrEqual(t, len(holds), 8, "leaderships in %v", run)
	leads.Range(func(k, v any) bool {
		t.Logf("%s led %d times", k, *v.(*int))
		return true
	})
}

// A leader whose renewals fail learns that it lost its lease (its context
// ends) before the server can elect a successor: checked on the server at
// every campaign attempt of the successor, right after it ran.
func TestElectionLostLeaderLearnsFirst(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	name := dstest.Name(t)
	const lease = 300 * time.Millisecond
	lc, lf := faultyClient(t, s, lease)
	leader := electionOf(t, lc, name)
	ctx := context.Background()
	l, term, err := leader.Campaign(ctx, "leader")
	require.NoError(t, err)
	lf.Inject(&dstest.Rule{Match: renewLua, Fault: dstest.LoseRequest})

	sc, sf := faultyClient(t, s, 0)
	successor := electionOf(t, sc, name)
	observer := electionOf(t, dstest.ClientOn(t, s), name)
	// The successor is elected by one of its campaign attempts, or by the
	// old leader's Client giving the lost lease back (which hands it on):
	// checked after either ran on the server.
	var mu sync.Mutex
	var checks, granted int
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		checks++
		st, err := observer.Leader(ctx)
		if err == nil && st.Value == "successor" && granted == 0 {
			granted++
			assert.Error(t, l.Err(), "the successor was elected while the old leader's context lived")
		}
	}
	sf.Inject(&dstest.Rule{Match: campaignLua, Fault: dstest.Hook, Then: check})
	lf.Inject(&dstest.Rule{Match: resignLua, Fault: dstest.Hook, Then: check})
	sl, sterm, err := successor.Campaign(ctx, "successor")
	require.NoError(t, err)
	// A hand-on's check may still be on its way when Campaign returns.
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return granted == 1
	}, 10*time.Second, time.Millisecond, "a hook saw the grant")
	assert.Greater(t, sterm, term)
	assert.ErrorIs(t, context.Cause(l), distsync.ErrLeaseLost)
	require.NoError(t, successor.Resign(sl))
}

// Campaign never returns leadership it does not hold: a grant whose reply
// came after the lease could have ended is not returned (it is given back,
// and a new campaign made), and a candidate whose queue entry vanished
// while it waited (a pause past its window) registers again and leads
// rather than wait forever.
func TestElectionNoPhantomLeadership(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	ctx := context.Background()

	t.Run("late grant", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		const lease = 300 * time.Millisecond
		c, f := faultyClient(t, s, lease)
		e := electionOf(t, c, name)
		observer := electionOf(t, dstest.ClientOn(t, s), name)
		var lateTerm int64
		f.Inject(&dstest.Rule{Match: campaignLua, Fault: dstest.LateReply, Delay: 2 * lease, Times: 1, Then: func() {
			st, err := observer.Leader(ctx)
			if assert.NoError(t, err, "the late attempt was granted on the server") {
				lateTerm = st.Term
			}
		}})
		l, term, err := e.Campaign(ctx, "me")
		require.NoError(t, err)
		assert.Greater(t, term, lateTerm, "not the late grant's term")
		st, err := observer.Leader(ctx)
		require.NoError(t, err)
		assert.Equal(t, term, st.Term, "the server's leader is the one returned")
		assert.NoError(t, l.Err())
		require.NoError(t, e.Resign(l))
	})

	t.Run("vanished candidate", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		window := func(o *distsync.Options) { o.WaiterWindow = 200 * time.Millisecond }
		leader := electionOf(t, dstest.ClientOn(t, s, window), name)
		wc := dstest.ClientOn(t, s, window)
		cand := electionOf(t, wc, name)
		l, _, err := leader.Campaign(ctx, "leader")
		require.NoError(t, err)
		got := make(chan error, 1)
		var cl context.Context
		go func() {
			var err error
			cl, _, err = cand.Campaign(ctx, "candidate")
			got <- err
		}()
		dstest.AwaitCandidates(t, cand, 1)
		// The entry vanishes, as after a pause past its window: the
		// resignation wakes nobody.
		rc := wc.Rueidis()
		require.NoError(t, rc.Do(ctx, rc.B().Del().Key(leader.Key()+":cands", leader.Key()+":wins").Build()).Error())
		require.NoError(t, leader.Resign(l))
		select {
		case err := <-got:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("the candidate whose entry vanished waits forever")
		}
		st, err := cand.Leader(ctx)
		require.NoError(t, err)
		assert.Equal(t, "candidate", st.Value)
		require.NoError(t, cand.Resign(cl))
	})
}

// A campaign that fails or is cancelled leaves no candidate entry, even
// when the request that takes it out of the queue is lost once.
func TestElectionGivenUpCampaignLeavesNothing(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	name := dstest.Name(t)
	ctx := context.Background()
	leader := electionOf(t, dstest.ClientOn(t, s), name)
	l, _, err := leader.Campaign(ctx, "leader")
	require.NoError(t, err)

	c, f := faultyClient(t, s, 0)
	e := electionOf(t, c, name)
	f.Inject(&dstest.Rule{Match: leaveLua, Fault: dstest.LoseRequest, Times: 1})
	cctx, cancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() {
		_, _, err := e.Campaign(cctx, "quitter")
		got <- err
	}()
	dstest.AwaitCandidates(t, e, 1)
	cancel()
	require.ErrorIs(t, <-got, context.Canceled)
	n, err := e.Candidates(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Empty(t, dstest.Keys(t, c, "*{"+name+"}:cands"))
	assert.Empty(t, dstest.Keys(t, c, "*{"+name+"}:wins"))

	// A campaign whose wait is cut by its deadline, on a campaign reply lost.
	f.Inject(&dstest.Rule{Match: campaignLua, Fault: dstest.LoseReply, Times: 1})
	dctx, dcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer dcancel()
	_, _, err = e.Campaign(dctx, "late")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	n, err = e.Candidates(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
	require.NoError(t, leader.Resign(l))
	_, err = leader.Leader(ctx)
	assert.ErrorIs(t, err, distsync.ErrNoLeader, "nothing left leads")
}

// On Cluster, with sharded pub/sub: a resign hands over to the next
// candidate and a deposition reaches the leader, both by push, on names
// spread over the masters.
func TestElectionOnCluster(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 3, 0)
	lease := func(o *distsync.Options) { o.Watchdog.Lease = time.Minute }
	a, b := clusterClient(t, cl, lease), clusterClient(t, cl, lease)
	ctx := context.Background()
	for i := range 6 {
		name := fmt.Sprintf("election-%d", i)
		ea, eb := electionOf(t, a, name), electionOf(t, b, name)
		la, ta, err := ea.Campaign(ctx, "a")
		require.NoError(t, err)
		obs := eb.Observe(ctx)
		assert.Equal(t, ta, (<-obs).Term)
		got := dstest.CampaignAsync(eb, ctx, "b")
		dstest.AwaitCandidates(t, ea, 1)
		require.NoError(t, ea.Resign(la))
		w := dstest.Elected(t, got, 20*time.Second, name+": woken by the resign") // a minute's lease: not by expiry
		assert.Greater(t, w.Term, ta)
		for st := range obs {
			if st.Term == w.Term {
				break
			}
		}
		ok, err := ea.ForceResign(ctx)
		require.NoError(t, err)
		require.True(t, ok)
		select {
		case <-w.Lead.Done():
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the deposed leader was not told", name)
		}
	}
}

// With replica acknowledgement, leadership is granted once a replica has
// it, and refused (leaving nothing behind) when no replica answers.
func TestElectionReplicaAck(t *testing.T) {
	t.Parallel()
	c, replica := ackedClient(t)
	e := electionOf(t, c, dstest.Name(t))
	ctx := context.Background()
	l, _, err := e.Campaign(ctx, "acked")
	require.NoError(t, err)
	require.NoError(t, e.Resign(l))

	replica.Pause()
	dctx, cancel := context.WithTimeout(ctx, time.Second)
	_, _, err = e.Campaign(dctx, "unacked")
	cancel()
	replica.Resume()
	require.Error(t, err)
	_, err = e.Leader(ctx)
	assert.ErrorIs(t, err, distsync.ErrNoLeader, "the unacknowledged leadership was undone")

	l, _, err = e.Campaign(ctx, "acked again")
	require.NoError(t, err)
	require.NoError(t, e.Resign(l))
}

// A cut longer than the lease: the leader behind it loses its leadership
// (its context ends at the watchdog's deadline) before the candidate on
// the other side is elected; when the cut heals, nothing of the old
// leadership is left to act. And a restart with appendfsync always: the
// leadership and the queue survive, the leader goes on leading, and its
// resignation hands over to the candidate that queued before the crash.
func TestElectionCutAndRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("cut longer than the lease", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireReal(t, s)
		p := startCutProxy(t, s.Addr())
		h := newHistory("election cut")
		lease := func(o *distsync.Options) { o.Watchdog.Lease = time.Second }
		behind := electionOf(t, connect(t, distsync.Options{Addrs: []string{p.Addr()}}, lease), "cut")
		other := electionOf(t, dstest.ClientOn(t, s, lease), "cut")
		l, term, err := behind.Campaign(ctx, "behind the cut")
		require.NoError(t, err)
		first := h.acquired("behind the cut", term)
		worked := make(chan bool, 1)
		go func() { worked <- first.work(l, make(chan struct{})) }()

		p.cut()
		sl, sterm, err := other.Campaign(ctx, "other side")
		require.NoError(t, err)
		second := h.acquired("other side", sterm)
		awaitLoss(t, l)
		assert.False(t, <-worked)
		require.NoError(t, second.release(sl, other.Resign))
		p.heal()
		requireExclusive(t, h)
	})

	t.Run("restart with appendfsync always", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t, redistest.WithConfig("appendonly", "yes"), redistest.WithConfig("appendfsync", "always"))
		redistest.RequireProcess(t, s)
		h := newHistory("election restart")
		lease := func(o *distsync.Options) { o.Watchdog.Lease = 2 * time.Second }
		leader := electionOf(t, dstest.ClientOn(t, s, lease), "restart")
		cand := electionOf(t, dstest.ClientOn(t, s, lease), "restart")
		l, term, err := leader.Campaign(ctx, "leader")
		require.NoError(t, err)
		first := h.acquired("leader", term)
		got := dstest.CampaignAsync(cand, ctx, "candidate")
		dstest.AwaitCandidates(t, leader, 1)

		s.Kill()
		s.Restart(t)
		stop := make(chan struct{})
		time.AfterFunc(3*time.Second, func() { close(stop) }) // past a lease: renewed after the restart
		require.True(t, first.work(l, stop), "the leader leads on after the restart")
		st, err := cand.Leader(ctx)
		require.NoError(t, err)
		assert.Equal(t, term, st.Term)
		require.NoError(t, first.release(l, leader.Resign))
		w := dstest.Elected(t, got, 20*time.Second, "the candidate queued before the crash")
		second := h.acquired("candidate", w.Term)
		require.NoError(t, second.release(w.Lead, cand.Resign))
		requireExclusive(t, h)
	})
}

// Through Sentinel, candidates are elected and handed over by push as on a
// standalone server.
func TestElectionViaSentinel(t *testing.T) {
	t.Parallel()
	st := redistest.StartSentinel(t, 1, 1)
	c, err := distsync.New(distsync.Options{Addrs: st.SentinelAddrs(), MasterName: st.MasterName(), Watchdog: watchdog.Config{Lease: time.Minute}})
	require.NoError(t, err)
	defer c.Close()
	e := electionOf(t, c, "via-sentinel")
	ctx := context.Background()
	l, term, err := e.Campaign(ctx, "first")
	require.NoError(t, err)
	got := make(chan error, 1)
	var next int64
	go func() {
		nl, nt, err := e.Campaign(ctx, "second")
		if err == nil {
			next = nt
			err = e.Resign(nl)
		}
		got <- err
	}()
	dstest.AwaitCandidates(t, e, 1)
	require.NoError(t, e.Resign(l))
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(20 * time.Second): // a minute's lease: not by expiry
		t.Fatal("the next candidate was not woken")
	}
	assert.Greater(t, next, term)
}

// An observer whose connection is cut, and then severed, while the
// leadership changes (the messages of the changes are lost with the
// connection) reports the newest state once it is back: it reads the state
// again when its subscription is re-established, never a stale one.
func TestElectionObserverAfterCut(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireReal(t, s)
	p := startCutProxy(t, s.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watcher := electionOf(t, connect(t, distsync.Options{Addrs: []string{p.Addr()}}), "cut-observer")
	e := electionOf(t, dstest.ClientOn(t, s), "cut-observer")
	obs := watcher.Observe(ctx)
	first := <-obs
	require.False(t, first.Leader)

	p.cut()
	l, _, err := e.Campaign(ctx, "a")
	require.NoError(t, err)
	require.NoError(t, e.Proclaim(l, "a2"))
	require.NoError(t, e.Resign(l))
	l, term, err := e.Campaign(ctx, "b")
	require.NoError(t, err)
	p.sever()
	p.heal()

	var last election.State
	for last.Term != term {
		select {
		case st := <-obs:
			require.GreaterOrEqual(t, st.Term, last.Term, "term order")
			last = st
		case <-time.After(20 * time.Second):
			t.Fatalf("the observer did not report the newest state; last %+v", last)
		}
	}
	assert.Equal(t, election.State{Leader: true, Value: "b", Term: term, Since: last.Since}, last)
	require.NoError(t, e.Resign(l))
}

// A resigning leader gives its leadership up when it calls Resign: its
// context ends before the resignation is sent, so the successor the
// resignation elects never finds it live, whether the reply comes late or
// never.
func TestElectionResignEndsContextFirst(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for name, fault := range map[string]dstest.Fault{"late": dstest.LateReply, "lost": dstest.LoseReply} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			name := dstest.Name(t)
			lc, lf := faultyClient(t, s, 0)
			leader := electionOf(t, lc, name)
			ctx := context.Background()
			l, _, err := leader.Campaign(ctx, "leader")
			require.NoError(t, err)
			successor := electionOf(t, dstest.ClientOn(t, s), name)
			ch := dstest.CampaignAsync(successor, ctx, "successor")
			dstest.AwaitCandidates(t, successor, 1)

			// The resignation is applied; its reply comes 2 s late, or
			// never (the resign gives up after its retries).
			lf.Inject(&dstest.Rule{Match: resignLua, Fault: fault, Delay: 2 * time.Second, Times: 1})
			if fault == dstest.LoseReply {
				lf.Inject(&dstest.Rule{Match: resignLua, Fault: dstest.LoseRequest})
			}
			resigned := make(chan error, 1)
			go func() { resigned <- leader.Resign(l) }()
			sl := dstest.Elected(t, ch, 10*time.Second, "the successor")
			assert.Error(t, l.Err(), "the successor leads while the resigning leader's context lives")
			assert.ErrorIs(t, context.Cause(l), distsync.ErrReleased)
			err = <-resigned
			if fault == dstest.LateReply {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, dstest.ErrInjected)
			}
			require.NoError(t, successor.Resign(sl.Lead))
		})
	}
}

// A resignation retried after a lost reply answers what the first attempt
// found: when the leadership had already ended on the server (here the
// election's hash is deleted behind the leader's back, so that nothing
// tells it), the first attempt finds it not held and its reply is lost; the
// retry must say ErrNotHeld too, not take the first attempt's "not held"
// for a resignation of its own.
func TestElectionResignRetriedAfterLostNotHeldReply(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	name := dstest.Name(t)
	lc, lf := faultyClient(t, s, 0)
	leader := electionOf(t, lc, name)
	ctx := context.Background()
	l, _, err := leader.Campaign(ctx, "leader")
	require.NoError(t, err)

	admin := s.Client(t)
	// The first request is dropped and, meanwhile, the leadership ends on
	// the server; the retry finds it not held and its reply is lost; the
	// next retry answers.
	lost := lf.Inject(&dstest.Rule{Match: resignLua, Fault: dstest.LoseRequest, Times: 1, Then: func() {
		require.NoError(t, admin.Do(ctx, admin.B().Del().Key(leader.Key()).Build()).Error())
	}})
	notHeld := lf.Inject(&dstest.Rule{Match: resignLua, Fault: dstest.LoseReply, Times: 1})
	err = leader.Resign(l)
	require.Equal(t, 1, lost.Hits())
	require.Equal(t, 1, notHeld.Hits(), "the attempt that found the leadership gone was sent, its reply lost")
	assert.ErrorIs(t, err, distsync.ErrNotHeld, "a resignation that found nothing to resign")
}

// A hand-on that passes over dead candidates and grants the leadership to
// the live one behind them, under a lost request, a lost reply and a late
// reply, as TestPassOverUnderReleaseFaults for the locks (each of
// deadCases), by each path that hands on and is retried: the leader's
// resignation, and the live candidate's own attempt once the leadership
// lapsed (its key vanished; a wake-up to every candidate makes it try).
// The call is reported once, and the live candidate leads once, by that
// call. (A deposition, ForceResign, is sent once: its error is the
// caller's.)
func TestElectionPassOverUnderFaults(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	for _, how := range []string{"resign", "lapse"} {
		for _, fc := range deadCases() {
			t.Run(how+"/"+fc.name, func(t *testing.T) {
				t.Parallel()
				electionPassOver(t, s, how, fc)
			})
		}
	}
}

func electionPassOver(t *testing.T, s *redistest.Server, how string, fc deadCase) {
	ctx := context.Background()
	c, f := faultyClient(t, s, 0)
	name := dstest.Name(t)
	e := electionOf(t, c, name)
	leader, cand := e, electionOf(t, dstest.ClientOn(t, s), name)
	if how == "lapse" {
		// The live candidate's attempt is the call faults hit.
		leader, cand = cand, e
	}
	l, _, err := leader.Campaign(ctx, "leader")
	require.NoError(t, err)
	dead, gone := queueDead(t, s, c, name, fc, 0, func(d *distsync.Client) error {
		_, _, err := electionOf(t, d, name).Campaign(ctx, "ghost")
		return err
	})
	next := dstest.CampaignAsync(cand, ctx, "next")
	waitInspected(t, c, name, fc.ghosts+1)
	bury(t, c, dead, name, gone, fc.ghosts, 1, ":wins", fc.ended)

	var w dstest.Campaign
	switch how {
	case "resign":
		releasePassingOver(t, c, f, name, "The leader resigns", fc.name, fc.fault, func() error { return e.Resign(l) })
	case "lapse":
		nobodyWaits := func() {
			info, err := c.Inspect(context.Background(), name)
			assert.NoError(t, err)
			assert.Empty(t, info.Waiters, "%s: applied, the attempt passed over the dead candidates and leads", fc.name)
		}
		rule := &dstest.Rule{Match: campaignLua, Fault: fc.fault, Delay: 300 * time.Millisecond, Times: 1}
		if fc.fault != dstest.LoseRequest {
			rule.Then = nobodyWaits
		}
		f.Inject(rule)
		rc := dstest.ClientOn(t, s).Rueidis()
		require.NoError(t, rc.Do(ctx, rc.B().Del().Key(e.Key()).Build()).Error(), "the leadership lapses")
		require.NoError(t, rc.Do(ctx, rc.B().Publish().Channel(e.Key()+":wake").Message("v").Build()).Error())
		w = dstest.Elected(t, next, 20*time.Second, fc.name+": the live candidate")
		require.Equal(t, 1, rule.Hits())
		f.Clear()
		nobodyWaits()
	}
	if how != "lapse" {
		w = dstest.Elected(t, next, 20*time.Second, fc.name+": the live candidate")
	}
	require.NoError(t, context.Cause(w.Lead), "the live candidate leads")
	st, err := e.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, "next", st.Value)
	assert.Equal(t, w.Term, st.Term, "led once, by that call")
	waitInspected(t, c, name, 0)
	_, err = e.ForceResign(ctx)
	require.NoError(t, err)
}

// A leader key deleted right after a change to it ends the leadership by
// push too, not at the next renewal: at each change the leader tracks its
// key again before it reads the state, so a deletion after the read (here,
// after the server ran the read a PEXPIRE prompted, before its reply) is
// told as well. Before, the read came first, and a deletion between the
// read and the key's tracking went untold for a renewal interval.
func TestElectionDeletionRightAfterAChangeIsTold(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "client-side caching's invalidation messages (RESP3)")
	const lease = time.Minute // a renewal would come after 20 s
	c, f := dstest.FaultyClientWith(t, s, distsync.Options{Watchdog: watchdog.Config{Lease: lease}})
	e := electionOf(t, c, dstest.Name(t))
	ctx := context.Background()
	rc := dstest.ClientOn(t, s).Rueidis()
	var reads atomic.Int32
	f.Inject(&dstest.Rule{
		Match: func(cmd []string) bool {
			return len(cmd) == 3 && cmd[0] == "HGET" && cmd[1] == e.Key() && cmd[2] == "#t"
		},
		Fault: dstest.Hook,
		Then: func() {
			if reads.Add(1) == 3 { // the read the PEXPIRE prompted
				assert.NoError(t, rc.Do(ctx, rc.B().Del().Key(e.Key()).Build()).Error())
			}
		},
	})
	l, _, err := e.Campaign(ctx, "leads")
	require.NoError(t, err)
	// Two reads follow a grant: at the change it published on the
	// election's channel, and once the key is tracked.
	require.Eventually(t, func() bool { return reads.Load() >= 2 }, 10*time.Second, time.Millisecond)
	require.NoError(t, rc.Do(ctx, rc.B().Pexpire().Key(e.Key()).Milliseconds(lease.Milliseconds()).Build()).Error())
	select {
	case <-l.Done():
	case <-time.After(lease / 6): // half the time to the next renewal
		t.Fatal("the leader whose key was deleted right after a change was not told")
	}
	assert.ErrorIs(t, context.Cause(l), distsync.ErrLeaseLost)
	assert.GreaterOrEqual(t, reads.Load(), int32(3), "the deletion came after the read the PEXPIRE prompted")
}
