package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// TestBinary builds the distsync binary once and runs it as a user would, as
// separate processes, against the shared test server.
func TestBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the tests use sh")
	}
	bin := filepath.Join(t.TempDir(), "distsync")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	s := redistest.Shared(t)
	e := &binEnv{bin: bin, s: s}
	command := e.command

	for _, bt := range binaryTests { // the process tests, in process_test.go
		t.Run(bt.name, func(t *testing.T) { bt.test(e, t) })
	}

	t.Run("RunNeverOverlaps", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		marks := filepath.Join(t.TempDir(), "marks")
		const procs, rounds = 3, 4
		// Each command appends "start ID" and "end ID" with a pause between,
		// so two holders at once would interleave their marks.
		script := `echo "start $1" >> "$2"; sleep 0.05; echo "end $1" >> "$2"`
		var wg sync.WaitGroup
		for p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					id := fmt.Sprintf("%d.%d", p, r)
					out, err := command("run", "--lock", name, "--", "sh", "-c", script, "sh", id, marks).CombinedOutput()
					assert.NoError(t, err, "%s", out)
				}
			}()
		}
		wg.Wait()
		data, err := os.ReadFile(marks)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.Len(t, lines, 2*procs*rounds)
		for i := 0; i < len(lines); i += 2 {
			id, ok := strings.CutPrefix(lines[i], "start ")
			require.True(t, ok, "line %d: %q, want a start", i, lines[i])
			require.Equal(t, "end "+id, lines[i+1], "line %d: marks interleave:\n%s", i+1, data)
		}
	})

	t.Run("ExitCodePassesThrough", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		for script, want := range map[string]int{"exit 0": 0, "exit 7": 7, "exit 200": 200, "kill -TERM $$": 128 + 15} {
			err := command("run", "--lock", name, "--", "sh", "-c", script).Run()
			assert.Equal(t, want, exitCodeOf(t, err), script)
		}
	})

	t.Run("FencingTokenInEnv", func(t *testing.T) {
		t.Parallel()
		out, err := command("run", "--lock", dstest.Name(t), "--", "sh", "-c", "echo $"+envFencingToken).Output()
		require.NoError(t, err)
		tok := strings.TrimSpace(string(out))
		assert.Regexp(t, `^[1-9][0-9]*$`, tok)
	})

	t.Run("WaitZeroOnTakenLock", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		lockIn(t, dstest.Client(t), name)
		ran := filepath.Join(t.TempDir(), "ran")
		cmd := command("run", "--lock", name, "--wait", "0", "--", "touch", ran)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		assert.Equal(t, exitNotAcquired, exitCodeOf(t, cmd.Run()))
		assert.Empty(t, stderr.String(), "silent, as flock")
		assert.NoFileExists(t, ran, "the command ran without the lock")

		// A wait that runs out is the same code.
		cmd = command("run", "--lock", name, "--wait", "100ms", "--", "touch", ran)
		assert.Equal(t, exitNotAcquired, exitCodeOf(t, cmd.Run()))
		assert.NoFileExists(t, ran)
	})

	t.Run("LostLeaseTerminatesCommand", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		// The command says when it runs, then waits; on SIGTERM it reports and exits.
		script := `trap 'echo terminated; exit 9' TERM; echo running; while :; do sleep 0.05; done`
		cmd := command("run", "--lock", name, "--lease", "600ms", "--grace", "20s", "--", "sh", "-c", script)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		lines := bufio.NewScanner(stdout)
		require.True(t, lines.Scan(), "no output")
		require.Equal(t, "running", lines.Text())

		rc := s.Client(t)
		n, err := rc.Do(context.Background(), rc.B().Del().Key("distsync:{"+name+"}").Build()).AsInt64()
		require.NoError(t, err)
		require.EqualValues(t, 1, n, "the lock was not held")

		require.True(t, lines.Scan(), "the command was not told")
		assert.Equal(t, "terminated", lines.Text())
		assert.Equal(t, exitLeaseLost, exitCodeOf(t, cmd.Wait()))
		assert.Contains(t, stderr.String(), "lease of lock")
	})

	t.Run("SignalPassesToCommand", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		script := `trap 'echo got TERM; exit 5' TERM; echo running; while :; do sleep 0.05; done`
		cmd := command("run", "--lock", name, "--", "sh", "-c", script)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		lines := bufio.NewScanner(stdout)
		require.True(t, lines.Scan(), "no output")
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		require.True(t, lines.Scan(), "the command was not told")
		assert.Equal(t, "got TERM", lines.Text())
		assert.Equal(t, 5, exitCodeOf(t, cmd.Wait()))
		m, err := dstest.Client(t).Mutex(name)
		require.NoError(t, err)
		locked, err := m.IsLocked(context.Background())
		require.NoError(t, err)
		assert.False(t, locked, "the lock was not released")
	})

	t.Run("InterruptedWhileWaiting", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		c := dstest.Client(t)
		lockIn(t, c, name)
		ran := filepath.Join(t.TempDir(), "ran")
		cmd := command("run", "--lock", name, "--", "touch", ran)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		dstest.WaitWaiters(t, c, "distsync:{"+name+"}:waiters", 1) // distsync run waits
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		assert.Equal(t, 128+int(syscall.SIGINT), exitCodeOf(t, cmd.Wait()))
		assert.NoFileExists(t, ran)
	})

	t.Run("InspectJSONReportsHolder", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		c := dstest.Client(t)
		_, tok := lockIn(t, c, name)
		out, err := command("inspect", "--json", name).Output()
		require.NoError(t, err)
		var r report
		require.NoError(t, json.Unmarshal(out, &r), "%s", out)
		assert.Equal(t, distsync.KindMutex, r.Kind)
		assert.True(t, r.Held)
		assert.Equal(t, tok, r.Token)
		require.Len(t, r.Owners, 1)
		assert.Equal(t, c.ID(), r.Owners[0].Client)
		assert.Equal(t, int64(1), r.Owners[0].Holds)
	})

	// unlock --force tells the running holder by push on its Client's
	// control channel: it stops before a second run could hold, not at its
	// next renewal, 20 s away with a 60 s lease.
	t.Run("UnlockForceStopsRun", func(t *testing.T) {
		t.Parallel()
		name := dstest.Name(t)
		cmd := command("run", "--lock", name, "--lease", "60s", "--grace", "0.3", "--", "sh", "-c", "echo ready; exec sleep 120")
		startReady(t, cmd)
		out, err := command("inspect", "--json", name).Output()
		require.NoError(t, err)
		var r report
		require.NoError(t, json.Unmarshal(out, &r), "%s", out)
		require.Len(t, r.Owners, 1)
		waitControl(t, s, r.Owners[0].Client)

		out, err = command("unlock", "--force", "--yes", name).CombinedOutput()
		require.NoError(t, err, "%s", out)
		stopped := make(chan error, 1)
		go func() { stopped <- cmd.Wait() }()
		select {
		case err := <-stopped:
			assert.Equal(t, exitLeaseLost, exitCodeOf(t, err))
		case <-time.After(10 * time.Second):
			t.Fatal("the first run goes on after unlock --force")
		}
		// Only now may a second run hold and run.
		out, err = command("run", "-n", "--lock", name, "--", "true").CombinedOutput()
		require.NoError(t, err, "%s", out)
	})

	t.Run("DemoOnEmbeddedServer", func(t *testing.T) {
		t.Parallel()
		if testing.Short() {
			t.Skip("-short: the tour takes seconds")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "demo")
		cmd.Env = append(os.Environ(), envRedis+"=127.0.0.1:1") // ignored by demo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		text := string(out)
		assert.Contains(t, text, "in-process Redis (miniredis")
		for i, s := range demoSteps {
			assert.Contains(t, text, fmt.Sprintf("\n%d. %s\n", i+1, s.title))
		}
		assert.Regexp(t, `woken [0-9.]+ms after A's release`, text)
		assert.Contains(t, text, "refused, stale token")
		assert.Contains(t, text, "Tour done")
	})
}

// binaryTests are more subtests of TestBinary, from files of their own.
var binaryTests []struct {
	name string
	test func(e *binEnv, t *testing.T)
}

// binEnv is the built binary and the server the binary tests use.
type binEnv struct {
	bin string
	s   *redistest.Server
}

// command returns an exec.Cmd running distsync sub against the shared
// server, then args.
func (e *binEnv) command(sub string, args ...string) *exec.Cmd {
	return e.commandOn(e.s, sub, args...)
}

// commandOn returns an exec.Cmd running distsync sub against s, then args.
func (e *binEnv) commandOn(s *redistest.Server, sub string, args ...string) *exec.Cmd {
	conn := []string{"--redis", s.Addr()}
	if s.RESP2() {
		conn = append(conn, "--resp2")
	}
	cmd := exec.Command(e.bin, append(append([]string{sub}, conn...), args...)...)
	cmd.Env = append(os.Environ(), envRedis+"=") // only the flags say where
	return cmd
}

// exitCodeOf returns the exit code of a finished process from its Run or
// Wait error.
// waitControl waits until the Client with id (another process's) listens
// to its control channel on s, with the default prefix.
func waitControl(t *testing.T, s *redistest.Server, id string) {
	t.Helper()
	rc := s.Client(t)
	ch := "distsync:ctl:" + id
	require.Eventually(t, func() bool {
		m, err := rc.Do(context.Background(), rc.B().PubsubNumsub().Channel(ch).Build()).AsIntMap()
		return err == nil && m[ch] > 0
	}, 20*time.Second, time.Millisecond, "%s has no subscriber", ch)
}

func exitCodeOf(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "not an exit: %v", err)
	return ee.ExitCode()
}
