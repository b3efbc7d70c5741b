package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		// A worker: this test binary is its executable.
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	redistest.Main(m)
}

// runStory runs the program with args and checks the story: the killed
// leader's successor leads within the lease, the interrupted one hands over
// by resigning, and no two leaderships overlapped (the program checks the
// workers' windows and exits 1 otherwise).
func runStory(t *testing.T, args ...string) {
	t.Helper()
	var out dstest.SyncBuffer
	code := run(args, &out, &out)
	text := out.String()
	t.Log("\n" + text)
	assert.Equal(t, 0, code)
	assert.Contains(t, text, "(SIGKILL): it will not resign")
	// The successor leads once the killed leader's lease has run out on the
	// server: after up to a lease (less the time since its last renewal),
	// and a little more, never "within" it for sure.
	assert.Regexp(t, `handed over in [0-9.]+m?s, once the killed leader's lease of 1s had run out`, text)
	assert.NotContains(t, text, "within its lease")
	assert.Contains(t, text, "observer: nobody leads")
	assert.Contains(t, text, "one at a time")
	assert.Equal(t, 3, strings.Count(text, ": I lead, term "), "three leaderships")
}

func TestProcessesOnRealRedis(t *testing.T) {
	t.Parallel()
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, "the -redis run; TestDefaultInProcessServer runs the story on the embedded server")
	runStory(t, "-redis", s.Addr())
}

func TestDefaultInProcessServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: the story takes seconds (TestProcessesOnRealRedis runs it once)")
	}
	runStory(t)
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	assert.Equal(t, 2, run([]string{"-workers", "1"}, &out, &out))
	assert.Equal(t, 2, run([]string{"-nosuchflag"}, &out, &out))
}
