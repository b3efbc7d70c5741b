package redistest

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Containers runs Redis in containers, for machines with a Docker daemon but
// no redis-server binary. The library module has no container dependency: a
// module that has one (integration, with testcontainers-go) registers its
// runtime with UseContainers, and only its tests use containers.
type Containers struct {
	// Kind describes the servers for the log, e.g.
	// "redis:7 container (testcontainers-go)".
	Kind string
	// Available reports whether a container can be started (a Docker daemon
	// answers). It is called at most once per test binary.
	Available func() bool
	// Start runs a Redis 7 server with this redis-server command line and
	// returns the address it is reachable on and a function that removes it.
	Start func(args []string) (addr string, stop func(), err error)
}

var containers struct {
	mu sync.Mutex
	rt *Containers
	sync.Once
	ok bool
}

// UseContainers registers rt, to be used by Start, Shared and SharedServer
// when no redis-server binary is found, before the miniredis fallback. Call
// it before the first server starts, e.g. from TestMain or an init function.
func UseContainers(rt Containers) {
	containers.mu.Lock()
	defer containers.mu.Unlock()
	containers.rt = &rt
}

// dockerAvailable reports, once per test binary, whether containers are
// registered and can be started.
func dockerAvailable() bool {
	containers.mu.Lock()
	rt := containers.rt
	containers.mu.Unlock()
	if rt == nil || os.Getenv(ServerEnv) == "none" {
		return false
	}
	containers.Do(func() { containers.ok = rt.Available() })
	return containers.ok
}

// startContainer runs a container with the base settings and cfg on the
// command line. Kill, Pause, Resume and Restart are not supported on it.
func startContainer(cfg config) (*Server, error) {
	containers.mu.Lock()
	rt := containers.rt
	containers.mu.Unlock()
	args := []string{"redis-server", "--save", "", "--appendonly", "no", "--protected-mode", "no"}
	for _, kv := range cfg.extra {
		args = append(args, "--"+kv[0])
		if f := strings.Fields(kv[1]); len(f) > 0 {
			args = append(args, f...)
		} else {
			args = append(args, "")
		}
	}
	addr, stop, err := rt.Start(args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rt.Kind, err)
	}
	s := &Server{backend: backendContainer, kind: rt.Kind, addr: addr, stopCtr: stop}
	if _, port, err := net.SplitHostPort(addr); err == nil {
		s.port, _ = strconv.Atoi(port)
	}
	return s, nil
}

func (s *Server) stopContainerLocked() {
	if s.stopCtr == nil {
		return
	}
	s.stopCtr()
	s.stopCtr = nil
}
