package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binCandidates are the places looked at, after PATH, for redis-server.
var binCandidates = []string{"/usr/bin/redis-server", "/usr/local/bin/redis-server"}

var binOnce struct {
	sync.Once
	path, kind string
}

// redisBinary returns the absolute path of redis-server, or "". ServerEnv
// overrides the search: "none" finds none, any other value is the binary.
func redisBinary() string {
	binOnce.Do(func() {
		p, err := exec.LookPath("redis-server")
		switch v := os.Getenv(ServerEnv); v {
		case "":
		case "none":
			return
		default:
			p, err = v, nil
		}
		if err != nil {
			for _, c := range binCandidates {
				if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					p = c
					break
				}
			}
		}
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		binOnce.path = p
		ver := "(unknown version)"
		if out, err := exec.Command(p, "--version").Output(); err == nil {
			for _, f := range strings.Fields(string(out)) {
				if v, ok := strings.CutPrefix(f, "v="); ok {
					ver = v
				}
			}
		}
		binOnce.kind = fmt.Sprintf("redis-server %s (%s)", ver, p)
	})
	return binOnce.path
}

// where says where redisBinary looked.
func where() string {
	if os.Getenv(ServerEnv) == "none" {
		return ServerEnv + "=none"
	}
	return "looked on PATH, " + strings.Join(binCandidates, ", ")
}

// proc is one run of the server process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited and been reaped
}

var errPortInUse = errors.New("port in use")

// freePort asks the kernel for a free loopback port. Another process may take
// it before redis-server binds it; startProcess retries then.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startProcess starts bin with a config file in dir made of the base settings
// and cfg, on a free port, retrying a few times when the port race is lost.
// args go after the config file path (e.g. "--sentinel").
func startProcess(bin, dir string, cfg config, args []string) (*Server, error) {
	s := &Server{backend: backendProcess, kind: binOnce.kind, bin: bin, dir: dir, args: args}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.port = port
		s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s.cfgLines = []string{
			"port " + strconv.Itoa(port),
			"bind 127.0.0.1",
			"protected-mode no",
			`dir "` + dir + `"`,
		}
		if len(args) == 0 { // not a sentinel: sentinels reject these
			// No snapshots, and replicas sync at once instead of after the
			// default 5 s wait for more replicas.
			s.cfgLines = append(s.cfgLines, `save ""`, "appendonly no", "repl-diskless-sync-delay 0")
		}
		for _, kv := range cfg.extra {
			s.cfgLines = append(s.cfgLines, kv[0]+" "+kv[1])
		}
		if err := os.WriteFile(s.confPath(), []byte(strings.Join(s.cfgLines, "\n")+"\n"), 0o644); err != nil {
			return nil, err
		}
		s.mu.Lock()
		lastErr = s.launchLocked()
		s.mu.Unlock()
		if lastErr == nil {
			return s, nil
		}
		if !errors.Is(lastErr, errPortInUse) {
			return nil, lastErr
		}
	}
	return nil, lastErr
}

func (s *Server) confPath() string { return filepath.Join(s.dir, "redis.conf") }
func (s *Server) logPath() string  { return filepath.Join(s.dir, "redis.log") }

// launchLocked starts the process with the existing config file and waits
// until it answers PING. s.mu must be held and no process running.
func (s *Server) launchLocked() error {
	logf, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, append([]string{s.confPath()}, s.args...)...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	logf.Close() // the child has its own copy
	if err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if err := waitReady(s.addr, p); err != nil {
		p.signal(syscall.SIGKILL)
		<-p.done
		tail := s.logTail()
		if errors.Is(err, errPortInUse) || strings.Contains(tail, "Address already in use") {
			return fmt.Errorf("%s on %s: %w", s.kind, s.addr, errPortInUse)
		}
		return fmt.Errorf("%s on %s: %v; log %s ends with:\n%s", s.kind, s.addr, err, s.logPath(), tail)
	}
	s.proc = p
	return nil
}

// waitReady polls addr until it answers PING from p's process, for at most
// 10 s, backing off from 2 ms to 100 ms.
func waitReady(addr string, p *proc) error {
	deadline := time.Now().Add(10 * time.Second)
	delay := 2 * time.Millisecond
	var last error
	for {
		select {
		case <-p.done:
			return fmt.Errorf("exited during startup (%v)", p.cmd.ProcessState)
		default:
		}
		reply, err := rawDo(addr, "PING")
		if err == nil && reply == "PONG" {
			// Make sure it is our process that answered, not a server that
			// won the race for the port.
			info, err := rawDo(addr, "INFO", "server")
			if err == nil {
				if !strings.Contains(info, "process_id:"+strconv.Itoa(p.cmd.Process.Pid)+"\r\n") {
					return errPortInUse
				}
				return nil
			}
			last = err
		} else if err != nil {
			last = err
		} else {
			last = fmt.Errorf("PING answered %q", reply)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to PING within 10s: %v", last)
		}
		timer := time.NewTimer(delay)
		select {
		case <-p.done:
		case <-timer.C:
		}
		timer.Stop()
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// rawDo sends one command over a fresh connection and returns a simple,
// integer or bulk string reply. Error replies are returned as errors.
func rawDo(addr string, args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("bad bulk reply %q", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// logTail returns the last lines of the server's log.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

func (p *proc) signal(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig) // fails only if already reaped
}

// Pid returns the process id of the running redis-server, or 0 when it is
// stopped or s is not a local process.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Running reports whether s has been started and not stopped since, whatever
// its kind.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil || s.mini != nil || s.stopCtr != nil
}

// Stop shuts the server down (SIGTERM, then SIGKILL if it has not exited
// within 10 s) and waits for it to exit. It is idempotent; a stopped process
// can be started again with Restart.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.backend {
	case backendMini:
		s.stopMiniLocked()
	case backendContainer:
		s.stopContainerLocked()
	default:
		s.stopLocked(syscall.SIGTERM)
	}
}

// Kill sends SIGKILL and waits for the process to exit: data not yet on disk
// is lost. It panics if s is not a local process (see RequireProcess).
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustProcess("Kill")
	s.stopLocked(syscall.SIGKILL)
}

func (s *Server) stopLocked(sig syscall.Signal) {
	p := s.proc
	if p == nil {
		return
	}
	s.proc = nil
	p.signal(sig)
	p.signal(syscall.SIGCONT) // a paused process must run to handle SIGTERM
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.signal(syscall.SIGKILL)
		<-p.done
	}
}

// Pause stops the process with SIGSTOP: it keeps its connections but answers
// nothing until Resume. It panics if s is not a local process.
func (s *Server) Pause() { s.sendSignal("Pause", syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT. It panics if s is not a
// local process.
func (s *Server) Resume() { s.sendSignal("Resume", syscall.SIGCONT) }

func (s *Server) sendSignal(op string, sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustProcess(op)
	if s.proc != nil {
		s.proc.signal(sig)
	}
}

func (s *Server) mustProcess(op string) {
	if s.backend != backendProcess {
		panic(fmt.Sprintf("redistest: %s needs a local redis-server process, have %s (use RequireProcess)", op, s.kind))
	}
}

// Restart starts the server again on the same port with the same config and
// data directory (so appendonly files survive) and waits until it answers
// PING. A running server is stopped first with SIGTERM.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if s.backend != backendProcess {
		tb.Fatalf("redistest: Restart needs a local redis-server process, have %s (use RequireProcess)", s.kind)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(syscall.SIGTERM)
	if err := s.launchLocked(); err != nil {
		tb.Fatalf("redistest: restart: %v", err)
	}
}
