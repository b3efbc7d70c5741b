package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		// A car of TestMultiProcess: this test binary is its executable.
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	redistest.Main(m)
}

// runLotTest runs the program with args and checks the story. It keeps the
// default lease (2 s) and stays: a shorter lease can really be lost on a
// loaded machine, where the in-process server, interpreting every script
// under the race detector, may stall for most of a second.
func runLotTest(t *testing.T, args ...string) {
	t.Helper()
	var out dstest.SyncBuffer
	code := run(args, &out, &out)
	t.Log("\n" + out.String())
	assert.Equal(t, 0, code)
	text := out.String()
	assert.Equal(t, 12, strings.Count(text, " parks in space "), "every car parked")
	assert.Contains(t, text, "car  1 is killed")
	assert.Contains(t, text, "car  1's space is free again")
	assert.Contains(t, text, "12 cars parked, at most 3 at once in 3 spaces.")
	assert.NotContains(t, text, "FAILED")
	assert.NotContains(t, text, "every space is taken")
}

func TestGoroutinesOnRealRedis(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "the -redis run; TestDefaultInProcessServer runs the lot on the embedded server")
	runLotTest(t, "-redis", s.Addr())
}

func TestProcessesOnRealRedis(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the lot takes seconds (TestGoroutinesOnRealRedis runs it once)")
	}
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "the -redis run; TestDefaultInProcessServer runs the lot on the embedded server")
	runLotTest(t, "-redis", s.Addr(), "-multi")
}

func TestDefaultInProcessServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the lot takes seconds (TestGoroutinesOnRealRedis runs it once)")
	}
	runLotTest(t)
}

func TestTooManyParkedFails(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	tl := newTimeline(&out, 2, 4)
	at := func(ms int) time.Time { return tl.start.Add(time.Duration(ms) * time.Millisecond) }
	for _, e := range []event{
		{at: at(0), car: 1, kind: "park"},
		{at: at(10), car: 2, kind: "park"},
		{at: at(20), car: 1, kind: "doomed", until: at(500)},
		{at: at(30), car: 1, kind: "killed"},
		{at: at(100), car: 2, kind: "leave"},
		{at: at(110), car: 3, kind: "park"},
		// Car 1's lease has not ended yet: a third car in two spaces.
		{at: at(200), car: 4, kind: "park"},
	} {
		tl.handle(e)
	}
	err := tl.summary(2)
	assert.ErrorContains(t, err, "3 cars were parked at once")
	assert.Contains(t, out.String(), "car  1's space is free again", "the timeline shows the space given away")
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	assert.Equal(t, 2, run([]string{"-spaces", "0"}, &out, &out))
	assert.Equal(t, 2, run([]string{"-nosuchflag"}, &out, &out))
}
