package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/distsync/distsync"
)

const runUsage = `Usage: distsync run --lock NAME [--wait D] [--lease D] [--grace D] [--] COMMAND [ARG...]
       distsync run --semaphore NAME --permits N [--wait D] [--lease D] [--grace D] [--] COMMAND [ARG...]

A distributed flock(1): runs COMMAND while holding the mutex NAME (or one
permit of the semaphore NAME, whose size is set to N unless it already has
one), and releases it when COMMAND exits. The hold has the watchdog lease
(--lease), renewed while COMMAND runs, so a crashed distsync frees it within
one lease. COMMAND gets the lock's fencing token in $DISTSYNC_FENCING_TOKEN,
or the permit's id in $DISTSYNC_PERMIT_ID.

If the lease is lost (the key was deleted, the server lost it, renewals failed
for a whole lease), COMMAND is sent SIGTERM, then SIGKILL after --grace, and
distsync exits 70. SIGINT, SIGTERM and SIGHUP sent to distsync are passed on
to COMMAND.

Exit: COMMAND's exit code (128+N if signal N ended it); 75 when not acquired
within --wait (at once, with --wait 0, if taken); 70 lease lost; 64 usage;
69 cannot connect; 126 COMMAND cannot run; 127 COMMAND not found.
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
	// String names it in messages, e.g. `lock "deploy"`.
	String() string
}

// Environment variables run gives the command.
const (
	envFencingToken = "DISTSYNC_FENCING_TOKEN" // --lock: the hold's fencing token
	envPermitID     = "DISTSYNC_PERMIT_ID"     // --semaphore: the permit's id
)

func (c *cli) runCmd(args []string) error {
	f := newFlags("run", runUsage)
	var cf connFlags
	cf.register(f)
	lock := f.String("lock", "", "hold the mutex `NAME`")
	sem := f.String("semaphore", "", "hold one permit of the semaphore `NAME`")
	permits := f.Int64("permits", 0, "the semaphore's size `N`, set if it has none (with --semaphore)")
	var wait waitFlag
	f.Var(&wait, "wait", "the `duration` to wait for the lock or permit, e.g. 30s; 0 fails at once when taken (default forever)")
	lease := f.Duration("lease", distsync.DefaultLease, "the watchdog lease, renewed every lease/3 while COMMAND runs")
	grace := f.Duration("grace", 10*time.Second, "after a lost lease, the time COMMAND has between SIGTERM and SIGKILL")
	argv, err := f.parse(c, args, false)
	if err != nil {
		return err
	}
	switch {
	case (*lock == "") == (*sem == ""):
		return usageErrorf("run", "give exactly one of --lock and --semaphore")
	case *sem != "" && *permits <= 0:
		return usageErrorf("run", "--semaphore needs --permits N with N > 0")
	case *lock != "" && *permits != 0:
		return usageErrorf("run", "--permits goes with --semaphore, not --lock")
	case len(argv) == 0:
		return usageErrorf("run", "no COMMAND to run")
	case *lease < 3*time.Millisecond:
		return usageErrorf("run", "--lease %v is too short", *lease)
	case *grace < 0:
		return usageErrorf("run", "negative --grace %v", *grace)
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		code := 127
		if !errors.Is(err, exec.ErrNotFound) {
			code = 126
		}
		return withCode(code, err)
	}

	o := cf.options(c)
	o.Lease = *lease
	client, err := connect(o)
	if err != nil {
		return err
	}
	defer client.Close()
	var g guard
	if *lock != "" {
		g, err = newLockGuard(client, *lock)
	} else {
		g, err = newSemaphoreGuard(client, *sem, *permits)
	}
	if err != nil {
		return withCode(exitUsage, err)
	}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	// Wait for the guard; a signal now gives up.
	actx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopWatch, watchDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case s := <-sigs:
			cancel(signalError{s})
		case <-stopWatch:
		}
	}()
	held, env, err := g.acquire(actx, wait.budget())
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
		switch {
		case errors.Is(err, distsync.ErrNotAcquired) && wait.budget() == 0:
			return withCode(exitNotAcquired, fmt.Errorf("%v not acquired: held by others (--wait 0)", g))
		case errors.Is(err, distsync.ErrNotAcquired):
			return withCode(exitNotAcquired, fmt.Errorf("%v not acquired within %v", g, wait.budget()))
		}
		return err
	}

	if cf.verbose {
		fmt.Fprintf(c.stderr, "distsync run: holding %v (client %s; %s)\n", g, client.ID(), strings.Join(env, " "))
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.stdin, c.stdout, c.stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		g.release(held)
		return withCode(126, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var waitErr error
	lost := false
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case s := <-sigs:
			cmd.Process.Signal(s)
		case <-held.Done():
			lost = true
			fmt.Fprintf(c.stderr, "distsync run: lease of %v lost (%v); stopping %s (pid %d)\n",
				g, context.Cause(held), argv[0], cmd.Process.Pid)
			waitErr = terminate(cmd.Process, done, *grace)
			break wait
		}
	}
	if lost || errors.Is(context.Cause(held), distsync.ErrLeaseLost) {
		return withCode(exitLeaseLost, nil)
	}
	if err := g.release(held); errors.Is(err, distsync.ErrNotHeld) {
		// Lost after the command ended, or before the watchdog noticed.
		return withCode(exitLeaseLost, fmt.Errorf("%v was no longer held when %s exited: %w", g, argv[0], err))
	} else if err != nil {
		fmt.Fprintf(c.stderr, "distsync run: releasing %v: %v (its lease expires by itself)\n", g, err)
	}
	return withCode(exitStatus(waitErr), nil)
}

// terminate sends p SIGTERM (Kill where signals are not supported), then
// SIGKILL after grace, and returns its Wait result.
func terminate(p *os.Process, done <-chan error, grace time.Duration) error {
	if err := p.Signal(syscall.SIGTERM); err != nil {
		p.Kill()
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		p.Kill()
		return <-done
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
