package redistest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/distsync/distsync/internal/redistest"
	"github.com/redis/rueidis"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func ctx(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return c
}

func set(t *testing.T, c rueidis.Client, k, v string) {
	t.Helper()
	if err := c.Do(ctx(t, 5*time.Second), c.B().Set().Key(k).Value(v).Build()).Error(); err != nil {
		t.Fatalf("SET %s: %v", k, err)
	}
}

func get(t *testing.T, c rueidis.Client, k string) string {
	t.Helper()
	v, err := c.Do(ctx(t, 5*time.Second), c.B().Get().Key(k).Build()).ToString()
	if err != nil {
		t.Fatalf("GET %s: %v", k, err)
	}
	return v
}

func TestStartStop(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	t.Logf("kind %s at %s", s.Kind(), s.Addr())
	c := s.Client(t)
	set(t, c, "k", "v")
	if got := get(t, c, "k"); got != "v" {
		t.Fatalf("GET k = %q", got)
	}
	if s.Dir() != "" && s.Pid() == 0 || !s.Running() {
		t.Fatalf("running server has pid %d, Running %v", s.Pid(), s.Running())
	}
	s.Stop()
	s.Stop() // idempotent
	if s.Pid() != 0 || s.Running() {
		t.Fatalf("pid %d, Running %v after Stop", s.Pid(), s.Running())
	}
	err := c.Do(ctx(t, 2*time.Second), c.B().Ping().Build()).Error()
	if err == nil {
		t.Fatal("PING answered after Stop")
	}
}

func TestKillRestartKeepsAppendOnlyData(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, redistest.WithConfig("appendonly", "yes"), redistest.WithConfig("appendfsync", "always"))
	redistest.RequireProcess(t, s)
	addr, pid := s.Addr(), s.Pid()
	set(t, s.Client(t), "durable", "yes")
	s.Kill()
	if s.Pid() != 0 {
		t.Fatal("pid after Kill")
	}
	s.Restart(t)
	if s.Addr() != addr || s.Pid() == 0 || s.Pid() == pid {
		t.Fatalf("after Restart: addr %s (was %s), pid %d (was %d)", s.Addr(), addr, s.Pid(), pid)
	}
	if got := get(t, s.Client(t), "durable"); got != "yes" {
		t.Fatalf("GET durable = %q after restart", got)
	}
}

func TestKillRestartWithoutPersistenceLosesData(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireProcess(t, s)
	set(t, s.Client(t), "volatile", "yes")
	s.Kill()
	s.Restart(t)
	c := s.Client(t)
	if err := c.Do(ctx(t, 5*time.Second), c.B().Get().Key("volatile").Build()).Error(); !rueidis.IsRedisNil(err) {
		t.Fatalf("GET volatile after restart: err %v, want nil reply", err)
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireProcess(t, s)
	c := s.Client(t)
	set(t, c, "k", "v")
	s.Pause()
	start := time.Now()
	if err := c.Do(ctx(t, 300*time.Millisecond), c.B().Get().Key("k").Build()).Error(); err == nil {
		t.Fatal("paused server answered")
	}
	if time.Since(start) < 250*time.Millisecond {
		t.Fatalf("paused server failed fast (%v), want a timeout", time.Since(start))
	}
	s.Resume()
	if got := get(t, c, "k"); got != "v" {
		t.Fatalf("GET k = %q after Resume", got)
	}
}

func TestStopWhilePaused(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireProcess(t, s)
	s.Pause()
	s.Stop() // must not hang
	if s.Pid() != 0 {
		t.Fatal("pid after Stop")
	}
}

func TestShared(t *testing.T) {
	t.Parallel()
	a := redistest.Shared(t)
	for i := 0; i < 4; i++ {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			if b := redistest.Shared(t); b != a {
				t.Fatalf("Shared returned %p then %p", a, b)
			}
			c := a.Client(t)
			k := fmt.Sprintf("shared:%d", i)
			set(t, c, k, k)
			if got := get(t, c, k); got != k {
				t.Fatalf("GET %s = %q", k, got)
			}
		})
	}
}

func TestClusterFailover(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := redistest.StartCluster(t, 3, 1)
	t.Logf("cluster of %d nodes up in %v", len(c.Nodes()), time.Since(start))
	if len(c.Nodes()) != 6 || len(c.Masters()) != 3 || len(c.Addrs()) != 6 {
		t.Fatalf("nodes %d, masters %d, addrs %d", len(c.Nodes()), len(c.Masters()), len(c.Addrs()))
	}
	cc := c.Client(t)
	for _, m := range c.Masters() {
		if _, ok := cc.Nodes()[m.Addr()]; !ok {
			t.Fatalf("cluster client does not know master %s: %v", m.Addr(), cc.Nodes())
		}
	}
	for i := 0; i < 20; i++ { // keys spread over all masters
		k := fmt.Sprintf("key:%d", i)
		set(t, cc, k, k)
		if got := get(t, cc, k); got != k {
			t.Fatalf("GET %s = %q", k, got)
		}
	}

	old := c.Masters()[0]
	start = time.Now()
	promoted := c.Failover(t, old)
	t.Logf("failover %s -> %s in %v", old.Addr(), promoted.Addr(), time.Since(start))
	role, err := promoted.Client(t).Do(ctx(t, 5*time.Second), cc.B().Role().Build()).ToArray()
	if err != nil || len(role) == 0 {
		t.Fatalf("ROLE: %v", err)
	}
	if r, _ := role[0].ToString(); r != "master" {
		t.Fatalf("promoted node has role %q", r)
	}
	if c.Masters()[0] != promoted {
		t.Fatal("Masters not updated after Failover")
	}
	for i := 0; i < 20; i++ {
		k := fmt.Sprintf("key:%d", i)
		if got := get(t, cc, k); got != k {
			t.Fatalf("GET %s = %q after failover", k, got)
		}
	}

	// With the master dead, Failover forces the old master, now its
	// replica, to take over.
	promoted.Kill()
	start = time.Now()
	if back := c.Failover(t, promoted); back != old {
		t.Fatalf("Failover of dead %s promoted %s, want %s", promoted.Addr(), back.Addr(), old.Addr())
	}
	t.Logf("forced failover after Kill in %v", time.Since(start))
	for i := 0; i < 20; i++ {
		k := fmt.Sprintf("key:%d", i)
		if got := get(t, cc, k); got != k {
			t.Fatalf("GET %s = %q after forced failover", k, got)
		}
	}
}

func TestSentinel(t *testing.T) {
	t.Parallel()
	start := time.Now()
	st := redistest.StartSentinel(t, 1, 3)
	t.Logf("sentinel setup up in %v", time.Since(start))
	if st.MasterName() != "distsync" || len(st.SentinelAddrs()) != 3 || len(st.Replicas()) != 1 {
		t.Fatalf("name %q, sentinels %v, replicas %d", st.MasterName(), st.SentinelAddrs(), len(st.Replicas()))
	}
	c := st.Client(t)
	set(t, c, "via-sentinel", "ok")
	if n, err := c.Do(ctx(t, 5*time.Second), c.B().Wait().Numreplicas(1).Timeout(5000).Build()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d, %v", n, err)
	}
	r := st.Replicas()[0].Client(t)
	if got := get(t, r, "via-sentinel"); got != "ok" {
		t.Fatalf("replica GET = %q", got)
	}
	if got := get(t, st.Master().Client(t), "via-sentinel"); got != "ok" {
		t.Fatalf("master GET = %q", got)
	}
}
