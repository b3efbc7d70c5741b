package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/dstest"
)

func init() {
	binaryTests = append(binaryTests, []struct {
		name string
		test func(e *binEnv, t *testing.T)
	}{
		{"BadArgumentsExit64", (*binEnv).testBadArguments},
		{"DurationsTakeBareSeconds", (*binEnv).testBareSeconds},
		{"CannotExecuteSaysWhy", (*binEnv).testCannotExecute},
	}...)
}

// testBadArguments: a bad argument is exit code 64 in every command,
// whether distsync sees it at once or the server shows it (a database the
// server does not have); a NAME that holds another kind of primitive, or
// keys no primitive makes, is a state error, 65.
func (e *binEnv) testBadArguments(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	base := dstest.Name(t)
	sem, err := c.PermitSemaphore(base + "-sem")
	require.NoError(t, err)
	t.Cleanup(func() { sem.Delete(context.Background()) })
	_, err = sem.TrySetPermits(ctx, 2)
	require.NoError(t, err)
	p, err := sem.TryAcquire(ctx, 0, 0)
	require.NoError(t, err)
	t.Cleanup(func() { sem.Release(context.Background(), p) })
	mutex := base + "-mutex"
	lockIn(t, c, mutex)
	str := base + "-str"
	rc := e.s.Client(t)
	require.NoError(t, rc.Do(ctx, rc.B().Set().Key("distsync:{"+str+"}").Value("x").Build()).Error())
	t.Cleanup(func() { rc.Do(context.Background(), rc.B().Del().Key("distsync:{"+str+"}").Build()) })

	for _, c := range []struct {
		args  []string
		want  string // in the message
		state bool   // 65, not 64
	}{
		{[]string{"bench", "--workers", "9007199254740993"}, "--workers 9007199254740993: give 2 to 10000", false},
		{[]string{"bench", "--workers", "10001"}, "give 2 to 10000", false},
		{[]string{"bench", "--scenarios", ""}, "--scenarios names no scenario", false},
		{[]string{"bench", "--scenarios", " , "}, "--scenarios names no scenario", false},
		{[]string{"run", "--lock", base, "--lease", "3ms", "--", "true"}, "--lease 3ms is too short: at least 100ms", false},
		{[]string{"run", "--lock", base, "--lease", "0.099", "--", "true"}, "at least 100ms", false},
		{[]string{"inspect", "--db", "99999", base}, "database 99999: " + e.s.Addr() + " has no such database (DB index is out of range)", false},
		{[]string{"inspect", "--db", "4294967296", base}, "database 4294967296: a database is numbered 0 to", false},
		{[]string{"run", "--db", "99999", "--lock", base, "--", "true"}, "has no such database", false},
		{[]string{"run", "--lock", sem.Name(), "--", "true"}, "holds a permitsemaphore, not a mutex", true},
		{[]string{"inspect", "--kind", "mutex", sem.Name()}, "holds a permitsemaphore, not a mutex", true},
		{[]string{"unlock", "--force", "--yes", "--kind", "mutex", sem.Name()}, "holds a permitsemaphore, not a mutex", true},
		{[]string{"unlock", "--force", "--yes", sem.Name()}, "is a permitsemaphore, which has no holds to delete", true},
		{[]string{"delete", "--yes", "--kind", "latch", sem.Name()}, "holds a permitsemaphore, not a latch", true},
		{[]string{"delete", "--yes", mutex}, "delete takes a semaphore or a latch", true},
		{[]string{"inspect", str}, "the name is used by another kind of primitive: distsync:{" + str + "} is a string that fits no known kind", true},
		{[]string{"run", "--lock", str, "--", "true"}, "is a string that fits no known kind", true},
		{[]string{"delete", "--yes", str}, "is a string that fits no known kind", true},
	} {
		if strings.Contains(c.want, "has no such database") && !e.s.Real() {
			t.Logf("%q: not run, the embedded server has every database", c.args)
			continue
		}
		var stderr bytes.Buffer
		cmd := e.command(c.args[0], c.args[1:]...)
		cmd.Stderr = &stderr
		want := exitUsage
		if c.state {
			want = exitState
		}
		assert.Equal(t, want, exitCodeOf(t, cmd.Run()), "%q: %s", c.args, stderr.String())
		assert.Contains(t, stderr.String(), c.want, "%q", c.args)
		// One prefix: not the library's "distsync: ", nor the command again.
		msg, ok := strings.CutPrefix(stderr.String(), "distsync "+c.args[0]+": ")
		assert.True(t, ok, "%q: %s", c.args, stderr.String())
		assert.NotContains(t, msg, "distsync: ", "%q", c.args)
		assert.False(t, strings.HasPrefix(msg, c.args[0]+" "), "%q: %s", c.args, msg)
	}
	// Nothing was deleted on the way.
	n, err := sem.Available(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
}

// testBareSeconds: bench --duration and demo --lease take bare seconds, as
// run's durations do.
func (e *binEnv) testBareSeconds(t *testing.T) {
	t.Parallel()
	out, err := e.command("bench", "--duration", "0.2", "--scenarios", "uncontended").Output()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "200ms a scenario")

	// demo checks its flags before it starts its server: a --lease too short
	// for the tour says what it understood.
	var stderr bytes.Buffer
	cmd := e.command("demo", "--lease", "0.02")
	cmd.Stderr = &stderr
	assert.Equal(t, exitUsage, exitCodeOf(t, cmd.Run()))
	assert.Contains(t, stderr.String(), "--lease 20ms is too short")
}

// testCannotExecute: an executable file that is neither a program nor a
// script with #! is 126, with the reason and the name as given.
func (e *binEnv) testCannotExecute(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "badexec"), []byte("echo no shebang\n"), 0o755))
	cmd := e.command("run", "--lock", dstest.Name(t), "--", "./badexec")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	assert.Equal(t, exitCannotExec, exitCodeOf(t, cmd.Run()))
	assert.Equal(t, "distsync run: ./badexec: cannot execute: exec format error\n", stderr.String())
}
