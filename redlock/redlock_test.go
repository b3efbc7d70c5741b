package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/mutex"
	"github.com/distsync/distsync/redlock"
)

func TestMain(m *testing.M) {
	masters = []distsync.Options{dstest.ExampleOptions(0), dstest.ExampleOptions(1), dstest.ExampleOptions(2)}
	redistest.Main(m)
}

// startMasters starts n independent redis-servers.
func startMasters(t testing.TB, n int) []*redistest.Server {
	t.Helper()
	servers := make([]*redistest.Server, n)
	for i := range servers {
		servers[i] = redistest.Start(t)
	}
	return servers
}

// clientsOn returns one Client per server.
func clientsOn(t testing.TB, servers []*redistest.Server, edit ...func(*distsync.Options)) []*distsync.Client {
	t.Helper()
	clients := make([]*distsync.Client, len(servers))
	for i, s := range servers {
		clients[i] = dstest.ClientOn(t, s, edit...)
	}
	return clients
}

// lockers returns the lock called name on each Client.
func lockers(t testing.TB, kind dstest.Kind, clients []*distsync.Client, name string) []distsync.Locker {
	t.Helper()
	ls := make([]distsync.Locker, len(clients))
	for i, c := range clients {
		l, err := kind.New(c, name)
		require.NoError(t, err)
		ls[i] = l
	}
	return ls
}

func newRedlock(t testing.TB, clients []*distsync.Client, name string, opts ...redlock.Option) *redlock.Lock {
	t.Helper()
	l, err := redlock.New(lockers(t, dstest.Kinds[0], clients, name), opts...)
	require.NoError(t, err)
	return l
}

// withKey returns the addresses of the running servers among servers that
// have key.
func withKey(t testing.TB, servers []*redistest.Server, key string) []string {
	t.Helper()
	var found []string
	for _, s := range servers {
		if !s.Running() {
			continue
		}
		rc := s.Client(t)
		n, err := rc.Do(context.Background(), rc.B().Exists().Key(key).Build()).AsInt64()
		require.NoError(t, err)
		if n == 1 {
			found = append(found, s.Addr())
		}
	}
	return found
}

var (
	// fast makes contended tests retry quickly.
	fast = redlock.WithRetryDelay(time.Millisecond, 20*time.Millisecond)
	// patient lets tests that count the masters granting pass on a loaded
	// machine: it costs time only when a master does not answer.
	patient = redlock.WithMasterTimeout(2 * time.Second)
)

func TestMutualExclusion(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 5)
	sets := [][]*distsync.Client{clientsOn(t, servers), clientsOn(t, servers), clientsOn(t, servers)}
	name := dstest.Name(t)
	var ls []distsync.Locker
	for g := range 16 {
		ls = append(ls, newRedlock(t, sets[g%3], name, fast))
	}
	dstest.Contend(t, ls, 5, time.Minute)
	waitPending(ls)
	assert.Empty(t, withKey(t, servers, ls[0].Key()))
}

// waitPending waits for what the Redlocks ls still give back in the
// background (their waits' grants, late answers).
func waitPending(ls []distsync.Locker) {
	for _, l := range ls {
		l.(*redlock.Lock).WaitPending()
	}
}

func TestGrant(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 5)
	l := newRedlock(t, clientsOn(t, servers), dstest.Name(t), patient)
	ctx := context.Background()

	held, err := l.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	g, err := l.Grant(held)
	require.NoError(t, err)
	t.Logf("grant %+v", g)
	assert.Equal(t, 5, g.Masters)
	assert.Equal(t, 5, g.Acquired)
	assert.Equal(t, 3, g.Quorum)
	assert.Equal(t, 1, g.Rounds)
	drift := time.Duration(float64(distsync.DefaultLease)*redlock.DefaultDriftFactor) + redlock.DefaultDriftConstant
	assert.Equal(t, distsync.DefaultLease-g.Elapsed-drift, g.Validity)
	_, ok := held.Deadline()
	assert.False(t, ok, "a watchdog-renewed hold has no deadline")
	assert.Len(t, withKey(t, servers, l.Key()), 5)
	for _, m := range l.Members(held) {
		assert.NotNil(t, m)
	}

	// Another owner is refused.
	_, err = l.TryLock(ctx, 0, 0)
	assert.ErrorIs(t, err, distsync.ErrNotAcquired)

	require.NoError(t, l.Unlock(held))
	assert.ErrorIs(t, context.Cause(held), distsync.ErrReleased)
	assert.Empty(t, withKey(t, servers, l.Key()))
	assert.ErrorIs(t, l.Unlock(held), distsync.ErrNotHeld)
	_, err = l.Grant(held)
	assert.NoError(t, err, "the grant stays readable")
	_, err = l.Grant(ctx)
	assert.ErrorIs(t, err, distsync.ErrNotHeld)

	// An explicit lease: the hold's context ends at the validity deadline.
	const lease = 2 * time.Second
	held, err = l.TryLock(ctx, 0, lease)
	require.NoError(t, err)
	g, err = l.Grant(held)
	require.NoError(t, err)
	dl, ok := held.Deadline()
	require.True(t, ok)
	assert.Equal(t, g.Deadline, dl)
	assert.Less(t, g.Validity, lease)
	<-held.Done()
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseExpired)
	_ = l.Unlock(held) // the keys may or may not have expired yet
	assert.Empty(t, withKey(t, servers, l.Key()))
}

func TestMinorityOfMastersDown(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 5)
	for _, s := range servers {
		redistest.RequireProcess(t, s)
	}
	const timeout = 2 * time.Second
	l := newRedlock(t, clientsOn(t, servers), dstest.Name(t), redlock.WithMasterTimeout(timeout), fast)
	ctx := context.Background()
	servers[1].Kill()
	servers[3].Kill()

	held, err := l.TryLock(ctx, 0, 0)
	require.NoError(t, err, "3 of 5 masters are a majority")
	g, err := l.Grant(held)
	require.NoError(t, err)
	assert.Equal(t, 3, g.Acquired)
	members := l.Members(held)
	assert.Nil(t, members[1])
	assert.Nil(t, members[3])
	assert.Len(t, withKey(t, servers, l.Key()), 3)
	require.NoError(t, l.Unlock(held))
	assert.Empty(t, withKey(t, servers, l.Key()))

	// With a third master down, no round can succeed.
	servers[4].Kill()
	const wait = time.Second
	start := time.Now()
	_, err = l.TryLock(ctx, wait, 0)
	took := time.Since(start)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	t.Logf("refused after %v: %v", took, err)
	assert.Less(t, took, wait+timeout+2*time.Second, "within the wait budget and one round")
	assert.Contains(t, err.Error(), "2 of 5 masters granted, 3 needed")
	// A grant that answers after its round was decided is released when it
	// answers, in the background: within one per-master timeout (under
	// load, the leader's grant came in after TryLock returned, 1 run in 2
	// with -count=2).
	assert.Eventually(t, func() bool { return len(withKey(t, servers, l.Key())) == 0 }, timeout, 10*time.Millisecond, "no key left on the live masters")
}

// pauseMaster pauses s until the test ends (or Resume), so that Clients
// closing at cleanup are not left waiting on it.
func pauseMaster(t *testing.T, s *redistest.Server) {
	t.Helper()
	redistest.RequireProcess(t, s)
	s.Pause()
	t.Cleanup(s.Resume)
}

func TestSlowMasterDoesNotBlock(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 5)
	const timeout = time.Second
	l := newRedlock(t, clientsOn(t, servers), dstest.Name(t), redlock.WithMasterTimeout(timeout))
	ctx := context.Background()
	// Warm the connections and scripts, so the round measures the pause only.
	held, err := l.TryLock(ctx, 0, 0)
	require.NoError(t, err)
	require.NoError(t, l.Unlock(held))

	pauseMaster(t, servers[0])
	start := time.Now()
	held, err = l.TryLock(ctx, 0, 0)
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("granted after %v with one master paused (per-master timeout %v)", took, timeout)
	// A member's own attempt waits up to 5 s for its reply; the round must not.
	assert.Less(t, took, timeout+2*time.Second)
	g, err := l.Grant(held)
	require.NoError(t, err)
	assert.Equal(t, 4, g.Acquired)
	assert.GreaterOrEqual(t, g.Elapsed, timeout, "the round waited for the paused master until the timeout")
	require.NoError(t, l.Unlock(held))
	assert.Empty(t, withKey(t, servers[1:], l.Key()))

	// When the master answers, its late grant is released.
	servers[0].Resume()
	l.WaitPending()
	assert.Empty(t, withKey(t, servers, l.Key()), "the late grant was released")
}

func TestValidityExceeded(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 5)
	// The round lasts the per-master timeout (one master does not answer),
	// longer than the lease: the validity is negative.
	const lease, timeout = 200 * time.Millisecond, 400 * time.Millisecond
	clients := clientsOn(t, servers, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	l := newRedlock(t, clients, dstest.Name(t), redlock.WithMasterTimeout(timeout), redlock.WithWatchdogLease(lease))
	pauseMaster(t, servers[0])
	ctx := context.Background()

	_, err := l.TryLock(ctx, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	t.Log(err)
	assert.Contains(t, err.Error(), "masters granted but the validity")
	// The four grants were renewed by the watchdog during the round; the
	// refusal released them.
	assert.Empty(t, withKey(t, servers[1:], l.Key()), "refused and released")

	// The same with an explicit lease.
	_, err = l.TryLock(ctx, 0, lease)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	assert.Contains(t, err.Error(), "validity")

	servers[0].Resume()
	l.WaitPending()
	assert.Empty(t, withKey(t, servers, l.Key()))
}

func TestMajorityLostCancelsHolder(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 5)
	for _, s := range servers {
		redistest.RequireProcess(t, s)
	}
	const lease = time.Second
	clients := clientsOn(t, servers, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	l := newRedlock(t, clients, dstest.Name(t), redlock.WithWatchdogLease(lease), patient)
	held, err := l.Lock(context.Background())
	require.NoError(t, err)
	g, err := l.Grant(held)
	require.NoError(t, err)
	require.Equal(t, 5, g.Acquired)

	servers[0].Kill()
	servers[2].Kill()
	servers[4].Kill()
	killed := time.Now()
	select {
	case <-held.Done():
	case <-time.After(lease + 10*time.Second):
		t.Fatal("holder's context not cancelled after a majority of masters was lost")
	}
	t.Logf("lost after %v (lease %v)", time.Since(killed), lease)
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	err = l.Unlock(held)
	assert.ErrorContains(t, err, "released on 2 of 5 masters, 3 needed")
	assert.Empty(t, withKey(t, servers, l.Key()))
}

func TestMinorityLossKeepsHold(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 5)
	const lease = 2 * time.Second
	clients := clientsOn(t, servers, func(o *distsync.Options) { o.Watchdog.Lease = lease })
	l := newRedlock(t, clients, dstest.Name(t), redlock.WithWatchdogLease(lease), redlock.WithMasterTimeout(lease/2))
	held, err := l.Lock(context.Background())
	require.NoError(t, err)
	members := l.Members(held)
	for _, m := range members {
		require.NotNil(t, m, "every master granted")
	}

	drop := func(i int) {
		rc := clients[i].Rueidis()
		require.NoError(t, rc.Do(context.Background(), rc.B().Del().Key(l.Key()).Build()).Error())
		<-members[i].Done() // the next renewal finds it gone
	}
	drop(0)
	drop(1)
	assert.NoError(t, held.Err(), "3 of 5 still hold it")
	drop(2)
	<-held.Done()
	assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	assert.ErrorContains(t, context.Cause(held), "3 of 5 members lost")
	assert.ErrorIs(t, l.Unlock(held), distsync.ErrNotHeld)
	assert.Empty(t, withKey(t, servers, l.Key()))
}

func TestReentry(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	ls := lockers(t, dstest.Kinds[0], clientsOn(t, servers), dstest.Name(t))
	l, err := redlock.New(ls, patient)
	require.NoError(t, err)
	ctx := context.Background()
	outer, err := l.Lock(ctx)
	require.NoError(t, err)
	inner, err := l.TryLock(outer, 0, 0)
	require.NoError(t, err, "the hold's context re-enters on every master")
	for i, m := range l.Members(inner) {
		n, err := ls[i].(*mutex.Mutex).HoldCount(m)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		// A member's fencing token is the resource's defence against a
		// paused holder.
		tok, err := ls[i].(*mutex.Mutex).Token(m)
		require.NoError(t, err)
		assert.Positive(t, tok)
	}
	require.NoError(t, l.Unlock(inner))
	assert.NoError(t, outer.Err())
	assert.Len(t, withKey(t, servers, l.Key()), 3)
	require.NoError(t, l.Unlock(outer))
	assert.Empty(t, withKey(t, servers, l.Key()))
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	l := newRedlock(t, clientsOn(t, servers), dstest.Name(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := l.Lock(ctx)
	assert.ErrorIs(t, err, context.Canceled)

	// Cancelled while retrying: another owner holds it.
	held, err := l.Lock(context.Background())
	require.NoError(t, err)
	defer l.Unlock(held)
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = l.Lock(ctx)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCompositionOverKinds(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	for _, kind := range dstest.Kinds {
		t.Run(kind.Name, func(t *testing.T) {
			sets := [][]*distsync.Client{clientsOn(t, servers), clientsOn(t, servers)}
			name := dstest.Name(t)
			var ls []distsync.Locker
			for g := range 4 {
				l, err := redlock.New(lockers(t, kind, sets[g%2], name), fast)
				require.NoError(t, err)
				ls = append(ls, l)
			}
			dstest.Contend(t, ls, 5, time.Minute)
			waitPending(ls)
			assert.Empty(t, withKey(t, servers, ls[0].Key()))
		})
	}
}

func TestInvalidInput(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	a, err := c.Mutex(dstest.Name(t))
	require.NoError(t, err)
	b, err := c.Mutex("other-" + dstest.Name(t))
	require.NoError(t, err)
	bad, err := c.Mutex("bad{name}") // a nil *mutex.Mutex, with an error
	require.ErrorIs(t, err, distsync.ErrInvalidName)
	for what, args := range map[string]struct {
		ls   []distsync.Locker
		opts []redlock.Option
	}{
		"no lockers":      {nil, nil},
		"nil locker":      {[]distsync.Locker{a, nil}, nil},
		"nil first":       {[]distsync.Locker{nil, a}, nil},
		"typed nil":       {[]distsync.Locker{a, bad}, nil},
		"typed nil first": {[]distsync.Locker{bad, a}, nil},
		"different keys":  {[]distsync.Locker{a, b}, nil},
		"timeout":         {[]distsync.Locker{a}, []redlock.Option{redlock.WithMasterTimeout(0)}},
		"drift":           {[]distsync.Locker{a}, []redlock.Option{redlock.WithDrift(1, 0)}},
		"drift constant":  {[]distsync.Locker{a}, []redlock.Option{redlock.WithDrift(0.01, -1)}},
		"watchdog lease":  {[]distsync.Locker{a}, []redlock.Option{redlock.WithWatchdogLease(-time.Second)}},
		"retry delay":     {[]distsync.Locker{a}, []redlock.Option{redlock.WithRetryDelay(time.Second, time.Millisecond)}},
	} {
		_, err := redlock.New(args.ls, args.opts...)
		assert.ErrorIs(t, err, distsync.ErrInvalidArgument, what)
	}
	l, err := redlock.New([]distsync.Locker{a})
	require.NoError(t, err)
	_, err = l.TryLock(context.Background(), -time.Second, 0)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	_, err = l.TryLock(context.Background(), 0, -time.Second)
	assert.ErrorIs(t, err, distsync.ErrInvalidArgument)
	assert.ErrorIs(t, l.Unlock(context.Background()), distsync.ErrNotHeld)
	assert.Nil(t, l.Members(context.Background()))

	c.Close()
	_, err = l.Lock(context.Background())
	assert.ErrorIs(t, err, distsync.ErrClosed, "no retrying on closed Clients")
}

// waiting is what every exclusive kind offers to count its waiters.
type waiting interface {
	Waiting(ctx context.Context) (int, error)
}

// waitingOn returns how many waiters each locker's master has registered.
func waitingOn(t *testing.T, ls []distsync.Locker) []int {
	t.Helper()
	n := make([]int, len(ls))
	for i, l := range ls {
		w, ok := l.(waiting)
		require.True(t, ok, "%T counts no waiters", l)
		var err error
		n[i], err = w.Waiting(context.Background())
		require.NoError(t, err)
	}
	return n
}

// handOffTiming is why the tests of waits ended by push skip on the embedded
// server.
const handOffTiming = "a release's hand-off to a Redlock waiter comes too late on three embedded servers (2 of 3 members granted, a full lease instead of the handed one)"

// A refused Lock waits as a registered waiter of the leader member alone and
// is woken by its release notification (with a retry delay of an hour it
// would not be granted before the test's deadline); the other members are
// asked once the leader granted.
func TestWaitsByPush(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	redistest.RequireReal(t, servers[0], handOffTiming)
	for _, kind := range dstest.Kinds {
		t.Run(kind.Name, func(t *testing.T) {
			name := dstest.Name(t)
			holder, err := redlock.New(lockers(t, kind, clientsOn(t, servers), name), patient)
			require.NoError(t, err)
			members := lockers(t, kind, clientsOn(t, servers), name)
			waiter, err := redlock.New(members, patient, redlock.WithRetryDelay(time.Hour, time.Hour))
			require.NoError(t, err)
			held, err := holder.Lock(context.Background())
			require.NoError(t, err)

			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			type result struct {
				ctx context.Context
				err error
			}
			got := make(chan result, 1)
			go func() {
				c, err := waiter.Lock(ctx)
				got <- result{c, err}
			}()
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual([]int{1, 0, 0}, waitingOn(t, members))
			}, 30*time.Second, time.Millisecond, "the waiter registered on the leader alone")
			require.NoError(t, holder.Unlock(held))

			r := <-got
			require.NoError(t, r.err)
			g, err := waiter.Grant(r.ctx)
			require.NoError(t, err)
			assert.Equal(t, 2, g.Rounds, "the refused round, then the wait the leader's notification ended")
			// A quorum: once two granted, the grant waits 20 ms for the
			// third (patience), which on a loaded machine may answer
			// later (and then gives its grant back).
			assert.GreaterOrEqual(t, g.Acquired, 2)
			assert.Positive(t, g.Validity)
			if _, ok := members[0].(*mutex.Mutex); ok {
				// The wait's grants are the hold: no round re-entered them.
				// (Its validity is not asserted above a second: on a loaded
				// machine the waiter may queue on the other masters too, and
				// their releases hand them over with a second's lease each.)
				for i, mctx := range waiter.Members(r.ctx) {
					n, err := members[i].(*mutex.Mutex).HoldCount(mctx)
					require.NoError(t, err)
					assert.Equal(t, 1, n)
				}
			}
			waiter.WaitPending()
			assert.Equal(t, []int{0, 0, 0}, waitingOn(t, members), "no waiter entry left")
			require.NoError(t, waiter.Unlock(r.ctx))
			assert.Empty(t, withKey(t, servers, waiter.Key()))
		})
	}
}

// A wait whose budget runs out while another owner holds the lock returns
// ErrNotAcquired and leaves nothing behind on any master.
func TestWaitBudget(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	name := dstest.Name(t)
	holder := newRedlock(t, clientsOn(t, servers), name, patient)
	members := lockers(t, dstest.Kinds[0], clientsOn(t, servers), name)
	waiter, err := redlock.New(members, patient)
	require.NoError(t, err)
	held, err := holder.Lock(context.Background())
	require.NoError(t, err)

	_, err = waiter.TryLock(context.Background(), 300*time.Millisecond, 0)
	require.ErrorIs(t, err, distsync.ErrNotAcquired)
	assert.ErrorContains(t, err, "0 of 3 masters granted, 2 needed")
	waiter.WaitPending()
	assert.Equal(t, []int{0, 0, 0}, waitingOn(t, members), "the waiter left every queue")
	require.NoError(t, holder.Unlock(held))
	assert.Empty(t, withKey(t, servers, holder.Key()))
}

// Contenders that split the masters between them give back what they got: a
// waiter granted one master while two others are held by two other owners
// does not keep it, queues on the leader, and is granted the lock once the
// leader's holder lets go.
func TestSplitMasters(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	name := dstest.Name(t)
	direct := lockers(t, dstest.Kinds[0], clientsOn(t, servers), name)
	// Two other owners hold master 0 and master 1 on their own.
	held0, err := direct[0].TryLock(context.Background(), 0, 0)
	require.NoError(t, err)
	held1, err := direct[1].TryLock(context.Background(), 0, 0)
	require.NoError(t, err)

	members := lockers(t, dstest.Kinds[0], clientsOn(t, servers), name)
	waiter, err := redlock.New(members, patient, fast)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan error, 1)
	var wctx context.Context
	go func() {
		var err error
		wctx, err = waiter.Lock(ctx)
		got <- err
	}()
	// Master 2 is free: the waiter takes it, finds no quorum and gives it
	// back; an owner that waits for master 2 gets it.
	m2, err := direct[2].TryLock(context.Background(), 30*time.Second, 0)
	require.NoError(t, err, "the waiter does not keep a minority of the masters")
	require.NoError(t, direct[2].Unlock(m2))

	require.NoError(t, direct[0].Unlock(held0))
	require.NoError(t, <-got)
	g, err := waiter.Grant(wctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, g.Acquired, 2)
	require.NoError(t, direct[1].Unlock(held1))
	require.NoError(t, waiter.Unlock(wctx))
	waiter.WaitPending()
	assert.Empty(t, withKey(t, servers, waiter.Key()))
}

// heldWithWaiter returns a Redlock over servers holding the test's name, and
// a waiter Redlock of it on Clients of its own, with its members, that never
// retries after a random delay (it would be of an hour).
func heldWithWaiter(t *testing.T, servers []*redistest.Server) (holder *redlock.Lock, held context.Context, waiter *redlock.Lock, members []distsync.Locker) {
	t.Helper()
	name := dstest.Name(t)
	holder = newRedlock(t, clientsOn(t, servers), name, patient)
	members = lockers(t, dstest.Kinds[0], clientsOn(t, servers), name)
	waiter, err := redlock.New(members, patient, redlock.WithRetryDelay(time.Hour, time.Hour))
	require.NoError(t, err)
	held, err = holder.Lock(context.Background())
	require.NoError(t, err)
	return holder, held, waiter, members
}

// A blocking TryLock with an explicit lease granted by its members' waits
// ends at the validity deadline counted from their grants.
func TestWaitsByPushExplicitLease(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	redistest.RequireReal(t, servers[0], handOffTiming)
	holder, held, waiter, members := heldWithWaiter(t, servers)

	const lease = 700 * time.Millisecond // shorter than the hand-off lease
	got := make(chan context.Context, 1)
	go func() {
		c, err := waiter.TryLock(context.Background(), time.Minute, lease)
		assert.NoError(t, err)
		got <- c
	}()
	require.Eventually(t, func() bool {
		return assert.ObjectsAreEqual([]int{1, 0, 0}, waitingOn(t, members))
	}, 30*time.Second, time.Millisecond, "the waiter registered on the leader alone")
	require.NoError(t, holder.Unlock(held))
	c := <-got
	taken := time.Now()
	require.NotNil(t, c)
	g, err := waiter.Grant(c)
	require.NoError(t, err)
	assert.Equal(t, 2, g.Rounds)
	assert.LessOrEqual(t, g.Validity, lease)
	// Every member's grant was asked for before TryLock returned.
	assert.True(t, g.Deadline.Before(taken.Add(lease)), "the validity ends before any member's lease could")
	deadline, ok := c.Deadline()
	require.True(t, ok, "an explicit lease's hold ends at its deadline")
	assert.Equal(t, g.Deadline, deadline)
	<-c.Done()
	assert.ErrorIs(t, context.Cause(c), distsync.ErrLeaseExpired)
	waiter.WaitPending()
	// The servers' leases end a little after the hold's validity.
	require.Eventually(t, func() bool { return len(withKey(t, servers, waiter.Key())) == 0 },
		10*time.Second, 5*time.Millisecond, "the members' explicit leases are not renewed")
}

// Closing the waiter's Clients while it waits on the leader ends the wait
// with ErrClosed, and leaves no lock behind once the holder lets go (a
// release that handed a master to the vanished waiter keeps it at most the
// hand-off lease).
func TestCloseWhileWaiting(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	name := dstest.Name(t)
	holder := newRedlock(t, clientsOn(t, servers), name, patient)
	clients := clientsOn(t, servers)
	members := lockers(t, dstest.Kinds[0], clients, name)
	waiter, err := redlock.New(members, patient, redlock.WithRetryDelay(time.Hour, time.Hour))
	require.NoError(t, err)
	held, err := holder.Lock(context.Background())
	require.NoError(t, err)

	got := make(chan error, 1)
	go func() {
		_, err := waiter.Lock(context.Background())
		got <- err
	}()
	require.Eventually(t, func() bool {
		return assert.ObjectsAreEqual([]int{1, 0, 0}, waitingOn(t, members))
	}, 30*time.Second, time.Millisecond, "the waiter registered on the leader")
	for _, c := range clients {
		c.Close()
	}
	assert.ErrorIs(t, <-got, distsync.ErrClosed)
	waiter.WaitPending()
	require.NoError(t, holder.Unlock(held))
	require.Eventually(t, func() bool { return len(withKey(t, servers, holder.Key())) == 0 },
		10*time.Second, 5*time.Millisecond, "no master keeps the lock")
}

// Waiters queue on one master, the leader (the first that answered their
// round), so its order decides who is granted next: the masters' votes do
// not split between waiters that each head another master's queue. Waiters
// that queued one after another are granted in that order, each by its
// leader's notification (a retry delay of an hour would outlast the test).
func TestWaitersFollowTheLeader(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	holder, held, first, counter := heldWithWaiter(t, servers)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 3
	waiters := []*redlock.Lock{first}
	got := make([]chan context.Context, n)
	for i := range got {
		if i > 0 {
			waiters = append(waiters, newRedlock(t, clientsOn(t, servers), dstest.Name(t), patient, redlock.WithRetryDelay(time.Hour, time.Hour)))
		}
		got[i] = make(chan context.Context, 1)
		go func() {
			c, err := waiters[i].Lock(ctx)
			assert.NoError(t, err)
			got[i] <- c
		}()
		require.Eventually(t, func() bool {
			return assert.ObjectsAreEqual([]int{i + 1, 0, 0}, waitingOn(t, counter))
		}, 30*time.Second, time.Millisecond, "waiter %d queued on the leader alone", i)
	}
	require.NoError(t, holder.Unlock(held))
	for i, w := range waiters {
		c := <-got[i] // the next in the leader's queue; the others still wait
		require.NotNil(t, c)
		assert.Equal(t, []int{n - 1 - i, 0, 0}, waitingOn(t, counter), "waiter %d holds, the later ones wait", i)
		g, err := w.Grant(c)
		require.NoError(t, err)
		// A quorum: votes split between waiters would give none a quorum.
		// The third master, which the previous holder's release may still
		// be reaching, may answer after the 20 ms the grant waits for it
		// once two granted (patience) on a loaded machine.
		assert.GreaterOrEqual(t, g.Acquired, 2, "waiter %d holds a quorum", i)
		require.NoError(t, w.Unlock(c))
	}
	for _, w := range waiters {
		w.WaitPending()
	}
	assert.Empty(t, withKey(t, servers, holder.Key()))
}

// A waiter whose first master is down queues on the next master that
// answers its round, and is granted by it and the third.
func TestLeaderDown(t *testing.T) {
	t.Parallel()
	servers := startMasters(t, 3)
	redistest.RequireProcess(t, servers[0])
	holder, held, waiter, members := heldWithWaiter(t, servers)
	servers[0].Kill()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := make(chan context.Context, 1)
	go func() {
		c, err := waiter.Lock(ctx)
		assert.NoError(t, err)
		got <- c
	}()
	require.Eventually(t, func() bool {
		return assert.ObjectsAreEqual([]int{1, 0}, waitingOn(t, members[1:]))
	}, 30*time.Second, time.Millisecond, "the waiter queued on master 1 alone")
	require.NoError(t, holder.Unlock(held))
	c := <-got
	require.NotNil(t, c)
	g, err := waiter.Grant(c)
	require.NoError(t, err)
	assert.Equal(t, 2, g.Acquired)
	assert.Nil(t, waiter.Members(c)[0])
	require.NoError(t, waiter.Unlock(c))
	waiter.WaitPending()
	assert.Empty(t, withKey(t, servers, holder.Key()))
}
