//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/dstest"
)

func init() {
	binaryTests = append(binaryTests, struct {
		name string
		test func(e *binEnv, t *testing.T)
	}{"CtrlZStopsCommand", (*binEnv).testCtrlZ})
}

// procState returns the state letter of process pid ("R", "S", "T", ...).
func procState(t *testing.T, pid int) string {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	return strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))[0]
}

// waitStopped waits until every pid is stopped (want) or not (!want).
func waitStopped(t *testing.T, want bool, pids ...int) {
	t.Helper()
	var states []string
	ok := assert.Eventually(t, func() bool {
		states = states[:0]
		all := true
		for _, pid := range pids {
			s := procState(t, pid)
			states = append(states, s)
			all = all && (s == "T") == want
		}
		return all
	}, 10*time.Second, time.Millisecond)
	require.True(t, ok, "processes %v stopped: want %v; their states: %v", pids, want, states)
}

func (e *binEnv) testCtrlZ(t *testing.T) {
	t.Parallel()
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost=%v", lost), func(t *testing.T) {
			t.Parallel()
			name := dstest.Name(t)
			dir := t.TempDir()
			pidfile, stop := filepath.Join(dir, "pid"), filepath.Join(dir, "stop")
			// A long lease: on a loaded machine a short one could end before
			// the stop, which is not what this test is about.
			lease := "30s"
			// COMMAND waits by opening a FIFO, not by polling with sleep: a
			// shell stopped while it starts sleep waits for its child in
			// state D, not T.
			require.NoError(t, syscall.Mkfifo(stop, 0o600))
			script := `echo $$ > "$1"; echo ready; read line < "$2"`
			cmd := e.command("run", "--lock", name, "--lease", lease, "--grace", "0.2", "--", "sh", "-c", script, "sh", pidfile, stop)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a job, as a shell starts it
			startReady(t, cmd)
			sh := readPid(t, pidfile)

			// Ctrl-Z: the terminal sends SIGTSTP to the job's group; distsync
			// stops COMMAND's group, then itself.
			require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGTSTP))
			waitStopped(t, true, cmd.Process.Pid, sh)
			if lost {
				// The stopped distsync renews nothing, so its lease can end
				// while it is stopped; end it now rather than wait for it.
				rc := e.s.Client(t)
				n, err := rc.Do(context.Background(), rc.B().Del().Key("distsync:{"+name+"}").Build()).AsInt64()
				require.NoError(t, err)
				require.Equal(t, int64(1), n, "the lock was not held")
			}
			// fg: the shell sends SIGCONT to the job.
			require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT))
			if lost {
				assert.Equal(t, exitLeaseLost, exitCodeOf(t, cmd.Wait()))
				requireGone(t, time.Now().Add(time.Second), "COMMAND after its hold was lost while stopped", sh)
				return
			}
			waitStopped(t, false, sh)
			require.NoError(t, os.WriteFile(stop, []byte("done\n"), 0o600)) // opens when COMMAND reads
			assert.Equal(t, 0, exitCodeOf(t, cmd.Wait()))
		})
	}
}
