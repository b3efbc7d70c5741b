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
	require.Eventually(t, func() bool {
		for _, pid := range pids {
			if (procState(t, pid) == "T") != want {
				return false
			}
		}
		return true
	}, 10*time.Second, time.Millisecond, "processes %v stopped: want %v", pids, want)
}

func (e *binEnv) testCtrlZ(t *testing.T) {
	t.Parallel()
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost=%v", lost), func(t *testing.T) {
			t.Parallel()
			name := dstest.Name(t)
			dir := t.TempDir()
			pidfile, stop := filepath.Join(dir, "pid"), filepath.Join(dir, "stop")
			lease := "30s"
			if lost {
				lease = "600ms"
			}
			script := `echo $$ > "$1"; echo ready; while [ ! -e "$2" ]; do sleep 0.01; done`
			cmd := e.command("run", "--lock", name, "--lease", lease, "--grace", "0.2", "--", "sh", "-c", script, "sh", pidfile, stop)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a job, as a shell starts it
			startReady(t, cmd)
			sh := readPid(t, pidfile)

			// Ctrl-Z: the terminal sends SIGTSTP to the job's group; distsync
			// stops COMMAND's group, then itself.
			require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGTSTP))
			waitStopped(t, true, cmd.Process.Pid, sh)
			if lost {
				// The stopped distsync renews nothing: wait for its lease to end.
				rc := e.s.Client(t)
				require.Eventually(t, func() bool {
					n, err := rc.Do(context.Background(), rc.B().Exists().Key("distsync:{"+name+"}").Build()).AsInt64()
					return err == nil && n == 0
				}, 10*time.Second, 10*time.Millisecond, "the lease did not end")
			}
			// fg: the shell sends SIGCONT to the job.
			require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT))
			if lost {
				assert.Equal(t, exitLeaseLost, exitCodeOf(t, cmd.Wait()))
				requireGone(t, time.Now().Add(time.Second), "COMMAND after its hold was lost while stopped", sh)
				return
			}
			waitStopped(t, false, sh)
			require.NoError(t, os.WriteFile(stop, nil, 0o600))
			assert.Equal(t, 0, exitCodeOf(t, cmd.Wait()))
		})
	}
}
