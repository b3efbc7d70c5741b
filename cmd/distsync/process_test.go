//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

func init() {
	binaryTests = append(binaryTests, []struct {
		name string
		test func(e *binEnv, t *testing.T)
	}{
		{"KillNineKillsCommandAndChildren", func(e *binEnv, t *testing.T) { e.testKillNine(t, false) }},
		{"KillNineOfGuardKillsCommandAndChildren", func(e *binEnv, t *testing.T) { e.testKillNine(t, true) }},
		{"GroupSIGINTReachesCommandOnce", (*binEnv).testGroupSIGINT},
		{"LostLeaseKillsTheGroup", (*binEnv).testLostLeaseKillsGroup},
		{"LeftoversKilledBeforeRelease", (*binEnv).testLeftovers},
		{"VerboseReportsWait", (*binEnv).testVerboseWait},
		{"InterruptedBenchKeepsResults", (*binEnv).testBenchInterrupted},
		{"InterruptedDemoExits130", (*binEnv).testDemoInterrupted},
		{"InterruptedBenchWhileServerDown", (*binEnv).testBenchInterruptedServerDown},
	}...)
}

// guardModes are the holds run can take; the process guarantees hold for
// each.
var guardModes = []struct {
	name string
	args func(name string) []string
}{
	{"lock", func(n string) []string { return []string{"--lock", n} }},
	{"semaphore", func(n string) []string { return []string{"--semaphore", n, "--permits", "2"} }},
	{"shared", func(n string) []string { return []string{"--rwlock", n, "-s"} }},
}

// startReady starts cmd and returns once its first line of output is
// "ready"; the rest of its output is drained in the background. The process
// is killed at the end of the test.
func startReady(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait() // if the test did not
	})
	lines := bufio.NewReader(stdout)
	line, err := lines.ReadString('\n')
	require.NoError(t, err, "no output")
	require.Equal(t, "ready\n", line)
	go io.Copy(io.Discard, lines) //nolint:errcheck // ends when the pipe closes at Wait
}

// readPid returns the process id the file at path holds once it is written.
func readPid(t *testing.T, path string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(data, []byte("\n")) {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
		return err == nil
	}, 10*time.Second, time.Millisecond, "no pid in %s", path)
	return pid
}

// gone reports whether the process pid has ended: it does not exist, or is
// a zombie nobody reaped yet (an orphan whose new parent does not reap).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	state := strings.Fields(string(rest))[0]
	return state == "Z" || state == "X"
}

// requireGone fails unless every pid has ended by deadline.
func requireGone(t *testing.T, deadline time.Time, what string, pids ...int) {
	t.Helper()
	for {
		var alive []int
		for _, pid := range pids {
			if !gone(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: processes %v still run", what, alive)
		}
		time.Sleep(2 * time.Millisecond) // polling the kernel: there is no event to wait on
	}
}

// testKillNine kills distsync, or its guard, with SIGKILL while COMMAND
// runs: COMMAND and its child go at once.
func (e *binEnv) testKillNine(t *testing.T, guard bool) {
	t.Parallel()
	for _, m := range guardModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			child, grandchild := filepath.Join(dir, "child"), filepath.Join(dir, "grandchild")
			// COMMAND is a shell with a child of its own.
			script := `sleep 300 & echo $! > "$1"; echo $$ > "$2"; echo ready; wait`
			args := append(m.args(dstest.Name(t)), "--lease", "2s", "--", "sh", "-c", script, "sh", grandchild, child)
			cmd := e.command("run", args...)
			startReady(t, cmd)
			pids := []int{readPid(t, child), readPid(t, grandchild)}
			pgid, err := syscall.Getpgid(pids[0])
			require.NoError(t, err)
			assert.NotEqual(t, syscall.Getpgrp(), pgid, "COMMAND is not in a process group of its own")
			pids = append(pids, pgid) // the guard leads the group

			killed := time.Now()
			if guard {
				require.NoError(t, syscall.Kill(pgid, syscall.SIGKILL))
				// distsync reports the guard's end as COMMAND's.
				assert.Equal(t, 128+int(syscall.SIGKILL), exitCodeOf(t, cmd.Wait()))
				requireGone(t, killed.Add(time.Second), "after kill -9 of the guard", pids...)
				return
			}
			require.NoError(t, cmd.Process.Kill())
			assert.ErrorContains(t, cmd.Wait(), "signal: killed")
			requireGone(t, killed.Add(time.Second), "after kill -9 of distsync", pids...)
		})
	}
}

func (e *binEnv) testGroupSIGINT(t *testing.T) {
	t.Parallel()
	for _, m := range guardModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			got, stop := filepath.Join(dir, "got"), filepath.Join(dir, "stop")
			// COMMAND writes a line per signal it is given, handling each at
			// once, until told to stop.
			script := `trap 'echo INT >> "$1"' INT; trap 'echo USR1 >> "$1"' USR1; echo ready; while [ ! -e "$2" ]; do :; done`
			cmd := e.command("run", append(m.args(dstest.Name(t)), "--", "sh", "-c", script, "sh", got, stop)...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a job, as a shell starts it
			startReady(t, cmd)

			// Ctrl-C: the terminal signals the foreground job's process group.
			require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT))
			waitLines(t, got, "INT")
			// A second signal, to distsync alone, marks the end of what it
			// forwards: it passes signals on in order, and a pending SIGINT
			// is delivered before a SIGUSR1.
			require.NoError(t, cmd.Process.Signal(syscall.SIGUSR1))
			waitLines(t, got, "INT", "USR1")
			require.NoError(t, os.WriteFile(stop, nil, 0o600))
			assert.Equal(t, 0, exitCodeOf(t, cmd.Wait()), "COMMAND (or its guard) did not survive the signals")
			data, err := os.ReadFile(got)
			require.NoError(t, err)
			assert.Equal(t, "INT\nUSR1\n", string(data), "COMMAND's SIGINTs")
		})
	}
}

// waitLines waits until the file at path holds at least len(want) lines and
// checks that they begin with want.
func waitLines(t *testing.T, path string, want ...string) {
	t.Helper()
	var lines []string
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(path)
		lines = strings.Fields(string(data))
		return len(lines) >= len(want)
	}, 10*time.Second, time.Millisecond, "%s: want %q", path, want)
	assert.Equal(t, want, lines[:len(want)])
}

// testLostLeaseKillsGroup: after a lost lease and --grace, SIGKILL reaches
// COMMAND and its child, which both ignore SIGTERM, for every kind of hold.
// The hold is lost to the operator's command that deletes it.
func (e *binEnv) testLostLeaseKillsGroup(t *testing.T) {
	t.Parallel()
	deleteHold := map[string][]string{ // by guard mode
		"lock":      {"unlock", "--force", "--yes"},
		"semaphore": {"delete", "--yes"},
		"shared":    {"unlock", "--force", "--yes"},
	}
	held := map[string]string{ // how run names the hold, by guard mode
		"lock": `lock "%s"`, "semaphore": `a permit of semaphore "%s"`, "shared": `read lock "%s"`,
	}
	for _, m := range guardModes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			name := dstest.Name(t)
			dir := t.TempDir()
			child, grandchild := filepath.Join(dir, "child"), filepath.Join(dir, "grandchild")
			// Both ignore SIGTERM, so only the grace period's SIGKILL stops them.
			script := `trap '' TERM; sh -c 'echo $$ > "$1"; while :; do sleep 0.05; done' sh "$1" & echo $$ > "$2"; echo ready; wait`
			args := append(m.args(name), "--lease", "600ms", "--grace", "0.3", "--", "sh", "-c", script, "sh", grandchild, child)
			cmd := e.command("run", args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			startReady(t, cmd)
			pids := []int{readPid(t, child), readPid(t, grandchild)}

			del := deleteHold[m.name]
			out, err := e.command(del[0], append(del[1:], name)...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Contains(t, string(out), "deleted", "the hold was not there")
			assert.Equal(t, exitLeaseLost, exitCodeOf(t, cmd.Wait()))
			what := regexp.QuoteMeta(fmt.Sprintf(held[m.name], name))
			assert.Regexp(t, `^distsync run: lease of `+what+` lost \(.+\); stopping sh \(process group [0-9]+\)\n$`, stderr.String())
			assert.NotContains(t, stderr.String(), "distsync: ")
			// distsync exits after the SIGKILL of the group: they are gone or going.
			requireGone(t, time.Now().Add(time.Second), "after the grace period", pids...)
		})
	}
}

func (e *binEnv) testLeftovers(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	left := filepath.Join(t.TempDir(), "left")
	// COMMAND exits at once, leaving a child that would run for minutes.
	cmd := e.command("run", "--lock", name, "--", "sh", "-c", `sleep 300 & echo $! > "$1"`, "sh", left)
	require.NoError(t, cmd.Run())
	requireGone(t, time.Now().Add(time.Second), "COMMAND's leftover", readPid(t, left))
	m, err := dstest.Client(t).Mutex(name)
	require.NoError(t, err)
	locked, err := m.IsLocked(context.Background())
	require.NoError(t, err)
	assert.False(t, locked, "the lock was not released")
}

func (e *binEnv) testVerboseWait(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	c := dstest.Client(t)
	m, err := c.Mutex(name)
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	cmd := e.command("run", "-v", "--lock", name, "--", "true")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	var report string
	for report == "" && lines.Scan() {
		if strings.HasPrefix(lines.Text(), "distsync run: waiting for") {
			report = lines.Text()
		}
	}
	require.NotEmpty(t, report, "no progress report")
	assert.Contains(t, report, `waiting for lock "`+name+`" for 1s; held by `+c.ID()+":")
	assert.Contains(t, report, "lease ends in")
	require.NoError(t, m.Unlock(held))
	for lines.Scan() { // the rest: the hold, then nothing
	}
	assert.Equal(t, 0, exitCodeOf(t, cmd.Wait()))
}

// startBench starts the bench cmd and returns once it reports that the
// scenario has begun, with what it writes on stdout; the rest of its stderr
// is drained in the background.
func startBench(t *testing.T, cmd *exec.Cmd, scenario string) *bytes.Buffer {
	t.Helper()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "bench: "+scenario+" for") {
	}
	go io.Copy(io.Discard, stderr) //nolint:errcheck // ends when the pipe closes at Wait
	return &stdout
}

func (e *binEnv) testBenchInterrupted(t *testing.T) {
	t.Parallel()
	cmd := e.command("bench", "--duration", "1500ms", "--workers", "2")
	stdout := startBench(t, cmd, "contended")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, waitExit(t, cmd))
	out := stdout.String()
	assert.Regexp(t, `\nuncontended +1 +[1-9][0-9]* `, out, "the finished scenario's row")
	assert.Regexp(t, `\n(contended|handoff)\* +2 +[0-9]+ `, out, "the interrupted scenario's partial row")
	assert.Contains(t, out, "* interrupted after")
}

// testBenchInterruptedServerDown: a Ctrl-C ends bench while its server does
// not answer (its calls wait for it), with the partial row.
func (e *binEnv) testBenchInterruptedServerDown(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireProcess(t, s)
	cmd := e.commandOn(s, "bench", "--duration", "60", "--scenarios", "uncontended")
	stdout := startBench(t, cmd, "uncontended")
	s.Kill() // bench's next call waits for a server that is gone
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, 130, waitExit(t, cmd))
	assert.Regexp(t, `\nuncontended\* +1 +[0-9]+ `, stdout.String(), "the partial row")
	assert.Contains(t, stdout.String(), "* interrupted after")
}

// waitExit waits for cmd's exit and returns its code; after 10s it fails.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	select {
	case err := <-done:
		return exitCodeOf(t, err)
	case <-timeout.C:
		cmd.Process.Kill()
		t.Fatalf("%s did not exit", cmd.Args[0])
		return -1
	}
}

func (e *binEnv) testDemoInterrupted(t *testing.T) {
	t.Parallel()
	cmd := e.command("demo")
	cmd.Args = cmd.Args[:2] // the in-process server
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "1. ") {
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	for lines.Scan() {
	}
	assert.Equal(t, 130, exitCodeOf(t, cmd.Wait()))
}
