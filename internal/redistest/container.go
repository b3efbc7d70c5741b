package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// testcontainers-go is pinned at v0.44.0: v0.45.0 needs go 1.26 in go.mod and
// this module declares go 1.25.

// containerHandle is the running container of a Docker-backed server.
type containerHandle = testcontainers.Container

const containerImage = "redis:7"

var dockerOnce struct {
	sync.Once
	ok bool
}

// dockerAvailable reports, once per test binary, whether a Docker daemon
// answers. Without a DOCKER_HOST, a known socket or a testcontainers config it
// answers false at once, without asking testcontainers.
func dockerAvailable() bool {
	dockerOnce.Do(func() {
		home, _ := os.UserHomeDir()
		candidates := []string{
			"/var/run/docker.sock",
			filepath.Join(home, ".docker", "run", "docker.sock"),
			filepath.Join(home, ".testcontainers.properties"),
		}
		if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
			candidates = append(candidates, filepath.Join(x, "docker.sock"))
		}
		found := os.Getenv("DOCKER_HOST") != ""
		for _, c := range candidates {
			if _, err := os.Stat(c); err == nil {
				found = true
			}
		}
		if !found {
			return
		}
		defer func() { _ = recover() }() // testcontainers panics on some broken setups
		p, err := testcontainers.NewDockerProvider()
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		dockerOnce.ok = p.Health(ctx) == nil // Health closes p
	})
	return dockerOnce.ok
}

// startContainer runs redis:7 with the base settings and cfg on the command
// line. Kill, Pause, Resume and Restart are not supported on it.
func startContainer(cfg config) (*Server, error) {
	args := []string{"redis-server", "--save", "", "--appendonly", "no", "--protected-mode", "no"}
	for _, kv := range cfg.extra {
		args = append(args, "--"+kv[0])
		if f := strings.Fields(kv[1]); len(f) > 0 {
			args = append(args, f...)
		} else {
			args = append(args, "")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := testcontainers.Run(ctx, containerImage,
		testcontainers.WithExposedPorts("6379/tcp"),
		testcontainers.WithCmd(args...),
		testcontainers.WithWaitStrategy(wait.ForLog("Ready to accept connections")),
	)
	if err != nil {
		if c != nil {
			_ = testcontainers.TerminateContainer(c)
		}
		return nil, fmt.Errorf("container %s: %w", containerImage, err)
	}
	host, err := c.Host(ctx)
	if err == nil {
		var port interface{ Port() string }
		port, err = c.MappedPort(ctx, "6379/tcp")
		if err == nil {
			s := &Server{
				backend: backendContainer,
				kind:    containerImage + " container (testcontainers-go)",
				addr:    net.JoinHostPort(host, port.Port()),
				ctr:     c,
			}
			_, _ = fmt.Sscan(port.Port(), &s.port)
			return s, nil
		}
	}
	_ = testcontainers.TerminateContainer(c)
	return nil, fmt.Errorf("container %s: %w", containerImage, err)
}

func (s *Server) stopContainerLocked() {
	if s.ctr == nil {
		return
	}
	_ = testcontainers.TerminateContainer(s.ctr)
	s.ctr = nil
}
