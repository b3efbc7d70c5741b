//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/distsync/distsync/internal/dstest"
)

func init() {
	binaryTests = append(binaryTests, []struct {
		name string
		test func(e *binEnv, t *testing.T)
	}{
		{"TerminalCommandReadsIt", (*binEnv).testTerminalRead},
		{"TerminalCtrlCReachesCommandOnce", (*binEnv).testTerminalCtrlC},
		{"TerminalCtrlZStopsAndResumes", (*binEnv).testTerminalCtrlZ},
		{"TerminalPipelineCtrlCEndsStoppedReader", (*binEnv).testTerminalPipeline},
	}...)
}

// terminal is a pseudo-terminal; the test is the user typing on it.
type terminal struct {
	t      *testing.T
	master *os.File
	slave  *os.File // closed once the process under test has it
	out    []byte   // all read from the master so far
	pos    int      // where the next expect looks from
}

// newTerminal opens a pseudo-terminal (/dev/ptmx), closed at the end of the
// test.
func newTerminal(t *testing.T) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { master.Close() })
	var n uint32
	require.NoError(t, control(master, func(fd int) error {
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil { // unlockpt
			return err
		}
		n, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN) // ptsname
		return err
	}))
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { slave.Close() })
	return &terminal{t: t, master: master, slave: slave}
}

// control runs f on f's descriptor without making it blocking.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// start starts cmd as a login shell starts a session: in a session of its
// own with the terminal as its controlling terminal, so in the terminal's
// foreground process group. Its standard files not set are the terminal.
func (tm *terminal) start(cmd *exec.Cmd) {
	tm.t.Helper()
	if cmd.Stdin == nil {
		cmd.Stdin = tm.slave
	}
	if cmd.Stdout == nil {
		cmd.Stdout = tm.slave
	}
	if cmd.Stderr == nil {
		cmd.Stderr = tm.slave
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.Same(tm.t, tm.slave, cmd.Stdin, "the controlling terminal is descriptor 0")
	require.NoError(tm.t, cmd.Start())
	tm.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait() // if the test did not
	})
	require.NoError(tm.t, tm.slave.Close()) // the master reads EOF when the session is gone
}

// typeIn writes s on the terminal as if typed.
func (tm *terminal) typeIn(s string) {
	tm.t.Helper()
	_, err := tm.master.WriteString(s)
	require.NoError(tm.t, err)
}

// expect reads the terminal until it shows want after the previous match.
func (tm *terminal) expect(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 4096)
	for !bytes.Contains(tm.out[tm.pos:], []byte(want)) {
		require.NoError(tm.t, tm.master.SetReadDeadline(deadline))
		n, err := tm.master.Read(buf)
		tm.out = append(tm.out, buf[:n]...)
		if err != nil {
			tm.t.Fatalf("the terminal did not show %q (%v); it shows:\n%s", want, err, tm.out)
		}
	}
	tm.pos += bytes.Index(tm.out[tm.pos:], []byte(want)) + len(want)
}

// foreground returns the terminal's foreground process group.
func (tm *terminal) foreground() int {
	tm.t.Helper()
	var pgrp int
	require.NoError(tm.t, control(tm.master, func(fd int) (err error) {
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	}))
	return pgrp
}

// testTerminalRead: COMMAND reads a line typed on the terminal, and the
// terminal is its shell's again once it ends. distsync runs as a command of
// a script, in the script shell's process group: without job control, that
// shell's read after distsync would be stopped if distsync had not given
// the terminal back.
func (e *binEnv) testTerminalRead(t *testing.T) {
	t.Parallel()
	tm := newTerminal(t)
	ds := e.command("run", "--lock", dstest.Name(t), "--", "sh", "-c", `echo ready; read l; echo "got <$l>"`)
	script := `"$@"; echo "rc=$?"; read m; echo "after <$m>"`
	cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, ds.Args...)...)
	cmd.Env = ds.Env
	tm.start(cmd)
	tm.expect("ready")
	tm.typeIn("hello\n")
	tm.expect("got <hello>")
	tm.expect("rc=0")
	tm.typeIn("world\n")
	tm.expect("after <world>")
	assert.Equal(t, 0, waitExit(t, cmd))
}

// testTerminalCtrlC: COMMAND is the terminal's foreground job, so a Ctrl-C
// typed on it reaches COMMAND, once.
func (e *binEnv) testTerminalCtrlC(t *testing.T) {
	t.Parallel()
	tm := newTerminal(t)
	dir := t.TempDir()
	pidfile, got, stop := filepath.Join(dir, "pid"), filepath.Join(dir, "got"), filepath.Join(dir, "stop")
	script := `trap 'echo INT >> "$2"' INT; trap 'echo USR1 >> "$2"' USR1; echo $$ > "$1"; echo ready; while [ ! -e "$3" ]; do :; done`
	cmd := e.command("run", "--lock", dstest.Name(t), "--", "sh", "-c", script, "sh", pidfile, got, stop)
	tm.start(cmd)
	tm.expect("ready")
	pgid, err := syscall.Getpgid(readPid(t, pidfile))
	require.NoError(t, err)
	require.NotEqual(t, cmd.Process.Pid, pgid, "COMMAND is in distsync's process group")
	require.Equal(t, pgid, tm.foreground(), "COMMAND's group is not the terminal's foreground")

	tm.typeIn("\x03") // Ctrl-C
	waitLines(t, got, "INT")
	// A signal to distsync, which it passes on, marks the end of what it
	// passes on: in order, and a pending SIGINT is delivered first.
	require.NoError(t, cmd.Process.Signal(syscall.SIGUSR1))
	waitLines(t, got, "INT", "USR1")
	require.NoError(t, os.WriteFile(stop, nil, 0o600))
	assert.Equal(t, 0, waitExit(t, cmd))
	data, err := os.ReadFile(got)
	require.NoError(t, err)
	assert.Equal(t, "INT\nUSR1\n", string(data), "COMMAND's SIGINTs")
}

// testTerminalCtrlZ: a Ctrl-Z typed on the terminal stops COMMAND and
// distsync, and gives the terminal back to distsync's group; continued (as
// fg does), COMMAND has the terminal again and reads it.
func (e *binEnv) testTerminalCtrlZ(t *testing.T) {
	t.Parallel()
	tm := newTerminal(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	script := `echo $$ > "$1"; echo ready; read l; echo "got <$l>"`
	cmd := e.command("run", "--lock", dstest.Name(t), "--lease", "30s", "--", "sh", "-c", script, "sh", pidfile)
	tm.start(cmd)
	tm.expect("ready")
	sh := readPid(t, pidfile)
	pgid, err := syscall.Getpgid(sh)
	require.NoError(t, err)
	require.Equal(t, pgid, tm.foreground())

	tm.typeIn("\x1a") // Ctrl-Z
	waitStopped(t, true, cmd.Process.Pid, sh)
	assert.Equal(t, cmd.Process.Pid, tm.foreground(), "the stopped job kept the terminal")
	require.NoError(t, cmd.Process.Signal(syscall.SIGCONT)) // fg
	waitStopped(t, false, sh)
	assert.Equal(t, pgid, tm.foreground(), "COMMAND's group did not get the terminal back")
	tm.typeIn("hello\n")
	tm.expect("got <hello>")
	assert.Equal(t, 0, waitExit(t, cmd))
}

// testTerminalPipeline: with its output in a pipe (distsync run ... | less),
// COMMAND does not take the terminal from the pipeline; one that reads it
// is stopped, as a background job, and a Ctrl-C, passed on by distsync,
// still ends it.
func (e *binEnv) testTerminalPipeline(t *testing.T) {
	t.Parallel()
	tm := newTerminal(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := e.command("run", "--lock", dstest.Name(t), "--", "sh", "-c", `echo $$ > "$1"; read l`, "sh", pidfile)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd.Stdout = w
	tm.start(cmd)
	require.NoError(t, w.Close())
	sh := readPid(t, pidfile)
	waitStopped(t, true, sh) // SIGTTIN
	assert.Equal(t, cmd.Process.Pid, tm.foreground(), "the pipeline lost the terminal")

	tm.typeIn("\x03") // Ctrl-C, to distsync's group
	assert.Equal(t, 128+int(syscall.SIGINT), waitExit(t, cmd))
	requireGone(t, time.Now().Add(time.Second), "COMMAND after a Ctrl-C", sh)
}
