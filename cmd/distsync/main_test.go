package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

func TestMain(m *testing.M) {
	// In-process "distsync run" starts this binary as its guard.
	if len(os.Args) > 1 && os.Args[1] == guardCommand {
		os.Exit(guardMain(os.Args[2:]))
	}
	redistest.Main(m)
}

// invoke runs the command line in process, with DISTSYNC_REDIS pointing at
// the shared test server, and returns the exit code, stdout and stderr.
func invoke(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	s := redistest.Shared(t)
	var out, errOut bytes.Buffer
	c := &cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: func(k string) string {
		if k == envRedis {
			return s.Addr()
		}
		return ""
	}}
	if s.RESP2() && len(args) > 0 && slices.ContainsFunc(commands, func(c command) bool { return c.name == args[0] }) {
		args = append([]string{args[0], "--resp2"}, args[1:]...) // the embedded server speaks RESP2 only
	}
	code := c.main(args)
	return code, out.String(), errOut.String()
}

func TestHelpOnEveryCommand(t *testing.T) {
	t.Parallel()
	code, out, _ := invoke(t, "", "help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "Exit codes:")
	for _, cmd := range commands {
		for _, h := range []string{"--help", "-h"} {
			code, out, errOut := invoke(t, "", cmd.name, h)
			assert.Equal(t, exitOK, code, "%s %s", cmd.name, h)
			assert.True(t, strings.HasPrefix(out, "Usage: distsync "+cmd.name), "%s %s: %q", cmd.name, h, out)
			assert.Contains(t, out, "--redis host:port")
			assert.Empty(t, errOut)
		}
		code, out, _ := invoke(t, "", "help", cmd.name)
		assert.Equal(t, exitOK, code)
		assert.Contains(t, out, "Usage: distsync "+cmd.name)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"nosuch"},
		{"demo", "--nosuch"},
		{"demo", "extra"},
		{"run", "--lock", "x"}, // no command
		{"run", "--", "true"},  // no lock
		{"run", "--lock", "x", "--semaphore", "y", "true"}, // both
		{"run", "--semaphore", "y", "true"},                // no --permits
		{"run", "--lock", "x", "--permits", "2", "true"},   // --permits without --semaphore
		{"run", "--lock", "x", "--wait", "-1s", "true"},    // negative wait
		{"run", "--lock", "x", "--wait", "soon", "true"},   // not a duration
		{"inspect"},                          // no name
		{"inspect", "a", "b"},                // two names
		{"inspect", "--kind", "nosuch", "x"}, // unknown kind
		{"inspect", "bad{name}"},             // invalid name
		{"unlock", "x"},                      // no --force
		{"bench", "--scenarios", "nosuch", "--duration=1s"}, // unknown scenario
	} {
		code, _, errOut := invoke(t, "", args...)
		assert.Equal(t, exitUsage, code, "%q: %s", args, errOut)
	}
}

func TestRunCommandNotFound(t *testing.T) {
	t.Parallel()
	code, _, errOut := invoke(t, "", "run", "--lock", dstest.Name(t), "--", "distsync-no-such-command")
	assert.Equal(t, 127, code, errOut)
}

func TestCannotConnect(t *testing.T) {
	t.Parallel()
	awaitRueidisRefresh(t)
	// A port nothing listens on: the shared server's, after it is taken by
	// nobody, is not knowable; port 1 on loopback is refused.
	code, _, errOut := invoke(t, "", "inspect", "--redis", "127.0.0.1:1", "x")
	assert.Equal(t, exitUnavailable, code, errOut)
}

// awaitRueidisRefresh makes a test whose connection fails wait, at its end,
// for the goroutine rueidis leaves behind. A failed rueidis.NewClient closes
// the connections it made, and their close hook starts a delayed cluster
// refresh (call.DelayDo: a sleep of up to a second, then a refresh of the
// closed client, which returns at once). Nothing outside rueidis can stop
// it, as distsync.New gets no client to close; it ends by itself, and the
// package's goroutine-leak check must not find it still asleep.
func awaitRueidisRefresh(t *testing.T) {
	t.Cleanup(func() {
		assert.Eventually(t, func() bool {
			buf := make([]byte, 1<<20)
			return !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("rueidis.(*call).DelayDo"))
		}, 10*time.Second, 10*time.Millisecond, "rueidis's delayed refresh did not end")
	})
}

// lockIn takes the mutex name on a Client of the test (another "process").
func lockIn(t *testing.T, c *distsync.Client, name string) (context.Context, int64) {
	t.Helper()
	m, err := c.Mutex(name)
	require.NoError(t, err)
	held, err := m.Lock(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { m.Unlock(held) })
	tok, err := m.Token(held)
	require.NoError(t, err)
	return held, tok
}

func TestInspect(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)

	code, out, errOut := invoke(t, "", "inspect", "--json", name)
	require.Equal(t, exitOK, code, errOut)
	var free report
	require.NoError(t, json.Unmarshal([]byte(out), &free))
	assert.Equal(t, report{Name: name, Key: "distsync:{" + name + "}", Owners: []owner{}, Waiters: []waiter{}}, free)

	held, tok := lockIn(t, c, name)
	m, err := c.Mutex(name)
	require.NoError(t, err)
	_, err = m.Lock(held) // re-enter: hold count 2
	require.NoError(t, err)

	// A waiter from another Client, registered before inspect runs.
	other := dstest.Client(t)
	mo, err := other.Mutex(name)
	require.NoError(t, err)
	waitCtx, stopWaiting := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := mo.Lock(waitCtx)
		waited <- err
	}()
	dstest.WaitWaiters(t, c, m.Key()+":waiters", 1)

	// Flags after the name are accepted too.
	code, out, errOut = invoke(t, "", "inspect", name, "--json")
	require.Equal(t, exitOK, code, errOut)
	var r report
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	assert.Equal(t, distsync.KindMutex, r.Kind)
	assert.True(t, r.Held)
	assert.Equal(t, tok, r.Token)
	assert.Greater(t, r.TTLMs, int64(0))
	require.Len(t, r.Owners, 1)
	assert.Equal(t, c.ID(), r.Owners[0].Client)
	assert.True(t, strings.HasPrefix(r.Owners[0].ID, c.ID()+":"))
	assert.Equal(t, int64(2), r.Owners[0].Holds)
	require.Len(t, r.Waiters, 1)
	assert.True(t, strings.HasPrefix(r.Waiters[0].ID, other.ID()+":"), r.Waiters[0].ID)

	code, out, errOut = invoke(t, "", "inspect", name)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `mutex "`+name+`": held`)
	assert.Contains(t, out, r.Owners[0].ID+"  holds 2")
	assert.Contains(t, out, "1. "+r.Waiters[0].ID)

	stopWaiting()
	assert.ErrorIs(t, <-waited, context.Canceled)
}

func TestInspectUnknownKeys(t *testing.T) {
	t.Parallel()
	name := dstest.Name(t)
	rc := redistest.Shared(t).Client(t)
	require.NoError(t, rc.Do(context.Background(), rc.B().Sadd().Key("distsync:{"+name+"}").Member("x").Build()).Error())
	t.Cleanup(func() { rc.Do(context.Background(), rc.B().Del().Key("distsync:{"+name+"}").Build()) })
	code, _, errOut := invoke(t, "", "inspect", name)
	assert.Equal(t, exitState, code)
	assert.Contains(t, errOut, "is a set that fits no known kind")
}

func TestUnlockForce(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t, func(o *distsync.Options) { o.Watchdog.Lease = 300 * time.Millisecond })
	name := dstest.Name(t)

	code, out, errOut := invoke(t, "", "unlock", "--force", "--yes", name)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "not held")

	held, _ := lockIn(t, c, name)
	// Declined (and end of input) leaves it.
	for _, answer := range []string{"n\n", ""} {
		code, out, errOut = invoke(t, answer, "unlock", "--force", name)
		assert.Equal(t, exitFailure, code)
		assert.Contains(t, out, "Delete mutex")
		assert.Contains(t, errOut, "not confirmed")
		require.NoError(t, held.Err())
	}
	code, out, errOut = invoke(t, "y\n", "unlock", name, "--force")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "deleted")
	// The holder learns of it at its next renewal.
	select {
	case <-held.Done():
		assert.ErrorIs(t, context.Cause(held), distsync.ErrLeaseLost)
	case <-time.After(10 * time.Second):
		t.Fatal("the holder's context was not cancelled")
	}
}

func TestBench(t *testing.T) {
	t.Parallel()
	code, out, errOut := invoke(t, "", "bench", "--duration", "200ms", "--workers", "4")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 6, out) // title, blank, header, three scenarios
	for i, name := range []string{"uncontended", "contended", "handoff"} {
		f := strings.Fields(lines[3+i])
		require.Len(t, f, 9, lines[3+i])
		assert.Equal(t, name, f[0])
		assert.NotEqual(t, "0", f[2], "%s made no operation", name)
	}
	assert.Contains(t, errOut, "bench: handoff done")
}

// TestDemoInProcess runs the tour in this (race-detecting) process on a
// server of its own, with a shorter lease; it leaves no fencing counter
// behind (they never lapse by themselves).
func TestDemoInProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the tour takes seconds")
	}
	s := redistest.Start(t)
	code, out, errOut := invoke(t, "", "demo", "--redis", s.Addr(), "--lease", "900ms")
	require.Equal(t, exitOK, code, "%s\n%s", out, errOut)
	for i, s := range demoSteps {
		assert.Contains(t, out, fmt.Sprintf("\n%d. %s\n", i+1, s.title))
	}
	assert.Contains(t, out, "Tour done")
	rc := s.Client(t)
	left, err := rc.Do(context.Background(), rc.B().Keys().Pattern("*fence*").Build()).AsStrSlice()
	require.NoError(t, err)
	assert.Empty(t, left, "fencing counters left behind")
}
