package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/rueidis"
)

// server is the redis-server child process the benchmark runs against.
type server struct {
	addr    string
	version string
	cmd     *exec.Cmd
	dir     string
}

// startServer starts redis-server from PATH on a free loopback port, without
// persistence, and waits until it answers PING.
func startServer() (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("no redis-server on PATH: install one (Debian: apt-get install redis-server) or pass -redis host:port")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "distsync-bench-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log"),
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s := &server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, dir: dir}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.addr}, DisableCache: true, ForceSingleClient: true})
		if err == nil {
			s.version, err = serverVersion(c)
			c.Close()
			if err == nil {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.stop()
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			return nil, fmt.Errorf("redis-server on %s did not answer: %v\n%s", s.addr, err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop terminates the server (by its pid) and removes its directory.
func (s *server) stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
	}
	os.RemoveAll(s.dir)
}

// serverVersion returns redis_version from INFO server.
func serverVersion(c rueidis.Client) (string, error) {
	info, err := c.Do(context.Background(), c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v, nil
		}
	}
	return "?", nil
}

// cmdStats returns the server's per-command call counts and, under
// "usec:"+name, microseconds (INFO commandstats).
func cmdStats(c rueidis.Client) map[string]int64 {
	m := map[string]int64{}
	info, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		return m
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				m[name] = n
			case "usec":
				m["usec:"+name] = n
			}
		}
	}
	return m
}

// scriptCmds are the commands that run scripts: their time covers the
// commands the scripts call, which commandstats lists again under their
// own names.
var scriptCmds = []string{"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}

// cmdTime is the server's command time between two snapshots for a client
// that sends scripts and the direct commands: what INFO commandstats
// counts, each command once (a call inside a script is in its script's).
func cmdTime(before, after map[string]int64, direct []string) time.Duration {
	var us int64
	for _, k := range append(slices.Clone(scriptCmds), direct...) {
		us += after["usec:"+k] - before["usec:"+k]
	}
	return time.Duration(us) * time.Microsecond
}

// cmdDelta sums calls between two snapshots (excluding INFO itself) and
// returns the total and the PUBLISH/SPUBLISH calls.
func cmdDelta(before, after map[string]int64) (total, publish int64) {
	for k, v := range after {
		if k == "info" || strings.HasPrefix(k, "usec:") {
			continue
		}
		d := v - before[k]
		total += d
		if k == "publish" || k == "spublish" {
			publish += d
		}
	}
	return total, publish
}

// serverCPU returns the CPU time the server process has used (0 when pid is
// 0, a server we did not start, or not on Linux).
func serverCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	ns, _ := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns)
}
