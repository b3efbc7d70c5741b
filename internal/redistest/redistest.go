// Package redistest starts real Redis servers for tests: a redis-server child
// process on a free loopback port (or clusters and sentinel setups of them),
// a Redis container where only a Docker daemon is available and a container
// runtime is registered (see UseContainers), and, on a machine with neither,
// an in-process miniredis that speaks RESP2 only. With DISTSYNC_REQUIRE_REDIS=1 (set by CI) the fallback is
// an error instead.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { redistest.Main(m) }
//
// so that shared servers are stopped, goroutine leaks are reported and the log
// says which Redis the tests ran against.
package redistest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/redis/rueidis"
	"go.uber.org/goleak"

	"github.com/distsync/distsync/internal/miniserver"
)

// RequireEnv is the environment variable that, set to 1, turns "no real Redis
// available" into a test failure instead of a fallback to miniredis or a skip.
const RequireEnv = "DISTSYNC_REQUIRE_REDIS"

// ReportEnv names a file to which Main appends its "tests ran against" line,
// so that a run of many packages can show which Redis each used (go test
// prints a passing package's output only with -v).
const ReportEnv = "DISTSYNC_REDIS_REPORT"

// ServerEnv is the environment variable that chooses the redis-server binary:
// unset, the one on PATH (or in /usr/bin, /usr/local/bin); a path, that
// binary; "none", no real server at all (neither a binary nor a container),
// as on a machine with nothing but Go: tests then run on the in-process
// fallback or skip.
const ServerEnv = "DISTSYNC_REDIS_SERVER"

// Option configures a server started by Start, StartCluster or StartSentinel.
type Option func(*config)

type config struct {
	extra [][2]string // redis.conf lines in order; later lines win
}

// WithConfig adds a redis-server configuration directive, written as the line
// "name value" into the server's config file, e.g. WithConfig("appendonly",
// "yes") or WithConfig("replicaof", "127.0.0.1 6379"). It is ignored (with a
// log line) by the miniredis fallback.
func WithConfig(name, value string) Option {
	return func(c *config) { c.extra = append(c.extra, [2]string{name, value}) }
}

type backend int

const (
	backendProcess backend = iota
	backendContainer
	backendMini
)

// Server is one redis-server process on a free loopback port, a redis:7
// container, or the in-process miniredis fallback. Its methods are safe for
// concurrent use.
type Server struct {
	backend backend
	kind    string
	addr    string

	// backendProcess; fixed after start except proc.
	bin      string
	dir      string
	port     int
	args     []string // after the config file, e.g. "--sentinel"
	cfgLines []string
	cluster  bool // cluster-enabled node: ClientOption talks to this node only

	mu   sync.Mutex
	proc *proc // running process, nil when stopped

	// backendMini
	mini *miniserver.Server

	// backendContainer
	stopCtr func()
}

// Start returns a fresh server owned by the test, stopped at tb.Cleanup.
// It fails the test if no server can be started, or if only the miniredis
// fallback is possible and DISTSYNC_REQUIRE_REDIS=1.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	s, err := start(func() string { return tb.TempDir() }, cfg, tb.Logf)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(func() { s.Stop(); forget(s) })
	return s
}

// start picks the backend: a redis-server binary, then Docker, then (unless
// DISTSYNC_REQUIRE_REDIS=1) miniredis.
func start(tempDir func() string, cfg config, logf func(string, ...any)) (*Server, error) {
	var s *Server
	var err error
	switch {
	case redisBinary() != "":
		s, err = startProcess(redisBinary(), tempDir(), cfg, nil)
	case dockerAvailable():
		s, err = startContainer(cfg)
	case os.Getenv(RequireEnv) == "1":
		err = fmt.Errorf("%s=1 but no redis-server binary was found (%s) and no Docker daemon answers; %s",
			RequireEnv, where(), GetServer)
	default:
		if len(cfg.extra) > 0 {
			logf("redistest: miniredis fallback ignores config %v", cfg.extra)
		}
		s, err = startMini()
	}
	if err != nil {
		return nil, err
	}
	remember(s)
	return s, nil
}

var reg struct {
	mu        sync.Mutex
	live      map[*Server]bool
	kinds     []string
	shared    *Server
	sharedDir string
}

func remember(s *Server) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if reg.live == nil {
		reg.live = map[*Server]bool{}
	}
	reg.live[s] = true
	for _, k := range reg.kinds {
		if k == s.kind {
			return
		}
	}
	reg.kinds = append(reg.kinds, s.kind)
}

func forget(s *Server) {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	delete(reg.live, s)
}

// sharedMu serialises the lazy start in Shared without holding reg.mu, which
// remember needs.
var sharedMu sync.Mutex

// Shared returns one server per test binary, started lazily on first use and
// stopped by Main. Tests sharing it must use distinct keys.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	s, err := SharedServer()
	if err != nil {
		tb.Fatalf("redistest: shared server: %v", err)
	}
	return s
}

// SharedServer is Shared for code without a testing.TB, such as Examples.
func SharedServer() (*Server, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	reg.mu.Lock()
	s := reg.shared
	reg.mu.Unlock()
	if s != nil {
		return s, nil
	}
	var dir string
	var dirErr error
	s, err := start(func() string {
		dir, dirErr = os.MkdirTemp("", "redistest-shared-")
		return dir
	}, config{}, func(string, ...any) {})
	if err == nil && dirErr != nil {
		err = dirErr
	}
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	reg.mu.Lock()
	reg.shared, reg.sharedDir = s, dir
	reg.mu.Unlock()
	return s, nil
}

// Main is for TestMain: it runs the tests, stops every server this package
// started, fails the run if goroutines leaked (go.uber.org/goleak, ignoring
// those alive before the tests), prints which Redis the tests ran against,
// and exits with the result.
func Main(m *testing.M) {
	ignore := goleak.IgnoreCurrent()
	code := m.Run()

	reg.mu.Lock()
	live := make([]*Server, 0, len(reg.live))
	for s := range reg.live {
		live = append(live, s)
	}
	sharedDir := reg.sharedDir
	reg.shared, reg.sharedDir, reg.live = nil, "", nil
	kinds := reg.kinds
	reg.mu.Unlock()
	for _, s := range live {
		s.Stop()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}

	// rueidis closes the connections a cluster client dropped after a
	// topology change 5 s later, in a goroutine that outlives Close.
	rueidisCloser := goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2")
	if err := goleak.Find(ignore, rueidisCloser); err != nil {
		fmt.Fprintf(os.Stderr, "redistest: goroutines leaked by the tests: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if len(kinds) > 0 {
		msg := "redistest: tests ran against " + strings.Join(kinds, " and ")
		for _, k := range kinds {
			if k == miniKind {
				msg += fmt.Sprintf(" -- no redis-server binary (%s) nor Docker daemon: tests that need one skipped; %s", where(), GetServer)
				break
			}
		}
		fmt.Fprintln(os.Stderr, msg)
		if path := os.Getenv(ReportEnv); path != "" {
			if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, msg)
				f.Close()
			}
		}
	}
	os.Exit(code)
}

// Addr returns the server's address, "127.0.0.1:port" for processes and the
// fallback.
func (s *Server) Addr() string { return s.addr }

// Port returns the server's TCP port.
func (s *Server) Port() int { return s.port }

// Kind describes the server, e.g. "redis-server 7.0.15 (/usr/bin/redis-server)"
// or "miniredis (in-process fallback, RESP2)".
func (s *Server) Kind() string { return s.kind }

// Real reports whether s is a real Redis (a process or a container), false for
// the miniredis fallback.
func (s *Server) Real() bool { return s.backend != backendMini }

// RESP2 reports whether clients must use RESP2, true for the fallback.
func (s *Server) RESP2() bool { return s.backend == backendMini }

// Dir returns the server's working directory (config, log, AOF files), or ""
// when it is not a local process.
func (s *Server) Dir() string { return s.dir }

// ClientOption returns rueidis options ready to connect to s. For the fallback
// it sets AlwaysRESP2, DisableCache and ForceSingleClient; for a cluster node
// it sets ForceSingleClient, so that the client talks to that node only.
func (s *Server) ClientOption() rueidis.ClientOption {
	opt := rueidis.ClientOption{InitAddress: []string{s.addr}}
	if s.backend == backendMini {
		opt.AlwaysRESP2 = true
		opt.DisableCache = true
		opt.ForceSingleClient = true
	}
	if s.cluster {
		opt.ForceSingleClient = true
	}
	return opt
}

// Client returns a raw rueidis client for s, closed at tb.Cleanup.
func (s *Server) Client(tb testing.TB) rueidis.Client {
	tb.Helper()
	return newClient(tb, s.ClientOption())
}

func newClient(tb testing.TB, opt rueidis.ClientOption) rueidis.Client {
	tb.Helper()
	c, err := rueidis.NewClient(opt)
	if err != nil {
		tb.Fatalf("redistest: client for %v: %v", opt.InitAddress, err)
	}
	tb.Cleanup(c.Close)
	return c
}

// GetServer says how to get a real server, for skip messages.
const GetServer = "scripts/test installs redis-server (apt-get or brew) and runs every module's tests"

// ErrorTables is RequireReal's reason for tests of errors raised in Lua
// (ErrWrongKind): the fallback reports them in its own words, a raised error
// table as "table: 0x…".
const ErrorTables = "the embedded server's Lua reports script errors in its own words (an error table as \"table: 0x…\")"

// RenewalsOnTime is RequireReal's reason for tests that hold a sub-second
// lease over several leases on the shared server: the fallback, loaded by
// the package's other tests, can answer a renewal later than the watchdog
// waits for it.
const RenewalsOnTime = "renewals of a sub-second lease must be answered within a third of it, later than the loaded embedded server may"

// RequireReal skips the test when s is the miniredis fallback, which can only
// happen when DISTSYNC_REQUIRE_REDIS is not set to 1. The skip message says
// why, if given, and how to get a real server.
func RequireReal(tb testing.TB, s *Server, why ...string) {
	tb.Helper()
	if !s.Real() {
		reason := ""
		if len(why) > 0 {
			reason = " (" + strings.Join(why, "; ") + ")"
		}
		tb.Skipf("redistest: needs a real Redis%s, have %s; %s", reason, s.Kind(), GetServer)
	}
}

// RequireProcess skips the test when s is not a local redis-server process
// (the fallback or a container): Kill, Pause, Resume and Restart need one.
func RequireProcess(tb testing.TB, s *Server) {
	tb.Helper()
	if s.backend != backendProcess {
		tb.Skipf("redistest: needs a local redis-server process (to stop, kill, pause or restart it), have %s; %s", s.Kind(), GetServer)
	}
}
