package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// invokeEnv runs the command line in process with the environment env (the
// shared server's flags are the caller's business) and returns the exit
// code, stdout and stderr.
func invokeEnv(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: func(k string) string { return env[k] }}
	code := c.main(args)
	return code, out.String(), errOut.String()
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "-V", "version"} {
		code, out, _ := invoke(t, "", arg)
		assert.Equal(t, exitOK, code, arg)
		assert.Regexp(t, `^distsync \S+`, out, arg)
	}
}

func TestParseSeconds(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{"5": 5 * time.Second, "0.5": 500 * time.Millisecond, "0": 0, "1m30s": 90 * time.Second, "250ms": 250 * time.Millisecond} {
		d, err := parseSeconds(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, d, in)
	}
	for _, in := range []string{"-1", "-1s", "soon", "", "nan", "inf", "1e300", "0x10"} {
		_, err := parseSeconds(in)
		assert.Error(t, err, in)
	}
}

// TestBadArgumentsAre64 covers the arguments checked by distsync or refused
// by the library.
func TestBadArgumentsAre64(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"run", "--semaphore", "s", "--permits", "9007199254740993", "true"},
		{"run", "--semaphore", "s", "--permits", "99999999999999999999", "true"},
		{"run", "--lock", "x", "-E", "256", "true"},
		{"run", "--lock", "x", "-w", "soon", "true"},
		{"run", "--lock", "x", "-w", "-1", "true"},
		{"run", "--lock", "x", "-n", "-w", "5", "true"},
		{"run", "--lock", "x", "-s", "true"},
		{"run", "--rwlock", "x", "--lock", "y", "true"},
		{"run", "--lock", "x", "-c", "true", "extra"},
		{"run", "--lock", "x", "-c", " "},
		{"run", "--lock", "x", "--lease", "1ms", "true"},
		{"run", "--lock", "bad{name}", "true"},
		{"run", "--lock", "x", "--db", "-1", "true"},
		{"inspect", "--redis", "ftp://127.0.0.1:1", "x"},
		{"inspect", "--redis", "unix:///tmp/redis.sock", "x"},
		{"inspect", "--redis", "redis://127.0.0.1:1?dial_timeout=1s", "x"},
		{"inspect", "--redis", "redis://127.0.0.1:1/x", "x"},
		{"inspect", "--redis", "redis://127.0.0.1:1,127.0.0.1:2", "x"},
		{"inspect", "--cert", "c.pem", "x"},
		{"inspect", "--cacert", "/nonexistent/ca.pem", "x"},
		{"delete", "--kind", "mutex", "x"},
		{"delete"},
		{"delete", "bad{name}"},
	} {
		code, _, errOut := invoke(t, "", args...)
		assert.Equal(t, exitUsage, code, "%q: %s", args, errOut)
		assert.NotContains(t, errOut, "distsync: ", "%q: a stuttering message", args)
	}
}

func TestRunNotFoundOrNotExecutable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644))
	for cmd, want := range map[string]int{
		"distsync-no-such-command":       exitNotFound,
		filepath.Join(dir, "no-such"):    exitNotFound,
		filepath.Join(dir, "no/such/cm"): exitNotFound,
		plain:                            exitCannotExec,
		dir:                              exitCannotExec,
	} {
		code, _, errOut := invoke(t, "", "run", "--lock", dstest.Name(t), "--", cmd)
		assert.Equal(t, want, code, "%s: %s", cmd, errOut)
	}
}

func TestRunFlockConventions(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	lockIn(t, c, name)

	// -w takes bare seconds; -E sets the conflict code; -n is --wait 0.
	code, _, errOut := invoke(t, "", "run", "-v", "--lock", name, "-w", "0.1", "--", "true")
	assert.Equal(t, exitNotAcquired, code, errOut)
	assert.Contains(t, errOut, "not acquired within 100ms")
	code, _, errOut = invoke(t, "", "run", "-v", "--lock", name, "-E", "3", "-n", "--", "true")
	assert.Equal(t, 3, code, errOut)
	assert.Contains(t, errOut, "held by others")
	code, _, _ = invoke(t, "", "run", "--lock", name, "--conflict-exit-code", "0", "-w", "0", "--", "true")
	assert.Equal(t, 0, code)

	// -c runs a command string with sh.
	code, out, errOut := invoke(t, "", "run", "--lock", name+"-c", "-c", "echo token $"+envFencingToken+"; exit 4")
	assert.Equal(t, 4, code, errOut)
	assert.Regexp(t, `^token [1-9][0-9]*\n$`, out)
}

func TestRunShared(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	rw, err := c.RWLock(name)
	require.NoError(t, err)
	ctx := context.Background()

	// Readers share; a writer waits for them.
	r, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	code, out, errOut := invoke(t, "", "run", "--rwlock", name, "-s", "-n", "--", "sh", "-c", "echo $"+envFencingToken)
	assert.Equal(t, 0, code, errOut)
	assert.Regexp(t, `^[1-9][0-9]*\n$`, out)
	code, _, errOut = invoke(t, "", "run", "-v", "--rwlock", name, "-n", "--", "true")
	assert.Equal(t, exitNotAcquired, code, errOut)
	assert.Contains(t, errOut, `write lock "`+name+`"`)
	require.NoError(t, rw.Read().Unlock(r))

	// A writer excludes readers.
	w, err := rw.Write().Lock(ctx)
	require.NoError(t, err)
	code, _, errOut = invoke(t, "", "run", "-v", "--rwlock", name, "--shared", "-n", "--", "true")
	assert.Equal(t, exitNotAcquired, code, errOut)
	assert.Contains(t, errOut, `read lock "`+name+`"`)
	require.NoError(t, rw.Write().Unlock(w))
	code, _, errOut = invoke(t, "", "run", "--rwlock", name, "-n", "--", "true")
	assert.Equal(t, 0, code, errOut)
}

// TestRunRefusesAnotherKind: run on a name whose keys are another
// primitive's refuses it rather than misread them.
func TestRunRefusesAnotherKind(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	ctx := context.Background()
	s, err := c.PermitSemaphore(name)
	require.NoError(t, err)
	defer s.Delete(ctx)
	_, err = s.TrySetPermits(ctx, 2)
	require.NoError(t, err)
	ran := filepath.Join(t.TempDir(), "ran")
	for _, args := range [][]string{{"--lock", name}, {"--rwlock", name, "-s"}} {
		code, _, errOut := invoke(t, "", append(append([]string{"run"}, args...), "--", "touch", ran)...)
		assert.Equal(t, exitState, code, errOut)
		assert.Contains(t, errOut, "holds a permitsemaphore, not a")
		assert.NoFileExists(t, ran)
	}

	// run --semaphore holds a permit of a permit semaphore: a counting
	// semaphore is another kind.
	cs, err := c.Semaphore(name + "-counting")
	require.NoError(t, err)
	defer cs.Delete(ctx)
	_, err = cs.TrySetPermits(ctx, 2)
	require.NoError(t, err)
	code, _, errOut := invoke(t, "", "run", "--semaphore", cs.Name(), "--permits", "2", "--", "touch", ran)
	assert.Equal(t, exitState, code, errOut)
	assert.Contains(t, errOut, "holds a semaphore, not a permitsemaphore")
	assert.NoFileExists(t, ran)
	n, err := cs.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "the counting semaphore is untouched")
}

// TestInspectKindIsVerified: --kind against another kind is a state error
// (65), not a usage error (64).
func TestInspectKindIsVerified(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	sname, mname := dstest.Name(t)+"-sem", dstest.Name(t)+"-mutex"
	s, err := c.PermitSemaphore(sname)
	require.NoError(t, err)
	defer s.Delete(ctx)
	_, err = s.TrySetPermits(ctx, 2)
	require.NoError(t, err)
	code, _, errOut := invoke(t, "", "inspect", "--kind", "mutex", sname)
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "distsync:{"+sname+"} holds a permitsemaphore, not a mutex")
	code, _, errOut = invoke(t, "", "inspect", "--kind", "semaphore", sname)
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "holds a permitsemaphore, not a semaphore", "the two semaphores are two kinds")
	p, err := s.TryAcquire(ctx, 0, 0)
	require.NoError(t, err)
	defer s.Release(ctx, p)
	code, _, errOut = invoke(t, "", "inspect", "--kind", "latch", sname)
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "not a latch")

	lockIn(t, c, mname)
	for _, k := range []string{"rwlock", "semaphore"} {
		code, _, errOut = invoke(t, "", "inspect", "--kind", k, mname)
		assert.Equal(t, exitState, code, k)
		assert.Contains(t, errOut, "not a "+k, k)
	}
	// The kind is the one stored: a mutex is not a fair lock, even without
	// waiters (when their keys are alike).
	code, _, errOut = invoke(t, "", "inspect", "--kind", "fairlock", mname)
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "holds a mutex, not a fairlock")
	assert.Equal(t, distsync.KindMutex, inspectJSON(t, "--kind", "mutex", mname).Kind)
}

func TestDelete(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	base := dstest.Name(t)

	code, out, errOut := invoke(t, "", "delete", "--yes", base+"-none")
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "does not exist")

	// A permit semaphore: its marker says what it is.
	s, err := c.PermitSemaphore(base + "-sem")
	require.NoError(t, err)
	_, err = s.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	p, err := s.TryAcquire(ctx, 0, 0)
	require.NoError(t, err)
	code, out, errOut = invoke(t, "n\n", "delete", s.Name())
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, out, `Delete permitsemaphore "`+s.Name()+`"? [y/N]`)
	assert.Contains(t, out, "1 held")
	assert.Contains(t, errOut, "not confirmed")
	n, err := s.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "deleted without confirmation")
	code, out, errOut = invoke(t, "y\n", "delete", s.Name())
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `permitsemaphore "`+s.Name()+`" deleted`)
	set, err := s.TrySetPermits(ctx, 1)
	require.NoError(t, err)
	assert.True(t, set, "the semaphore still has a size")
	assert.ErrorIs(t, s.Release(ctx, p), distsync.ErrNotHeld)
	_, err = s.Delete(ctx)
	require.NoError(t, err)

	// A counting semaphore is another kind: --kind tells them apart, and
	// delete leaves none of its keys, its kind included.
	cs, err := c.Semaphore(base + "-counting")
	require.NoError(t, err)
	_, err = cs.TrySetPermits(ctx, 3)
	require.NoError(t, err)
	code, _, errOut = invoke(t, "", "delete", "--yes", "--kind", "permitsemaphore", cs.Name())
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "holds a semaphore, not a permitsemaphore")
	code, out, errOut = invoke(t, "", "delete", "--yes", "--kind", "semaphore", cs.Name())
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `semaphore "`+cs.Name()+`" deleted`)
	assert.Empty(t, dstest.Keys(t, c, cs.Key()+"*"))

	// A latch carries its kind: no --kind needed.
	l, err := c.Latch(base + "-latch")
	require.NoError(t, err)
	_, err = l.TrySetCount(ctx, 2)
	require.NoError(t, err)
	code, _, errOut = invoke(t, "", "delete", "--yes", "--kind", "semaphore", l.Name())
	assert.Equal(t, exitState, code, "--kind is checked against the marker")
	assert.Contains(t, errOut, "not a semaphore")
	awaited := make(chan error, 1)
	go func() { awaited <- l.Await(ctx) }()
	code, out, errOut = invoke(t, "", "delete", "--yes", l.Name())
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `latch "`+l.Name()+`" deleted`)
	assert.NoError(t, <-awaited, "the awaiter was not released")

	// Locks are unlock --force's.
	lockIn(t, c, base+"-mutex")
	code, _, errOut = invoke(t, "", "delete", "--yes", base+"-mutex")
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "unlock --force")
}

func TestConnectionURL(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	name := dstest.Name(t)
	lockIn(t, dstest.Client(t), name)
	resp2 := []string{}
	if s.RESP2() {
		resp2 = []string{"--resp2"}
	}
	for _, c := range []struct {
		env  string
		args []string
		kind string
	}{
		{"", []string{"--redis", "redis://" + s.Addr()}, "mutex"},
		{"", []string{"--redis", "redis://" + s.Addr() + "/0"}, "mutex"},
		{"", []string{"--redis", "redis://" + s.Addr() + "/1"}, ""},                   // another database
		{"", []string{"--redis", "redis://" + s.Addr() + "/1", "--db", "0"}, "mutex"}, // the flag wins
		{"redis://" + s.Addr() + "?db=0", nil, "mutex"},
		{"redis://" + s.Addr() + "/1", nil, ""},
	} {
		args := append(append(append([]string{"inspect", "--json"}, resp2...), c.args...), name)
		code, out, errOut := invokeEnv(t, map[string]string{envRedis: c.env}, "", args...)
		require.Equal(t, exitOK, code, "%s %q: %s", c.env, c.args, errOut)
		assert.Contains(t, out, `"kind": "`+c.kind+`"`, "%s %q", c.env, c.args)
	}
}

// TestConnectNotRedis: a server that does not speak RESP gets a message
// saying so, once prefixed.
func TestConnectNotRedis(t *testing.T) {
	t.Parallel()
	awaitRueidisRefresh(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			conn.Write([]byte("<!DOCTYPE html>\r\n<html></html>\r\n"))
			conn.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-served })
	code, _, errOut := invokeEnv(t, nil, "", "inspect", "--redis", l.Addr().String(), "x")
	assert.Equal(t, exitUnavailable, code, errOut)
	assert.True(t, strings.HasPrefix(errOut, "distsync inspect: cannot connect to "+l.Addr().String()+": the server does not speak the Redis protocol"), errOut)
	assert.Contains(t, errOut, `'<'`)
	assert.NotContains(t, errOut, "unknown message type")
	assert.Equal(t, 1, strings.Count(errOut, "distsync"), "a stuttering message: %s", errOut)
}
