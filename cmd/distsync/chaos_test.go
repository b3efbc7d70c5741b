//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

func init() {
	binaryTests = append(binaryTests, struct {
		name string
		test func(e *binEnv, t *testing.T)
	}{"ChaosNeverOverlaps", (*binEnv).testChaos})
}

// testChaos runs "distsync run" in a loop from several workers on one lock
// while it kills distsync processes and commands with SIGKILL and crashes
// and restarts the server (AOF with appendfsync always, so an acknowledged
// grant survives). Each command writes "start ID", "tick ID"s and "end ID"
// from a child of its shell; no mark may come from a command other than the
// one that started last.
func (e *binEnv) testChaos(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, redistest.WithConfig("appendonly", "yes"), redistest.WithConfig("appendfsync", "always"))
	redistest.RequireProcess(t, s)
	name := dstest.Name(t)
	dir := t.TempDir()
	marks := filepath.Join(dir, "marks")
	// The marks come from a subshell: killing the shell (COMMAND) alone
	// leaves it writing unless run kills the group before releasing.
	script := `(echo "start $1" >> "$2"; for i in 1 2 3 4 5 6; do sleep 0.05; echo "tick $1" >> "$2"; done; echo "end $1" >> "$2") & echo $$ > "$3"; wait`

	const workers, length = 4, 8 * time.Second
	ctx, stop := context.WithTimeout(context.Background(), length)
	defer stop()
	type current struct {
		id      string
		ds      *os.Process
		pidfile string
	}
	var (
		mu      sync.Mutex
		running = map[int]current{} // worker -> its run in progress
		wg      sync.WaitGroup
		runs    = make(chan int, 1024) // exit codes
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				id := fmt.Sprintf("%d.%d", w, i)
				pidfile := filepath.Join(dir, id+".pid")
				cmd := e.commandOn(s, "run", "--lock", name, "-E", strconv.Itoa(exitTimedOut), "--lease", "1s", "--grace", "0.2", "--",
					"sh", "-c", script, "sh", id, marks, pidfile)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				running[w] = current{id, cmd.Process, pidfile}
				mu.Unlock()
				code := exitStatus(cmd.Wait())
				mu.Lock()
				delete(running, w)
				mu.Unlock()
				runs <- code
				if code == exitFailure {
					t.Logf("run %s: %s", id, strings.TrimSpace(stderr.String()))
				}
				if code == exitUnavailable || code == exitFailure {
					time.Sleep(20 * time.Millisecond) // the server is restarting: pace the retries
				}
			}
		}()
	}

	seed := uint64(time.Now().UnixNano())
	t.Logf("chaos seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 15))
	var killedRun, killedCmd, restarts int
	nextRestart := time.Now().Add(1500 * time.Millisecond)
	for ctx.Err() == nil {
		pause := time.NewTimer(time.Duration(150+rng.IntN(250)) * time.Millisecond) // the chaos's own pace
		select {
		case <-ctx.Done():
		case <-pause.C:
		}
		pause.Stop()
		if time.Now().After(nextRestart) && ctx.Err() == nil {
			s.Kill()
			s.Restart(t)
			restarts++
			nextRestart = time.Now().Add(2 * time.Second)
			continue
		}
		// Mostly the holder (its command wrote its pid), sometimes a waiter.
		mu.Lock()
		var victims, holders []current
		for w := range workers {
			if r, ok := running[w]; ok {
				victims = append(victims, r)
				if _, err := os.Stat(r.pidfile); err == nil {
					holders = append(holders, r)
				}
			}
		}
		mu.Unlock()
		if len(holders) > 0 && rng.IntN(4) > 0 {
			victims = holders
		}
		if len(victims) == 0 {
			continue
		}
		v := victims[rng.IntN(len(victims))]
		if rng.IntN(2) == 0 {
			if v.ds.Kill() == nil { // a pidfd: never another process
				killedRun++
			}
		} else if killCommand(v.pidfile, v.id) {
			killedCmd++
		}
	}
	wg.Wait()
	close(runs)
	codes := map[int]int{}
	for c := range runs {
		codes[c]++
	}
	t.Logf("runs by exit code %v; killed %d distsync, %d commands; %d server restarts", codes, killedRun, killedCmd, restarts)

	data, err := os.ReadFile(marks)
	require.NoError(t, err)
	holder, starts, ends := "", 0, 0
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		what, id, ok := strings.Cut(line, " ")
		require.True(t, ok, "line %d: %q", i+1, line)
		switch what {
		case "start":
			holder = id
			starts++
		case "end":
			ends++
			fallthrough
		default:
			require.Equal(t, holder, id, "line %d: a mark of %s while %s holds the lock:\n%s", i+1, id, holder, data)
		}
	}
	assert.Positive(t, ends, "no command ran to its end")
	assert.Zero(t, codes[exitTimedOut], "a run without --wait waits as long as it takes, server restarts included")
	assert.Positive(t, restarts, "the server was not restarted")
	assert.Positive(t, killedRun+killedCmd, "nothing was killed")
	t.Logf("%d commands started, %d ended", starts, ends)
}

// exitTimedOut is the conflict code (-E) the chaos runs ask for, so that
// a run that gave up waiting is told apart from one that failed (1).
const exitTimedOut = 75

// killCommand sends SIGKILL to the shell of run id, whose pid is in pidfile,
// if it still runs; it reports whether it did.
func killCommand(pidfile, id string) bool {
	data, err := os.ReadFile(pidfile)
	if err != nil || !bytes.HasSuffix(data, []byte("\n")) {
		return false
	}
	var pid int
	if _, err := fmt.Sscan(string(data), &pid); err != nil {
		return false
	}
	p, err := os.FindProcess(pid) // a pidfd on Linux: it names this process until released
	if err != nil {
		return false
	}
	defer p.Release()
	// The pid is still our shell's if its arguments name this run.
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte("\x00"+id+"\x00")) {
		return false
	}
	return p.Signal(syscall.SIGKILL) == nil
}
