package integration_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/distsync/distsync/internal/redistest"
)

// The integration module is where testcontainers-go lives, so that the
// library's importers never get it (nor Docker's client, OpenTelemetry,
// gopsutil, logrus). It gives redistest a container runtime: the tests here
// run on a redis:7 container where a Docker daemon answers and no
// redis-server binary is installed.
//
// testcontainers-go is pinned at v0.44.0: v0.45.0 needs go 1.26 in go.mod and
// this module declares go 1.25.

const containerImage = "redis:7"

func init() {
	redistest.UseContainers(redistest.Containers{
		Kind:      containerImage + " container (testcontainers-go)",
		Available: dockerAvailable,
		Start:     startContainer,
	})
}

// dockerAvailable reports whether a Docker daemon answers. Without a
// DOCKER_HOST, a known socket or a testcontainers config it answers false at
// once, without asking testcontainers.
func dockerAvailable() (ok bool) {
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
		return false
	}
	defer func() {
		if recover() != nil { // testcontainers panics on some broken setups
			ok = false
		}
	}()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.Health(ctx) == nil // Health closes p
}

// startContainer runs redis:7 with this redis-server command line.
func startContainer(args []string) (string, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := testcontainers.Run(ctx, containerImage,
		testcontainers.WithExposedPorts("6379/tcp"),
		testcontainers.WithCmd(args...),
		testcontainers.WithWaitStrategy(wait.ForLog("Ready to accept connections")),
	)
	stop := func() { _ = testcontainers.TerminateContainer(c) }
	if err != nil {
		if c != nil {
			stop()
		}
		return "", nil, err
	}
	host, err := c.Host(ctx)
	if err != nil {
		stop()
		return "", nil, err
	}
	port, err := c.MappedPort(ctx, "6379/tcp")
	if err != nil {
		stop()
		return "", nil, err
	}
	return net.JoinHostPort(host, port.Port()), stop, nil
}
