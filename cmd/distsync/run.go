package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/semaphore"
)

const runUsage = `Usage: distsync run [flags] NAME [--] COMMAND [ARG...]
       distsync run --lock NAME [flags] [--] COMMAND [ARG...]
       distsync run --rwlock NAME [-s|-x] [flags] [--] COMMAND [ARG...]
       distsync run --semaphore NAME --permits N [flags] [--] COMMAND [ARG...]
       distsync run ... -c 'COMMAND STRING'

A distributed flock(1): runs COMMAND while holding the mutex NAME (given
alone, as flock's file, or with --lock), a side of the read-write lock NAME
(the write side, -x; the read side, shared with other readers, with -s), or
one permit of the semaphore NAME (whose size is set to N unless it already
has one; one of another size is refused, exit 65), and releases it when
COMMAND exits. The hold
has the watchdog lease (--lease), renewed while COMMAND runs, so a crashed
distsync frees it within one lease. COMMAND gets the hold's fencing token in
$DISTSYNC_FENCING_TOKEN, or the permit's id in $DISTSYNC_PERMIT_ID. With -c,
COMMAND STRING runs with sh -c.

COMMAND never runs without the hold. It runs under a guard process
(distsync __guard) in a process group of its own, with its children. Signals
distsync receives (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
SIGWINCH) go to the whole group, once; a stopped group is then continued for
SIGINT, SIGTERM, SIGHUP and SIGQUIT. If the lease is lost (the key was
deleted, the server lost it, renewals failed for a whole lease), the group
is sent SIGTERM, then SIGKILL after --grace, and distsync exits 70. If
distsync dies, even by SIGKILL, the guard kills the group at once; if the
guard dies, distsync kills the group. When COMMAND exits, what it left
running in its group is killed before the hold is released. Limits: a
process that leaves the group (setsid) is out of reach; if distsync and its
guard are killed by SIGKILL together (pkill -9 -f distsync), COMMAND's
children run on without the hold (on Linux the kernel kills COMMAND itself;
elsewhere COMMAND runs on too); outside Unix there is no guard: signals and
a lost lease's stop reach COMMAND only, and COMMAND outlives a killed
distsync.

The terminal: when distsync's standard input is its terminal, distsync is in
the foreground and its output is not a pipe, COMMAND's group becomes the
terminal's foreground job, as a shell makes it: COMMAND reads the terminal,
and Ctrl-C, Ctrl-\ and window changes reach it from the terminal, once.
Ctrl-Z stops COMMAND's group and distsync and gives the terminal back;
continued (fg), distsync first checks that it still has the hold (a stopped
distsync renews nothing), else stops COMMAND as for a lost lease. Otherwise
(distsync in the background, or its output into a pipe, whose reader may
want the terminal: run ... | less) COMMAND is a background job: one that
reads the terminal is stopped until a signal ends it. To give a pipeline the
terminal, make it COMMAND: -c 'make | less'.

--wait (--timeout), --lease and --grace take seconds (5, 0.5) or durations
(1m30s). With -v (--verbose), distsync reports every second of its wait who
holds NAME. One-letter flags bundle as getopt takes them: -xn, -w5, -nE 3.
flock's -o (--close) is accepted: COMMAND never gets a descriptor of the
lock. flock's -u (unlock a descriptor) has no meaning here: the hold ends
when COMMAND exits; distsync unlock --force NAME deletes a lock whoever
holds it. flock's -F (--no-fork) is refused: distsync stays to renew the
lease and to release the hold.

Exit: COMMAND's exit code (128+N if signal N ended it); 1 (or -E's code)
when not acquired within --wait (at once, with -n or --wait 0, if taken),
silently as flock (-v says so); 70 lease lost; 64 usage; 65 NAME holds
another kind, or a semaphore of another size; 69 cannot connect; 126
COMMAND cannot run; 127 COMMAND not found; 128+N when signal N ended the
wait.
`

// guard is what run holds while the command runs: a lock or a permit.
// Each kind lives in run_<primitive>.go.
type guard interface {
	// acquire takes the guard within wait (< 0: until ctx is done). held is
	// cancelled when the hold is lost; env is what the command learns of the
	// hold ("NAME=value"). Not acquiring within wait is an error wrapping
	// distsync.ErrNotAcquired.
	acquire(ctx context.Context, wait time.Duration) (held context.Context, env []string, err error)
	// release gives the hold back; distsync.ErrNotHeld when it was lost.
	release(held context.Context) error
	// holds asks the server whether the hold is still there (one round
	// trip), also after held was cancelled.
	holds(held context.Context) (bool, error)
	// kind is the kind of primitive the guard uses (distsync.Info.Kind).
	kind() distsync.Kind
	// name is the primitive's name.
	name() string
	// String names it in messages, e.g. `lock "deploy"`.
	String() string
}

// Environment variables run gives the command.
const (
	envFencingToken = "DISTSYNC_FENCING_TOKEN" // --lock, --rwlock: the hold's fencing token
	envPermitID     = "DISTSYNC_PERMIT_ID"     // --semaphore: the permit's id
)

// minRunLease is the shortest --lease: renewed every third of it, a lease
// much shorter is lost at the first late renewal, even on a local server.
const minRunLease = 100 * time.Millisecond

// runFlags are run's own flags.
type runFlags struct {
	lock, rwlock, sem string
	shared, exclusive bool
	unlock, noFork    bool
	close             bool // flock's -o: what run does anyway
	permits           int64
	wait              *durationFlag
	nonblock          bool
	conflict          int
	command           string
	lease, grace      *durationFlag
}

func (c *cli) runCmd(args []string) error {
	f := newFlags("run", runUsage)
	var cf connFlags
	var rf runFlags
	f.StringVar(&rf.lock, "lock", "", "hold the mutex `NAME`")
	f.StringVar(&rf.rwlock, "rwlock", "", "hold the write side of the read-write lock `NAME` (the read side with -s)")
	f.BoolVar(&rf.shared, "shared", false, "with --rwlock: hold the read side, shared with other readers (flock -s)")
	f.alias("s", "shared")
	f.BoolVar(&rf.exclusive, "exclusive", false, "hold the lock exclusively: the default; with --rwlock, the write side (flock -x)")
	f.alias("x", "exclusive")
	f.alias("e", "exclusive")
	f.StringVar(&rf.sem, "semaphore", "", "hold one permit of the semaphore `NAME`")
	f.Int64Var(&rf.permits, "permits", 0, "the semaphore's size `N`, set if it has none (with --semaphore)")
	rf.wait = f.durationVar("wait", 0, "the `time` to wait for the hold, e.g. 5 or 1m; 0 fails at once when taken (default forever)")
	f.alias("w", "wait")
	f.alias("timeout", "wait")
	f.BoolVar(&rf.nonblock, "nonblock", false, "fail at once when taken: --wait 0")
	f.alias("n", "nonblock")
	f.alias("nb", "nonblock")
	f.BoolVar(&rf.unlock, "unlock", false, "flock's -u: refused, as the hold ends when COMMAND exits")
	f.alias("u", "unlock")
	f.BoolVar(&rf.close, "close", false, "flock's -o: accepted; COMMAND never gets a descriptor of the lock")
	f.alias("o", "close")
	f.BoolVar(&rf.noFork, "no-fork", false, "flock's -F: refused, as distsync must stay to renew and release the hold")
	f.alias("F", "no-fork")
	f.IntVar(&rf.conflict, "conflict-exit-code", exitNotAcquired, "the exit `code` when not acquired within --wait (flock -E)")
	f.alias("E", "conflict-exit-code")
	f.StringVar(&rf.command, "command", "", "run `STRING` with sh -c instead of COMMAND [ARG...]")
	f.alias("c", "command")
	rf.lease = f.durationVar("lease", distsync.DefaultLease, "the watchdog lease `time`, renewed every lease/3 while COMMAND runs; at least "+minRunLease.String())
	rf.grace = f.durationVar("grace", 10*time.Second, "the `time` COMMAND has between SIGTERM and SIGKILL after a lost lease")
	cf.register(f)
	argv, err := f.parse(c, args, false)
	if err != nil {
		return err
	}
	if argv, err = rf.positional(c, f, argv); err != nil {
		return err
	}
	if err := rf.check(f, &argv); err != nil {
		return err
	}
	path, err := lookPath(argv[0])
	if err != nil {
		return err
	}

	o, err := cf.options(c)
	if err != nil {
		return err
	}
	o.Watchdog.Lease = rf.lease.d
	client, err := connect(o)
	if err != nil {
		return err
	}
	defer client.Close()
	var g guard
	switch {
	case rf.lock != "":
		g, err = newLockGuard(client, rf.lock)
	case rf.rwlock != "":
		g, err = newRWLockGuard(client, rf.rwlock, rf.shared)
	default:
		g, err = newSemaphoreGuard(client, rf.sem, rf.permits)
	}
	if err != nil {
		return withCode(exitUsage, err)
	}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	// Wait for the guard; a signal now gives up.
	actx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	if err := checkKind(actx, client, g); err != nil {
		return err
	}
	stopWatch, watchDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watchDone)
		var progress <-chan time.Time
		if cf.verbose {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			progress = t.C
		}
		start := time.Now()
		for {
			select {
			case s := <-sigs:
				if stopping(s) {
					cancel(signalError{s})
					return
				}
			case <-progress:
				c.reportWait(actx, client, g, time.Since(start))
			case <-stopWatch:
				return
			}
		}
	}()
	held, env, err := g.acquire(actx, rf.budget())
	close(stopWatch)
	<-watchDone // from here on actx is cancelled only at return
	var se signalError
	if errors.As(context.Cause(actx), &se) {
		if err == nil {
			g.release(held) // the signal came as the hold was granted
		}
		return withCode(se.code(), fmt.Errorf("interrupted while waiting for %v", g))
	}
	if err != nil {
		// A conflict is silent, as flock's (cron mails nothing); -v says it.
		switch {
		case !errors.Is(err, distsync.ErrNotAcquired):
			return err
		case !cf.verbose:
			return withCode(rf.conflict, nil)
		case rf.budget() == 0:
			return withCode(rf.conflict, fmt.Errorf("%v not acquired: held by others (--wait 0)", g))
		}
		return withCode(rf.conflict, fmt.Errorf("%v not acquired within %v", g, rf.budget()))
	}

	if cf.verbose {
		fmt.Fprintf(c.stderr, "distsync run: holding %v (client %s; %s)\n", g, client.ID(), strings.Join(env, " "))
	}
	signal.Notify(sigs, jobControl...) // from now on, Ctrl-Z stops COMMAND too
	p, err := startGroup(path, argv, env, c.stdin, c.stdout, c.stderr)
	if err != nil {
		g.release(held)
		return withCode(exitCannotExec, err)
	}
	defer p.close()

	lost := false
wait:
	for {
		select {
		case <-p.exited():
			break wait
		case s := <-sigs:
			switch {
			case isSuspend(s):
				p.suspend() // its SIGCONT follows
			case isContinue(s):
				if !c.resumeIfHeld(p, g, held) {
					lost = true
					fmt.Fprintf(c.stderr, "distsync run: %v was lost while stopped; stopping %s (process group %d)\n", g, argv[0], p.pid())
					terminate(p, rf.grace.d)
					break wait
				}
			default:
				p.signal(s)
				if stopping(s) {
					// A COMMAND stopped on the terminal (a background
					// job that read it) acts on it only once continued.
					p.resume()
				}
			}
		case <-held.Done():
			lost = true
			fmt.Fprintf(c.stderr, "distsync run: lease of %v lost (%s); stopping %s (process group %d)\n",
				g, strings.TrimPrefix(errText(context.Cause(held)), "lease lost: "), argv[0], p.pid())
			terminate(p, rf.grace.d)
			break wait
		}
	}
	p.close() // what COMMAND left running must not outlive the hold
	if lost || errors.Is(context.Cause(held), distsync.ErrLeaseLost) {
		return withCode(exitLeaseLost, nil)
	}
	if err := g.release(held); errors.Is(err, distsync.ErrNotHeld) {
		// Lost after the command ended, or before the watchdog noticed.
		return withCode(exitLeaseLost, fmt.Errorf("%v was no longer held when %s exited: %w", g, argv[0], err))
	} else if err != nil {
		fmt.Fprintf(c.stderr, "distsync run: releasing %v: %s (its lease expires by itself)\n", g, errText(err))
	}
	return withCode(p.status(), nil)
}

// positional takes NAME from argv when no --lock, --rwlock or --semaphore
// names the primitive: flock's form, run [flags] NAME [flags] [--] COMMAND,
// where NAME is a mutex. Flags may follow NAME, before COMMAND (flock NAME
// -c STRING). It returns the command's argv.
func (rf *runFlags) positional(c *cli, f *flags, argv []string) ([]string, error) {
	if rf.lock != "" || rf.rwlock != "" || rf.sem != "" || len(argv) == 0 {
		return argv, nil
	}
	rf.lock = argv[0]
	return f.parse(c, argv[1:], false)
}

// check validates the flags and sets argv to the command to run.
func (rf *runFlags) check(f *flags, argv *[]string) error {
	if rf.noFork {
		return withCode(exitUsage, errors.New("-F/--no-fork is refused: distsync stays to renew the lease while COMMAND runs and to release the hold when it exits"))
	}
	if rf.unlock {
		return usageErrorf("run", "-u/--unlock has no meaning here: the hold ends when COMMAND exits (flock -u unlocks a descriptor that run never gives COMMAND); to delete a lock whoever holds it, run distsync unlock --force NAME")
	}
	n := 0
	for _, name := range []string{rf.lock, rf.rwlock, rf.sem} {
		if name != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return usageErrorf("run", "no NAME to hold: give NAME before COMMAND, or --lock, --rwlock or --semaphore NAME")
	case n != 1:
		return usageErrorf("run", "give exactly one of --lock, --rwlock and --semaphore")
	case rf.sem != "" && (rf.permits <= 0 || rf.permits > semaphore.MaxPermits):
		return usageErrorf("run", "--semaphore needs --permits N with 0 < N <= %d", int64(semaphore.MaxPermits))
	case rf.sem == "" && f.set("permits"):
		return usageErrorf("run", "--permits goes with --semaphore")
	case rf.shared && rf.rwlock == "":
		return usageErrorf("run", "-s/--shared is the read side of a read-write lock: use it with --rwlock NAME (a mutex, --lock NAME or NAME alone, has no shared side)")
	case rf.shared && rf.exclusive:
		return usageErrorf("run", "-s/--shared and -x/--exclusive disagree")
	case rf.exclusive && rf.sem != "":
		return usageErrorf("run", "-x/--exclusive goes with a lock: a permit of --semaphore is shared with the other permits")
	case rf.nonblock && rf.wait.set && rf.wait.d != 0:
		return usageErrorf("run", "-n/--nonblock and --wait %v disagree", rf.wait.d)
	case rf.conflict < 0 || rf.conflict > 255:
		return usageErrorf("run", "-E/--conflict-exit-code %d is not an exit code (0 to 255)", rf.conflict)
	case f.set("command") && len(*argv) > 0:
		return usageErrorf("run", "give -c 'COMMAND STRING' or COMMAND [ARG...], not both")
	case f.set("command") && strings.TrimSpace(rf.command) == "":
		return usageErrorf("run", "-c needs a command string")
	case !f.set("command") && len(*argv) == 0:
		return usageErrorf("run", "no COMMAND to run (after NAME %q)", rf.lock+rf.rwlock+rf.sem)
	case rf.lease.d < minRunLease:
		return usageErrorf("run", "--lease %v is too short: at least %v, as it is renewed every third of it", rf.lease.d, minRunLease)
	}
	if f.set("command") {
		*argv = []string{"sh", "-c", rf.command}
	}
	return nil
}

// budget is the wait budget: -1 forever.
func (rf *runFlags) budget() time.Duration {
	if rf.nonblock {
		return 0
	}
	return rf.wait.budget()
}

// lookPath finds the command as a shell would: 127 when there is no such
// file, 126 when it is not executable.
func lookPath(name string) (string, error) {
	path, err := exec.LookPath(name)
	switch {
	case err == nil:
		return path, nil
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return "", withCode(exitNotFound, fmt.Errorf("%s: command not found", name))
	case errors.Is(err, exec.ErrDot):
		return "", withCode(exitNotFound, fmt.Errorf("%s: command not found (it is in the current directory: run ./%s)", name, name))
	}
	return "", withCode(exitCannotExec, fmt.Errorf("%s: cannot execute: %w", name, unwrapPathError(err)))
}

// unwrapPathError drops exec's repetition of the command's name.
func unwrapPathError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkKind refuses a name that holds another kind of primitive (65): a
// --lock on a semaphore would otherwise fail on its keys.
func checkKind(ctx context.Context, c *distsync.Client, g guard) error {
	_, _, err := lookup(ctx, c, g.name(), g.kind())
	return err
}

// reportWait prints, for -v, who holds what run waits for.
func (c *cli) reportWait(ctx context.Context, client *distsync.Client, g guard, waited time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	who := "its holders are unknown"
	if r, _, err := lookup(ctx, client, g.name(), g.kind()); err != nil {
		who = "cannot inspect it: " + errText(err)
	} else {
		who = r.holders()
	}
	fmt.Fprintf(c.stderr, "distsync run: waiting for %v for %s; %s\n", g, waited.Round(time.Second), who)
}

// holders summarises who holds the primitive the report describes.
func (r *report) holders() string {
	if len(r.Owners) == 0 {
		return "nobody holds it now"
	}
	var ids []string
	for i, o := range r.Owners {
		if i == 3 {
			ids = append(ids, fmt.Sprintf("and %d more", len(r.Owners)-3))
			break
		}
		s := o.ID
		if o.Mode != "" {
			s += " (" + o.Mode + ")"
		}
		ids = append(ids, s)
	}
	s := "held by " + strings.Join(ids, ", ")
	if r.Permits != nil {
		s = fmt.Sprintf("%d permits held (%d available), by %s", r.Permits.Held, r.Permits.Available, strings.Join(ids, ", "))
	}
	switch {
	case r.TTLMs > 0:
		s += fmt.Sprintf("; lease ends in %v unless renewed", roundMs(r.TTLMs))
	case r.TTLMs < 0:
		s += "; no lease"
	}
	return s
}

// resumeIfHeld continues COMMAND's group after a stop once the server
// confirms the hold (a stopped distsync renews nothing: its lease may have
// ended meanwhile), and reports whether it did. While the server cannot
// answer, the group stays stopped, until the hold is known to be lost.
func (c *cli) resumeIfHeld(p *group, g guard, held context.Context) bool {
	for {
		ok, err := g.holds(held)
		if err == nil {
			if ok {
				p.resumeJob()
			}
			return ok
		}
		fmt.Fprintf(c.stderr, "distsync run: cannot check %v after a stop (%s); the command stays stopped\n", g, errText(err))
		t := time.NewTimer(time.Second)
		select {
		case <-held.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}

// terminate sends the group SIGTERM, then SIGKILL after grace, and returns
// once the guard has exited. A stopped group is continued to act on it.
func terminate(p *group, grace time.Duration) {
	p.signal(syscall.SIGTERM)
	p.resume()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited():
	case <-t.C:
		p.kill()
		<-p.exited()
	}
}

// exitStatus is the exit code a shell would report for a command's Wait
// result: its own code, or 128+N when signal N ended it.
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return exitFailure
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// signalError is the cause of giving up a wait on a signal.
type signalError struct{ sig os.Signal }

func (s signalError) Error() string { return "signal " + s.sig.String() }

func (s signalError) code() int {
	if n, ok := s.sig.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitFailure
}
