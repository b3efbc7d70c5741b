//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// How run keeps COMMAND from running without the lock, on Unix.
//
// distsync does not start COMMAND itself. It starts a guard: itself again,
// as "distsync __guard", leading a new process group. The guard starts
// COMMAND in that group and waits for it; COMMAND's children stay in the
// group unless they leave it on purpose (setsid, setpgid), which puts them
// out of reach, as it would from a shell's job control. Then:
//
//   - distsync sends the signals it receives, the lost lease's SIGTERM and
//     the grace period's SIGKILL to the whole group (kill(-pgid)), so a
//     "sh -c" wrapper's children get them too. The guard ignores them.
//   - The guard holds the read end of a pipe, the lifeline, whose only write
//     end is distsync's. When distsync dies, even by SIGKILL, the kernel
//     closes it; the guard reads end-of-file and kills the group with
//     SIGKILL, itself included.
//   - On Linux COMMAND also has a parent-death signal (PR_SET_PDEATHSIG,
//     SIGKILL), so killing the guard alone kills COMMAND; distsync, seeing
//     its guard die, kills the rest of the group. The kernel sends that
//     signal when the thread that started COMMAND ends, not the process, so
//     the guard starts and waits for COMMAND on its main goroutine locked to
//     its thread, which lives as long as the guard.
//   - When COMMAND exits, distsync kills what it left running in the group
//     (SIGKILL) before releasing the lock.
//   - The terminal, as a shell's job control does it: when distsync's
//     standard input is its controlling terminal, distsync is in the
//     terminal's foreground process group and neither its standard output
//     nor its error is a pipe, distsync makes COMMAND's group the foreground
//     group (tcsetpgrp) before the guard starts COMMAND, and takes the
//     terminal back when COMMAND ends or is stopped. COMMAND then reads the
//     terminal, and the terminal's signals (Ctrl-C, Ctrl-\, Ctrl-Z, window
//     changes) go to COMMAND's group only: distsync does not see them, so
//     it passes nothing on a second time. The guard turns a Ctrl-Z
//     (SIGTSTP to the group) into a stop of distsync, which stops the group
//     and itself so that its shell sees the job stopped. distsync ignores
//     SIGTTOU from then on, to take the terminal back and to write to it
//     from the background. Otherwise (a pipeline: a pager after distsync
//     keeps the terminal; or distsync in the background) COMMAND is a
//     background job, and one that reads the terminal is stopped (SIGTTIN)
//     until a signal distsync passes on ends it: distsync continues the
//     group after passing on SIGINT, SIGTERM, SIGHUP or SIGQUIT.
//
// What remains: a COMMAND that leaves the group; the window between a
// SIGKILL of distsync and the guard's reaction (a pipe read, microseconds);
// and a SIGKILL of distsync and the guard at once (pkill -9 -f distsync):
// on Linux the kernel then kills COMMAND (its parent-death signal), and
// elsewhere COMMAND runs on; either way nothing is left to kill COMMAND's
// own children, which run on without the lock.

// guardCommand is the hidden subcommand that runs the guard:
// distsync __guard PATH ARGV0 [ARG...], with the lifeline as descriptor 3.
const guardCommand = "__guard"

// forwarded are the signals distsync passes on to COMMAND's group; the
// guard ignores them. SIGINT, SIGTERM, SIGHUP and SIGQUIT also end a wait
// for the lock.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// jobControl are the signals of a shell's job control that run handles
// while COMMAND runs: Ctrl-Z (SIGTSTP) and fg or bg (SIGCONT).
var jobControl = []os.Signal{syscall.SIGTSTP, syscall.SIGCONT}

func isSuspend(s os.Signal) bool  { return s == syscall.SIGTSTP }
func isContinue(s os.Signal) bool { return s == syscall.SIGCONT }

// stopping reports whether s ends a wait for the lock.
func stopping(s os.Signal) bool {
	switch s {
	case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT:
		return true
	}
	return false
}

// group is COMMAND running under its guard, in a process group of its own.
type group struct {
	guard    *exec.Cmd
	pgid     int
	lifeline *os.File // the write end; closing it kills the group
	done     chan struct{}
	waitErr  error // the guard's Wait result, set before done closes
	tty      int   // the controlling terminal COMMAND may have, or -1
	own      int   // distsync's process group
}

// startGroup starts COMMAND (path, with argv) under a guard in a new process
// group, with env added to distsync's environment. The group gets the
// terminal when distsync has it; see the comment at the top.
func startGroup(path string, argv, env []string, stdin io.Reader, stdout, stderr io.Writer) (*group, error) {
	self, err := selfPath()
	if err != nil {
		return nil, fmt.Errorf("cannot start the guard: %w", err)
	}
	r, w, err := os.Pipe() // both ends close on exec; ExtraFiles hands r to the guard only
	if err != nil {
		return nil, err
	}
	defer r.Close()
	g := &exec.Cmd{
		Path:        self,
		Args:        append([]string{"distsync", guardCommand, path}, argv...),
		Env:         append(os.Environ(), env...),
		Stdin:       stdin,
		Stdout:      stdout,
		Stderr:      stderr,
		ExtraFiles:  []*os.File{r},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	if err := g.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("cannot start the guard: %w", err)
	}
	p := &group{guard: g, pgid: g.Process.Pid, lifeline: w, done: make(chan struct{}),
		tty: terminalFor(stdin, stdout, stderr), own: syscall.Getpgrp()}
	go func() {
		p.waitErr = g.Wait()
		close(p.done)
	}()
	if p.tty >= 0 {
		// Only now: an ignored signal stays ignored across exec, and the
		// guard (so COMMAND) must start with SIGTTOU's default.
		signal.Ignore(syscall.SIGTTOU)
		p.foreground()
	}
	// The go-ahead: COMMAND starts once its group has the terminal, else
	// one that reads it at once would be stopped first. An error means the
	// guard is gone; Wait reports it.
	_, _ = w.Write([]byte{goAhead})
	return p, nil
}

// goAhead is the byte on the lifeline that tells the guard to start COMMAND.
const goAhead = 'g'

// terminalFor returns the descriptor of distsync's controlling terminal
// when COMMAND should be able to have it: stdin is that terminal, and
// neither stdout nor stderr is a pipe, whose other end may be a pager
// that needs the terminal (distsync run ... | less). Else -1.
func terminalFor(stdin io.Reader, stdout, stderr io.Writer) int {
	in, ok := stdin.(*os.File)
	if !ok {
		return -1
	}
	for _, w := range []io.Writer{stdout, stderr} {
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeNamedPipe != 0 {
				return -1
			}
		}
	}
	fd := -1
	if rc, err := in.SyscallConn(); err == nil {
		_ = rc.Control(func(d uintptr) { fd = int(d) })
	}
	if fd < 0 {
		return -1
	}
	// TIOCGPGRP fails (ENOTTY) unless fd is the controlling terminal.
	if _, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil {
		return -1
	}
	return fd
}

// foreground makes the group the terminal's foreground process group if
// distsync's group is it (not when distsync runs in the background, or was
// continued there by bg).
func (p *group) foreground() {
	if p.tty < 0 {
		return
	}
	if fg, err := unix.IoctlGetInt(p.tty, unix.TIOCGPGRP); err == nil && fg == p.own {
		_ = unix.IoctlSetPointerInt(p.tty, unix.TIOCSPGRP, p.pgid)
	}
}

// background gives the terminal back to distsync's group if the group has
// it (not when a shell took it meanwhile).
func (p *group) background() {
	if p.tty < 0 {
		return
	}
	if fg, err := unix.IoctlGetInt(p.tty, unix.TIOCGPGRP); err == nil && fg == p.pgid {
		_ = unix.IoctlSetPointerInt(p.tty, unix.TIOCSPGRP, p.own)
	}
}

// selfPath is the distsync binary: /proc/self/exe where there is one (it
// works even after the file was replaced), else os.Executable.
func selfPath() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// pid is the guard's process id, which is also the group's id.
func (p *group) pid() int { return p.pgid }

// signal sends s to every process of the group.
func (p *group) signal(s os.Signal) {
	if n, ok := s.(syscall.Signal); ok {
		_ = syscall.Kill(-p.pgid, n) // ESRCH: the group is gone
	}
}

// kill sends SIGKILL to every process of the group.
func (p *group) kill() { p.signal(syscall.SIGKILL) }

// suspend stops the group, gives the terminal back to distsync's group,
// then stops distsync itself, as Ctrl-Z stops a job; it returns when
// distsync is continued.
func (p *group) suspend() {
	p.signal(syscall.SIGSTOP)
	p.background()
	_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
}

// resume continues the group's stopped processes.
func (p *group) resume() { p.signal(syscall.SIGCONT) }

// resumeJob continues the group after distsync was continued: in the
// terminal's foreground if distsync is there (fg), else in the background
// (bg).
func (p *group) resumeJob() {
	p.foreground()
	p.resume()
}

// exited is closed when the guard has exited; status then says how.
func (p *group) exited() <-chan struct{} { return p.done }

// status is COMMAND's exit status as a shell reports it: the guard exits
// with it. A guard killed by signal N (with its command) is 128+N.
func (p *group) status() int { return exitStatus(p.waitErr) }

// close takes the terminal back, kills what is left of the group (what
// COMMAND left running, or everything if the guard has not exited) and cuts
// the lifeline.
func (p *group) close() {
	p.background()
	p.kill()
	p.lifeline.Close()
}

// guardMain is "distsync __guard PATH ARGV0 [ARG...]": it runs COMMAND in its
// own process group and returns its exit status; see the comment at the top.
func guardMain(args []string) int {
	var st syscall.Stat_t
	if len(args) < 2 || syscall.Fstat(3, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		fmt.Fprintln(os.Stderr, "distsync: "+guardCommand+" is internal to distsync run")
		return exitUsage
	}
	syscall.CloseOnExec(3) // COMMAND need not hold the lifeline
	lifeline := os.NewFile(3, "lifeline")

	// The signals distsync forwards to the group are COMMAND's. Caught (not
	// ignored), so COMMAND starts with their default dispositions.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	go func() {
		for range sigs {
		}
	}()

	// Ctrl-Z on the terminal, when the group has it, stops COMMAND and
	// would stop the guard unseen by distsync and its shell. Caught, it is
	// passed on to distsync, which stops the group and itself, as a job.
	stops := make(chan os.Signal, 1)
	signal.Notify(stops, syscall.SIGTSTP)
	parent := os.Getppid()
	go func() {
		for range stops {
			if os.Getppid() == parent { // not another process with its pid
				_ = syscall.Kill(parent, syscall.SIGTSTP)
			}
		}
	}()

	killGroup := func() {
		_ = syscall.Kill(0, syscall.SIGKILL)
		os.Exit(128 + int(syscall.SIGKILL)) // not reached
	}
	// COMMAND starts at distsync's go-ahead, once its group has the
	// terminal; end of file instead means distsync is gone.
	var b [1]byte
	if n, _ := lifeline.Read(b[:]); n != 1 || b[0] != goAhead {
		killGroup()
	}
	go func() {
		_, _ = io.Copy(io.Discard, lifeline) // returns when distsync is gone
		killGroup()
	}()

	runtime.LockOSThread() // COMMAND's parent-death signal is tied to this thread
	cmd := exec.Command(args[0], args[2:]...)
	cmd.Args[0] = args[1]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = commandAttr()
	if err := cmd.Start(); err != nil {
		// Not Go's "fork/exec PATH: ...": the name as given, as lookPath says it.
		fmt.Fprintf(os.Stderr, "distsync run: %s: cannot execute: %v\n", args[1], unwrapPathError(err))
		if errors.Is(err, os.ErrNotExist) {
			return exitNotFound
		}
		return exitCannotExec
	}
	return exitStatus(cmd.Wait())
}
