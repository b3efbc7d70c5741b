package redistest

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// clusterTimeout bounds cluster formation and failover.
const clusterTimeout = 30 * time.Second

// Cluster is a Redis Cluster of redis-server processes owned by a test.
type Cluster struct {
	nodes []*Server

	mu      sync.Mutex
	masters []*Server
}

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	addr, master string
	flags        []string
}

func (n clusterNode) has(flag string) bool {
	for _, f := range n.flags {
		if f == flag {
			return true
		}
	}
	return false
}

func parseClusterNodes(s string) []clusterNode {
	var out []clusterNode
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		out = append(out, clusterNode{addr: addr, flags: strings.Split(f[2], ","), master: f[3]})
	}
	return out
}

// StartCluster starts masters*(1+replicasPerMaster) cluster-enabled servers
// (cluster-node-timeout 2000 ms; opts apply to every node), spreads the 16384
// slots evenly over the masters, joins them with CLUSTER MEET, attaches
// replicasPerMaster replicas to each master with CLUSTER REPLICATE, and waits
// until every node reports cluster_state:ok, sees the same roles, and every
// replica is in sync. All nodes stop at tb.Cleanup. It needs a redis-server
// binary: without one it skips the test, or fails it when
// DISTSYNC_REQUIRE_REDIS=1. Under go test -short it skips the test.
func StartCluster(tb testing.TB, masters, replicasPerMaster int, opts ...Option) *Cluster {
	tb.Helper()
	if testing.Short() {
		tb.Skip("redistest: -short skips what starts a cluster (it takes seconds to form)")
	}
	bin := requireBinary(tb, "a cluster")
	if masters < 1 || replicasPerMaster < 0 {
		tb.Fatalf("redistest: StartCluster(%d, %d): need at least one master", masters, replicasPerMaster)
	}
	cfg := config{extra: [][2]string{
		{"cluster-enabled", "yes"},
		{"cluster-config-file", "nodes.conf"},
		{"cluster-node-timeout", "2000"},
	}}
	for _, o := range opts {
		o(&cfg)
	}
	n := masters * (1 + replicasPerMaster)
	c := &Cluster{}
	for i := 0; i < n; i++ {
		s := startNode(tb, bin, cfg, nil)
		s.cluster = true
		c.nodes = append(c.nodes, s)
	}
	c.masters = append([]*Server(nil), c.nodes[:masters]...)

	a := admin{}
	defer a.close()
	ids := make([]string, n)
	for i, s := range c.nodes {
		ids[i] = a.must(tb, s, "CLUSTER", "MYID")
		a.must(tb, s, "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1))
	}
	for i, s := range c.masters {
		lo, hi := i*16384/masters, (i+1)*16384/masters-1
		a.must(tb, s, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi))
	}
	for _, s := range c.nodes[1:] {
		a.must(tb, c.nodes[0], "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(s.port))
	}
	waitFor(tb, clusterTimeout, "all cluster nodes know each other", func() (bool, string) {
		for _, s := range c.nodes {
			out, err := a.do(tb, s, "CLUSTER", "NODES")
			if err != nil {
				return false, err.Error()
			}
			nodes := parseClusterNodes(out)
			if len(nodes) != n {
				return false, fmt.Sprintf("%s knows %d of %d nodes", s.addr, len(nodes), n)
			}
			for _, cn := range nodes {
				if cn.has("handshake") || cn.has("noaddr") {
					return false, fmt.Sprintf("%s sees %s as %v", s.addr, cn.addr, cn.flags)
				}
			}
		}
		return true, ""
	})
	for i, s := range c.nodes[masters:] {
		a.must(tb, s, "CLUSTER", "REPLICATE", ids[i%masters])
	}
	c.waitStable(tb, a, "cluster formation", nil)
	return c
}

// waitStable waits until every running node reports cluster_state:ok and the
// same number of masters as c.masters (and, if promoted is set, sees it as a
// master), and every running replica is in sync.
func (c *Cluster) waitStable(tb testing.TB, a admin, what string, promoted *Server) {
	tb.Helper()
	masters := c.Masters()
	waitFor(tb, clusterTimeout, what, func() (bool, string) {
		for _, s := range c.nodes {
			if s.Pid() == 0 {
				continue
			}
			info, err := a.do(tb, s, "CLUSTER", "INFO")
			if err != nil {
				return false, fmt.Sprintf("%s: %v", s.addr, err)
			}
			if v := infoField(info, "cluster_state"); v != "ok" {
				return false, fmt.Sprintf("%s: cluster_state %q", s.addr, v)
			}
			out, err := a.do(tb, s, "CLUSTER", "NODES")
			if err != nil {
				return false, fmt.Sprintf("%s: %v", s.addr, err)
			}
			nm := 0
			for _, cn := range parseClusterNodes(out) {
				if cn.has("master") && !cn.has("fail") {
					nm++
				}
				if promoted != nil && cn.addr == promoted.addr && !cn.has("master") {
					return false, fmt.Sprintf("%s sees %s as %v", s.addr, cn.addr, cn.flags)
				}
				if cn.has("slave") && cn.master == "-" {
					return false, fmt.Sprintf("%s sees replica %s without a master", s.addr, cn.addr)
				}
				if cn.has("myself") && cn.has("slave") {
					if ok, why := a.replicaSynced(tb, s); !ok {
						return false, why
					}
				}
			}
			if nm != len(masters) {
				return false, fmt.Sprintf("%s sees %d masters, want %d", s.addr, nm, len(masters))
			}
		}
		return true, ""
	})
}

// Addrs returns the addresses of all nodes.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		out[i] = s.addr
	}
	return out
}

// Nodes returns all nodes, masters first as started.
func (c *Cluster) Nodes() []*Server { return append([]*Server(nil), c.nodes...) }

// Masters returns the current masters, as of StartCluster and the last
// Failover.
func (c *Cluster) Masters() []*Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Server(nil), c.masters...)
}

// ClientOption returns rueidis options for a cluster client seeded with every
// node.
func (c *Cluster) ClientOption() rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: c.Addrs()}
}

// Client returns a rueidis cluster client, closed at tb.Cleanup.
func (c *Cluster) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	return newClient(tb, c.ClientOption())
}

// Failover promotes a replica of master with CLUSTER FAILOVER (FORCE when
// master's process is not running) and waits until the replica is a master
// in every running node's view and all report cluster_state:ok. It returns
// the promoted server.
func (c *Cluster) Failover(tb testing.TB, master *Server) *Server {
	tb.Helper()
	a := admin{}
	defer a.close()

	// Ask the nodes themselves: a replica of master in sync with it.
	var replica *Server
	waitFor(tb, clusterTimeout, "a replica of "+master.addr+" in sync", func() (bool, string) {
		why := "no replica"
		for _, s := range c.nodes {
			if s == master || s.Pid() == 0 {
				continue
			}
			info, err := a.do(tb, s, "INFO", "replication")
			if err != nil {
				why = fmt.Sprintf("%s: %v", s.addr, err)
				continue
			}
			if infoField(info, "role") != "slave" || infoField(info, "master_port") != strconv.Itoa(master.port) {
				continue
			}
			if master.Pid() == 0 || infoField(info, "master_link_status") == "up" {
				replica = s
				return true, ""
			}
			why = fmt.Sprintf("%s: master_link_status %s", s.addr, infoField(info, "master_link_status"))
		}
		return false, why
	})

	args := []string{"CLUSTER", "FAILOVER"}
	if master.Pid() == 0 {
		args = append(args, "FORCE")
	}
	a.must(tb, replica, args...)
	waitFor(tb, clusterTimeout, "replica "+replica.addr+" promoted", func() (bool, string) {
		info, err := a.do(tb, replica, "INFO", "replication")
		if err != nil {
			return false, err.Error()
		}
		role := infoField(info, "role")
		return role == "master", "role " + role
	})

	c.mu.Lock()
	for i, s := range c.masters {
		if s == master {
			c.masters[i] = replica
		}
	}
	c.mu.Unlock()
	c.waitStable(tb, a, "cluster stable after failover", replica)
	return replica
}
