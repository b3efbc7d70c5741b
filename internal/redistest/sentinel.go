package redistest

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// MasterName is the master set name the sentinels of StartSentinel monitor.
const MasterName = "distsync"

// Sentinel is one master, its replicas and the sentinel processes monitoring
// them, all owned by a test.
type Sentinel struct {
	master    *Server
	replicas  []*Server
	sentinels []*Server
}

// StartSentinel starts a master (with opts), replicas replicas of it and
// sentinels sentinel processes (redis-server --sentinel) monitoring it as
// "distsync" with quorum sentinels/2+1, down-after-milliseconds 1000 and
// failover-timeout 5000. It waits until the replicas are in sync and every
// sentinel sees all replicas and the other sentinels and passes SENTINEL
// CKQUORUM. Everything stops at tb.Cleanup. Like StartCluster it needs a
// redis-server binary, and it skips the test under go test -short.
func StartSentinel(tb testing.TB, replicas, sentinels int, opts ...Option) *Sentinel {
	tb.Helper()
	if testing.Short() {
		tb.Skip("redistest: -short skips what starts a sentinel setup (it takes seconds to form)")
	}
	bin := requireBinary(tb, "a sentinel setup")
	if replicas < 0 || sentinels < 1 {
		tb.Fatalf("redistest: StartSentinel(%d, %d): need at least one sentinel", replicas, sentinels)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	st := &Sentinel{master: startNode(tb, bin, cfg, nil)}
	replicaCfg := config{extra: append(append([][2]string(nil), cfg.extra...),
		[2]string{"replicaof", "127.0.0.1 " + strconv.Itoa(st.master.port)})}
	for i := 0; i < replicas; i++ {
		st.replicas = append(st.replicas, startNode(tb, bin, replicaCfg, nil))
	}

	a := admin{}
	defer a.close()
	// Sentinels find replicas in the master's INFO, which they ask for at
	// once on connecting and then only every 10 s: connect them after sync.
	waitFor(tb, 10*time.Second, "replicas in sync", func() (bool, string) {
		for _, r := range st.replicas {
			if ok, why := a.replicaSynced(tb, r); !ok {
				return false, why
			}
		}
		return true, ""
	})

	sentCfg := config{extra: [][2]string{
		{"sentinel monitor", fmt.Sprintf("%s 127.0.0.1 %d %d", MasterName, st.master.port, sentinels/2+1)},
		{"sentinel down-after-milliseconds", MasterName + " 1000"},
		{"sentinel failover-timeout", MasterName + " 5000"},
		{"sentinel parallel-syncs", MasterName + " 1"},
	}}
	for i := 0; i < sentinels; i++ {
		st.sentinels = append(st.sentinels, startNode(tb, bin, sentCfg, []string{"--sentinel"}))
	}

	// Sentinels discover each other through hello messages every 2 s.
	waitFor(tb, 20*time.Second, "sentinels ready", func() (bool, string) {
		for _, s := range st.sentinels {
			peers, err := a.arrayLen(tb, s, "SENTINEL", "SENTINELS", MasterName)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", s.addr, err)
			}
			if peers != sentinels-1 {
				return false, fmt.Sprintf("%s sees %d other sentinels, want %d", s.addr, peers, sentinels-1)
			}
			reps, err := a.maps(tb, s, "SENTINEL", "REPLICAS", MasterName)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", s.addr, err)
			}
			ok := 0
			for _, r := range reps {
				if r["flags"] == "slave" && r["master-link-status"] == "ok" {
					ok++
				}
			}
			if ok != replicas {
				return false, fmt.Sprintf("%s sees %d healthy replicas, want %d", s.addr, ok, replicas)
			}
			if _, err := a.do(tb, s, "SENTINEL", "CKQUORUM", MasterName); err != nil {
				return false, fmt.Sprintf("%s: %v", s.addr, err)
			}
		}
		return true, ""
	})
	return st
}

func (a admin) arrayLen(tb testing.TB, s *Server, args ...string) (int, error) {
	tb.Helper()
	c := a.client(tb, s)
	v, err := c.Do(tb.Context(), c.B().Arbitrary(args...).Build()).ToArray()
	return len(v), err
}

func (a admin) maps(tb testing.TB, s *Server, args ...string) ([]map[string]string, error) {
	tb.Helper()
	c := a.client(tb, s)
	arr, err := c.Do(tb.Context(), c.B().Arbitrary(args...).Build()).ToArray()
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(arr))
	for _, m := range arr {
		sm, err := m.AsStrMap()
		if err != nil {
			return nil, err
		}
		out = append(out, sm)
	}
	return out, nil
}

// Master returns the server started as master (sentinel failovers are not
// tracked).
func (s *Sentinel) Master() *Server { return s.master }

// Replicas returns the servers started as replicas.
func (s *Sentinel) Replicas() []*Server { return append([]*Server(nil), s.replicas...) }

// Sentinels returns the sentinel processes.
func (s *Sentinel) Sentinels() []*Server { return append([]*Server(nil), s.sentinels...) }

// SentinelAddrs returns the sentinels' addresses.
func (s *Sentinel) SentinelAddrs() []string {
	out := make([]string, len(s.sentinels))
	for i, x := range s.sentinels {
		out[i] = x.addr
	}
	return out
}

// MasterName returns the monitored master set name, "distsync".
func (s *Sentinel) MasterName() string { return MasterName }

// ClientOption returns rueidis options for a client that finds the master
// through the sentinels.
func (s *Sentinel) ClientOption() rueidis.ClientOption {
	return rueidis.ClientOption{
		InitAddress: s.SentinelAddrs(),
		Sentinel:    rueidis.SentinelOption{MasterSet: MasterName},
	}
}

// Client returns a rueidis client connected to the master through the
// sentinels, closed at tb.Cleanup.
func (s *Sentinel) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	return newClient(tb, s.ClientOption())
}
