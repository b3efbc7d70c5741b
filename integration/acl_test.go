package integration_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
	"github.com/distsync/distsync/multilock"
	"github.com/distsync/distsync/redlock"
	"github.com/distsync/distsync/watchdog"
)

// aclRecipe is the README's ACL recipe for a distsync user, verbatim: keys
// and channels under the default prefix, and every command that distsync,
// its scripts and rueidis's connection setup send.
const aclRecipe = "ACL SETUSER distsync on >CHANGE-ME resetkeys ~distsync:* resetchannels &distsync:* -@all" +
	" +hello +auth +ping +cluster|slots +cluster|shards" +
	" +evalsha +eval +script|load +wait +client|tracking" +
	" +subscribe +unsubscribe +ssubscribe +sunsubscribe +publish +spublish +pubsub|numsub +pubsub|shardnumsub" +
	" +set +del +exists +pttl +pexpire +time +type" +
	" +hget +hset +hdel +hexists +hincrby +hmget +hgetall" +
	" +llen +lindex +lpop +rpush +lrem +lrange" +
	" +zadd +zrem +zcard +zcount +zscore +zrange +zrangebyscore +zremrangebyscore"

func TestACLRecipeIsInREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(readme), aclRecipe), "the README's ACL recipe differs from the one tested here:\n%s", aclRecipe)
}

// aclLease is the watchdog lease of the restricted user's Clients: short,
// so that the test sees renewals (it waits two leases), yet long enough
// that a renewal on a loaded machine lands before the lease's end less the
// safety margin (at 300 ms, a Cluster's renewals under a CPU hog missed it).
const aclLease = time.Second

// A user restricted by the README's ACL recipe can use every primitive:
// locking and unlocking, waiting (subscribe, publish), renewal by the
// watchdog, inspection, forced unlocks, replica acknowledgement, on a
// standalone server and on Cluster (sharded pub/sub). The server's ACL LOG
// shows that nothing was denied, including the commands whose errors
// distsync ignores.
func TestACLRecipe(t *testing.T) {
	t.Parallel()
	t.Run("standalone", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		redistest.RequireReal(t, s, "ACL users: the embedded server has none")
		admin := s.Client(t)
		setUser(t, admin)
		opts := distsync.Options{Addrs: []string{s.Addr()}, Username: "distsync", Password: "CHANGE-ME", Watchdog: watchdog.Config{Lease: aclLease}}
		exercise(t, opts)
		noDenials(t, admin)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		cl := redistest.StartCluster(t, 3, 0)
		var admins []rueidis.Client
		for _, n := range cl.Nodes() {
			a := n.Client(t)
			setUser(t, a)
			admins = append(admins, a)
		}
		opts := distsync.Options{Addrs: cl.Addrs(), Username: "distsync", Password: "CHANGE-ME", Watchdog: watchdog.Config{Lease: aclLease}}
		exercise(t, opts)
		noDenials(t, admins...)
	})
}

func setUser(t *testing.T, admin rueidis.Client) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, admin.Do(ctx, admin.B().Arbitrary(strings.Fields(aclRecipe)...).Build()).Error())
	require.NoError(t, admin.Do(ctx, admin.B().AclLog().Reset().Build()).Error())
}

// noDenials checks the ACL LOG of every server: the only denial is the one
// exercise provokes.
func noDenials(t *testing.T, admins ...rueidis.Client) {
	t.Helper()
	var entries []rueidis.RedisMessage
	for _, admin := range admins {
		e, err := admin.Do(context.Background(), admin.B().AclLog().Count(100).Build()).ToArray()
		require.NoError(t, err)
		entries = append(entries, e...)
	}
	logged := false
	for _, e := range entries {
		m, _ := e.AsStrMap()
		switch m["object"] {
		case "elsewhere":
			logged = true // exercise's own check that the restriction holds
		case "client|setinfo":
			// Redis 7.2+: rueidis sends it and ignores a refusal.
		default:
			t.Errorf("ACL denied the distsync user: %s %q (object %q)", m["reason"], m["context"], m["object"])
		}
	}
	assert.True(t, logged, "ACL LOG did not record the denied read of a key outside the prefix")
}

// inspected checks that Client.Inspect reads name as a primitive of kind.
func inspected(t *testing.T, c *distsync.Client, name string, kind distsync.Kind) {
	t.Helper()
	info, err := c.Inspect(context.Background(), name)
	require.NoError(t, err)
	assert.Equal(t, kind, info.Kind)
}

// exercise runs every primitive's lock, wait and release paths on two
// Clients made with opts.
func exercise(t *testing.T, opts distsync.Options) {
	ctx := context.Background()
	newClient := func() *distsync.Client {
		c, err := distsync.New(opts)
		require.NoError(t, err)
		t.Cleanup(c.Close)
		return c
	}
	a, b := newClient(), newClient()

	// The restriction is in force: a key outside the prefix is refused.
	rc := a.Rueidis()
	err := rc.Do(ctx, rc.B().Exists().Key("elsewhere").Build()).Error()
	require.ErrorContains(t, err, "NOPERM")

	// Exclusive locks, contended across Clients: waiters subscribe and are
	// woken by the releases' publications.
	for _, k := range dstest.Kinds {
		var ls []distsync.Locker
		for g := range 4 {
			c := a
			if g%2 == 1 {
				c = b
			}
			l, err := k.New(c, "acl-"+k.Name)
			require.NoError(t, err)
			ls = append(ls, l)
		}
		dstest.Contend(t, ls, 3, time.Minute)
	}

	// A mutex held past its lease: the watchdog renews it.
	m, err := a.Mutex("acl-mutex")
	require.NoError(t, err)
	held, err := m.Lock(ctx)
	require.NoError(t, err)
	time.Sleep(2 * opts.Watchdog.Lease)
	require.NoError(t, held.Err(), "the watchdog must renew the lease")
	_, err = m.Token(held)
	require.NoError(t, err)
	locked, err := m.IsLocked(ctx)
	require.NoError(t, err)
	assert.True(t, locked)
	n, err := m.HoldCount(held)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = m.TTL(ctx)
	require.NoError(t, err)
	inspected(t, a, "acl-mutex", distsync.KindMutex)
	require.NoError(t, m.Unlock(held))
	_, err = m.Lock(ctx)
	require.NoError(t, err)
	forced, err := m.ForceUnlock(ctx)
	require.NoError(t, err)
	assert.True(t, forced)

	// Read-write lock: readers share, a downgrade.
	rw, err := a.RWLock("acl-rw")
	require.NoError(t, err)
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	r, err := rw.Read().Lock(w)
	require.NoError(t, err)
	require.NoError(t, rw.Write().Unlock(w))
	rw2, err := b.RWLock("acl-rw")
	require.NoError(t, err)
	r2, err := rw2.Read().Lock(ctx)
	require.NoError(t, err)
	_, err = rw.Read().IsLocked(ctx)
	require.NoError(t, err)
	inspected(t, a, "acl-rw", distsync.KindRWLock)
	require.NoError(t, rw.Read().Unlock(r))
	require.NoError(t, rw2.Read().Unlock(r2))

	// Fair lock: a queued waiter is handed the lock.
	f, err := a.FairLock("acl-fair")
	require.NoError(t, err)
	fheld, err := f.Lock(ctx)
	require.NoError(t, err)
	fb, err := b.FairLock("acl-fair")
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		c, err := fb.Lock(ctx)
		if err == nil {
			err = fb.Unlock(c)
		}
		got <- err
	}()
	waitQueued(t, f, 1)
	inspected(t, a, "acl-fair", distsync.KindFairLock)
	require.NoError(t, f.Unlock(fheld))
	require.NoError(t, <-got)

	// Counting semaphore: a waiter woken by a release.
	sem, err := a.Semaphore("acl-sem")
	require.NoError(t, err)
	_, err = sem.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	require.NoError(t, sem.Acquire(ctx, 1))
	semb, err := b.Semaphore("acl-sem")
	require.NoError(t, err)
	go func() { got <- semb.Acquire(ctx, 1) }()
	dstest.WaitWaiters(t, a, sem.Key()+":waiters", 1)
	inspected(t, a, "acl-sem", distsync.KindSemaphore)
	require.NoError(t, sem.AddPermits(ctx, 0))
	require.NoError(t, sem.Release(ctx, 1))
	require.NoError(t, <-got)
	_, err = sem.Available(ctx)
	require.NoError(t, err)
	_, err = sem.Drain(ctx)
	require.NoError(t, err)
	_, err = sem.Delete(ctx)
	require.NoError(t, err)

	// Permit-expiring semaphore: a permit renewed past its lease, a waiter.
	ps, err := a.PermitSemaphore("acl-permits")
	require.NoError(t, err)
	_, err = ps.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	p, err := ps.Acquire(ctx)
	require.NoError(t, err)
	time.Sleep(2 * opts.Watchdog.Lease)
	require.NoError(t, p.Context().Err(), "the watchdog must renew the permit")
	psb, err := b.PermitSemaphore("acl-permits")
	require.NoError(t, err)
	go func() {
		q, err := psb.Acquire(ctx)
		if err == nil {
			err = psb.Release(ctx, q)
		}
		got <- err
	}()
	dstest.WaitWaiters(t, a, ps.Key()+":waiters", 1)
	inspected(t, a, "acl-permits", distsync.KindPermitSemaphore)
	_, err = ps.Held(ctx)
	require.NoError(t, err)
	require.NoError(t, ps.Release(ctx, p))
	require.NoError(t, <-got)
	_, err = ps.Delete(ctx)
	require.NoError(t, err)

	// Latch: an awaiter woken at zero.
	l, err := a.Latch("acl-latch")
	require.NoError(t, err)
	_, err = l.TrySetCount(ctx, 1)
	require.NoError(t, err)
	lb, err := b.Latch("acl-latch")
	require.NoError(t, err)
	go func() { got <- lb.Await(ctx) }()
	dstest.WaitWaiters(t, a, l.Key()+":waiters", 1)
	inspected(t, a, "acl-latch", distsync.KindLatch)
	_, err = l.Count(ctx)
	require.NoError(t, err)
	_, err = l.CountDown(ctx)
	require.NoError(t, err)
	require.NoError(t, <-got)
	_, err = l.Delete(ctx)
	require.NoError(t, err)

	// Compositions add no command of their own.
	m1, err := a.Mutex("acl-multi-1")
	require.NoError(t, err)
	m2, err := b.Mutex("acl-multi-2")
	require.NoError(t, err)
	ml, err := multilock.New([]distsync.Locker{m1, m2})
	require.NoError(t, err)
	mctx, err := ml.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, ml.Unlock(mctx))
	ra, err := a.Mutex("acl-red") // one master: the test has one server
	require.NoError(t, err)
	red, err := redlock.New([]distsync.Locker{ra})
	require.NoError(t, err)
	rctx, err := red.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, red.Unlock(rctx))

	// An election: campaign, wait in line, proclaim, observe, resign (the
	// next is woken), depose; a mutex taken over (its holder told on its
	// Client's control channel); a semaphore with a time to live.
	ea, err := a.Election("acl-election")
	require.NoError(t, err)
	eb, err := b.Election("acl-election")
	require.NoError(t, err)
	octx, ocancel := context.WithCancel(ctx)
	defer ocancel()
	states := eb.Observe(octx)
	<-states
	lead, _, err := ea.Campaign(ctx, "a")
	require.NoError(t, err)
	require.NoError(t, ea.Proclaim(lead, "a2"))
	next := dstest.CampaignAsync(eb, ctx, "b")
	dstest.AwaitCandidates(t, ea, 1)
	_, err = ea.Leader(ctx)
	require.NoError(t, err)
	require.NoError(t, ea.Resign(lead))
	dstest.Elected(t, next, 10*time.Second, "the next candidate")
	inspected(t, a, "acl-election", distsync.KindElection)
	_, err = ea.ForceResign(ctx)
	require.NoError(t, err)
	ma, err := a.Mutex("acl-force")
	require.NoError(t, err)
	mb, err := b.Mutex("acl-force")
	require.NoError(t, err)
	replaced, err := ma.Lock(ctx)
	require.NoError(t, err)
	took, err := mb.ForceLock(ctx)
	require.NoError(t, err)
	require.NoError(t, mb.Unlock(took))
	<-replaced.Done()
	ts, err := a.Semaphore("acl-ttl")
	require.NoError(t, err)
	_, err = ts.TrySetPermitsTTL(ctx, 1, time.Minute)
	require.NoError(t, err)
	require.NoError(t, ts.Acquire(ctx, 1))

	// Replica acknowledgement sends WAIT: with no replica it is refused as
	// not replicated, not denied.
	ack := opts
	ack.ReplicaAck = distsync.ReplicaAck{Replicas: 1, Timeout: 10 * time.Millisecond}
	c, err := distsync.New(ack)
	require.NoError(t, err)
	defer c.Close()
	am, err := c.Mutex("acl-ack")
	require.NoError(t, err)
	_, err = am.TryLock(ctx, 0, 0)
	require.ErrorIs(t, err, distsync.ErrNotReplicated)
}

// waitQueued waits until n waiters are queued on f.
func waitQueued(t *testing.T, f interface {
	Waiting(context.Context) (int, error)
}, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := f.Waiting(context.Background())
		require.NoError(t, err)
		if got == n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d waiters queued, want %d", got, n)
		time.Sleep(time.Millisecond)
	}
}
