package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/dstest"
	"github.com/distsync/distsync/internal/redistest"
)

// A conflict exits 1 by default, as flock -n and -w do; -E changes it. As
// flock's, it prints nothing (cron mails nothing), unless -v asks why.
func TestRunConflictExitsOneAsFlock(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	lockIn(t, c, name)

	code, _, errOut := invoke(t, "", "run", "--lock", name, "-n", "--", "true")
	assert.Equal(t, 1, code, errOut)
	assert.Empty(t, errOut, "a conflict is silent, as flock's")
	code, _, errOut = invoke(t, "", "run", "--lock", name, "-w", "0.05", "--", "true")
	assert.Equal(t, 1, code, errOut)
	assert.Empty(t, errOut, "a wait that ran out is silent, as flock's")
	code, _, errOut = invoke(t, "", "run", "--lock", name, "-E", "75", "-n", "--", "true")
	assert.Equal(t, 75, code, errOut)
	assert.Empty(t, errOut)

	code, _, errOut = invoke(t, "", "run", "-v", "--lock", name, "-n", "--", "true")
	assert.Equal(t, 1, code, errOut)
	assert.Equal(t, "distsync run: lock \""+name+"\" not acquired: held by others (--wait 0)\n", errOut)
	code, _, errOut = invoke(t, "", "run", "-v", "--lock", name, "-w", "0.05", "--", "true")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "not acquired within 50ms")
}

// flock's spellings: -x/-e/--exclusive, --nb/--nonblock, --timeout beside
// -w, --verbose beside -v; -u is refused with what to do instead.
func TestRunFlockSpellings(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	lockIn(t, c, name)

	for _, args := range [][]string{{"--nb"}, {"--nonblock"}, {"--timeout", "0"}, {"--timeout", "0.05"}, {"-x", "-n"}, {"--exclusive", "-n"}, {"-e", "-n"}} {
		code, _, errOut := invoke(t, "", append(append([]string{"run", "--lock", name}, args...), "--", "true")...)
		assert.Equal(t, exitNotAcquired, code, "%q: %s", args, errOut)
	}
	code, _, errOut := invoke(t, "", "run", "-v", "--lock", name, "--timeout", "0.05", "--", "true")
	assert.Equal(t, exitNotAcquired, code, errOut)
	assert.Contains(t, errOut, "not acquired within 50ms")

	// -x on a read-write lock is its write side; -s and -x disagree.
	rw := name + "-rw"
	code, out, errOut := invoke(t, "", "run", "--rwlock", rw, "-x", "-n", "--", "sh", "-c", "echo $"+envFencingToken)
	assert.Equal(t, 0, code, errOut)
	assert.Regexp(t, `^[1-9][0-9]*\n$`, out)
	code, _, errOut = invoke(t, "", "run", "--rwlock", rw, "-s", "-x", "--", "true")
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "disagree")

	code, _, errOut = invoke(t, "", "run", "-u", "--lock", name, "--", "true")
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "distsync unlock --force NAME")
	code, _, errOut = invoke(t, "", "run", "--unlock", name, "true")
	assert.Equal(t, exitUsage, code, errOut)

	code, _, errOut = invoke(t, "", "run", "--verbose", "--lock", name+"-free", "--", "true")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, `distsync run: holding lock "`+name+`-free"`)
}

// Bundled one-letter flags, as getopt takes them: -xn is -x -n, -w5 is
// -w 5, -nE 3 is -n -E 3. flock's -o/--close is accepted (COMMAND never
// gets the lock's descriptor); -F/--no-fork is refused in one line. The
// command's own arguments are not read as flags.
func TestRunBundledShortFlags(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)
	lockIn(t, c, name)
	free := name + "-free"

	for _, c := range []struct {
		args []string
		code int
		err  string // stderr, whole
	}{
		{[]string{"-xn", name}, exitNotAcquired, ""},
		{[]string{"-nx", "--lock", name}, exitNotAcquired, ""},
		{[]string{"-w0.05", name}, exitNotAcquired, ""},
		{[]string{"-vw0.05", name}, exitNotAcquired, `distsync run: lock "` + name + `" not acquired within 50ms` + "\n"},
		{[]string{"-nE", "3", name}, 3, ""},
		{[]string{"-nE3", name}, 3, ""},
		{[]string{"-on", name}, exitNotAcquired, ""},
		{[]string{"-w5", free}, 0, ""},
		{[]string{"-o", free}, 0, ""},
		{[]string{"--close", "--lock", free}, 0, ""},
		{[]string{"-xq", free}, exitUsage, "distsync run: flag provided but not defined: -q\nRun 'distsync run --help' for usage.\n"},
	} {
		code, _, errOut := invoke(t, "", append(append([]string{"run"}, c.args...), "true")...)
		assert.Equal(t, c.code, code, "%q: %s", c.args, errOut)
		assert.Equal(t, c.err, errOut, "%q", c.args)
	}

	for _, args := range [][]string{{"-F"}, {"--no-fork"}, {"-xF"}} {
		code, _, errOut := invoke(t, "", append(append([]string{"run"}, args...), free, "true")...)
		assert.Equal(t, exitUsage, code, "%q: %s", args, errOut)
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "%q: one line: %s", args, errOut)
		assert.Contains(t, errOut, "-F/--no-fork", "%q", args)
	}

	code, out, errOut := invoke(t, "", "run", "-x", free, "sh", "-c", `echo "$1 $2"`, "sh", "-xn", "-w5")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "-xn -w5\n", out, "COMMAND's arguments are its own")
	code, out, errOut = invoke(t, "", "run", "-xc", "echo -nE 3", free)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "-nE 3\n", out, "-c's string is its own")
}

// The positional form, flock's: run [flags] NAME [flags] [--] COMMAND holds
// the mutex NAME, the same as --lock NAME.
func TestRunPositionalName(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	name := dstest.Name(t)

	code, out, errOut := invoke(t, "", "run", name, "--", "sh", "-c", "echo $"+envFencingToken)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `^[1-9][0-9]*\n$`, out)
	code, _, errOut = invoke(t, "", "run", name, "sh", "-c", "exit 3")
	assert.Equal(t, 3, code, errOut)
	code, out, errOut = invoke(t, "", "run", name, "-c", "echo via sh; exit 4")
	assert.Equal(t, 4, code, errOut)
	assert.Equal(t, "via sh\n", out)

	lockIn(t, c, name)
	code, _, errOut = invoke(t, "", "run", "-v", "-n", name, "--", "true")
	assert.Equal(t, exitNotAcquired, code, errOut)
	assert.Contains(t, errOut, `lock "`+name+`"`, "NAME is the mutex --lock NAME holds")
	code, _, errOut = invoke(t, "", "run", name, "-w", "0", "--", "true")
	assert.Equal(t, exitNotAcquired, code, "flags after NAME: %s", errOut)

	code, _, errOut = invoke(t, "", "run", name)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "no COMMAND to run")
	code, _, errOut = invoke(t, "", "run", "-s", name, "true")
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "--rwlock NAME")
}

// run --semaphore on a semaphore of another size says so and exits 65,
// instead of holding a permit of the old size.
func TestRunSemaphoreOfAnotherSize(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	s, err := c.PermitSemaphore(dstest.Name(t))
	require.NoError(t, err)
	t.Cleanup(func() { s.Delete(context.Background()) })
	require.NoError(t, s.SetPermits(ctx, 2))

	ran := filepath.Join(t.TempDir(), "ran")
	code, _, errOut := invoke(t, "", "run", "--semaphore", s.Name(), "--permits", "5", "--", "touch", ran)
	assert.Equal(t, exitState, code, errOut)
	assert.Contains(t, errOut, `semaphore "`+s.Name()+`" has 2 permits, not --permits 5`)
	assert.NoFileExists(t, ran)
	n, err := s.Permits(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n, "the size is left as it was")

	code, _, errOut = invoke(t, "", "run", "--semaphore", s.Name(), "--permits", "2", "--", "touch", ran)
	assert.Equal(t, 0, code, errOut)
	assert.FileExists(t, ran)
}

// list shows the names held or waited for, with kind, holders, waiters and
// TTL; --all adds the free ones that store state; --max bounds the scan.
func TestList(t *testing.T) {
	t.Parallel()
	c := dstest.Client(t)
	ctx := context.Background()
	base := dstest.Name(t)

	held := base + "-held"
	lockIn(t, c, held)
	m, err := c.Mutex(held)
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() { _, err := m.Lock(wctx); waited <- err }()
	t.Cleanup(func() { cancel(); <-waited })
	dstest.WaitWaiters(t, c, m.Key()+":waiters", 1)

	rw, err := c.RWLock(base + "-rw")
	require.NoError(t, err)
	r, err := rw.Read().Lock(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { rw.Read().Unlock(r) })

	s, err := c.PermitSemaphore(base + "-sem")
	require.NoError(t, err)
	t.Cleanup(func() { s.Delete(context.Background()) })
	require.NoError(t, s.SetPermits(ctx, 3))
	free, err := c.PermitSemaphore(base + "-free")
	require.NoError(t, err)
	t.Cleanup(func() { free.Delete(context.Background()) })
	require.NoError(t, free.SetPermits(ctx, 1))
	p, err := s.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { s.Release(context.Background(), p) })

	code, out, errOut := invoke(t, "", "list", base+"-*")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 4, out)
	assert.Equal(t, []string{"NAME", "KIND", "HOLDERS", "WAITERS", "TTL"}, strings.Fields(lines[0]))
	assert.Regexp(t, `^`+held+` +mutex +1 +1 +[0-9.]+s$`, lines[1])
	assert.Regexp(t, `^`+base+`-rw +rwlock +1 \(read\) +0 +[0-9.]+s$`, lines[2])
	assert.Regexp(t, `^`+base+`-sem +permitsemaphore +1 +0 +[0-9.]+s$`, lines[3])
	assert.NotContains(t, out, base+"-free", "a free semaphore is neither held nor waited for")

	code, out, errOut = invoke(t, "", "list", "--all", "--json", base+"-*")
	require.Equal(t, exitOK, code, errOut)
	var reports []report
	require.NoError(t, json.Unmarshal([]byte(out), &reports), out)
	var names []string
	for _, r := range reports {
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{base + "-free", held, base + "-rw", base + "-sem"}, names)
	assert.Equal(t, distsync.KindPermitSemaphore, reports[0].Kind)

	code, out, errOut = invoke(t, "", "list", base+"-nothing*")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "nothing held or waited for")

	code, _, errOut = invoke(t, "", "list", "--max", "1", base+"-*")
	require.Equal(t, exitOK, code, errOut)
	if redistest.Shared(t).Real() { // the embedded server's SCAN returns every key at once
		assert.Contains(t, errOut, "stopped after --max 1 keys; more names may exist")
	}

	code, _, errOut = invoke(t, "", "list", "a{b}")
	assert.Equal(t, exitUsage, code, errOut)
}

// list as the README's ACL user: the recipe alone refuses SCAN, and list
// says what to add; with the README's +scan it lists.
func TestListACL(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	redistest.RequireReal(t, s, "ACL users: the embedded server has none")
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(data)
	i := strings.Index(readme, "\nACL SETUSER distsync ")
	require.GreaterOrEqual(t, i, 0, "the README's ACL recipe")
	recipe, _, _ := strings.Cut(readme[i+1:], "\n")
	assert.True(t, strings.Contains(readme, "- `distsync list` scans the keyspace: add `+scan`"), "the README says what list needs")
	admin := s.Client(t)
	ctx := context.Background()
	require.NoError(t, admin.Do(ctx, admin.B().Arbitrary(strings.Fields(recipe)...).Build()).Error())
	c, err := distsync.New(distsync.Options{Addrs: []string{s.Addr()}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	name := dstest.Name(t)
	lockIn(t, c, name)

	env := map[string]string{envRedis: s.Addr(), envPassword: "CHANGE-ME"}
	code, _, errOut := invokeEnv(t, env, "", "list", "--username", "distsync")
	assert.Equal(t, exitFailure, code, errOut)
	assert.Contains(t, errOut, "NOPERM")
	assert.Contains(t, errOut, "the user needs +scan")

	require.NoError(t, admin.Do(ctx, admin.B().Arbitrary("ACL", "SETUSER", "distsync", "+scan").Build()).Error())
	code, out, errOut := invokeEnv(t, env, "", "list", "--username", "distsync")
	assert.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `\n`+name+` +mutex +1 +0 +[0-9.]+s\n$`, out)
}

// On a Cluster, list scans the masters only: rueidis's Nodes include the
// replicas, whose keys are their master's.
func TestListScansClusterMasters(t *testing.T) {
	t.Parallel()
	cl := redistest.StartCluster(t, 1, 1)
	ctx := context.Background()
	c, err := distsync.New(distsync.Options{Addrs: cl.Addrs()})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	name := dstest.Name(t)
	lockIn(t, c, name)
	// CLUSTER SLOTS (Redis 7) names a replica once it reports a replication
	// offset, after a write: wait until a new client sees it among its nodes.
	var rc rueidis.Client
	require.Eventually(t, func() bool {
		if rc != nil {
			rc.Close()
		}
		rc, err = rueidis.NewClient(cl.ClientOption())
		return err == nil && len(rc.Nodes()) == 2
	}, 20*time.Second, 100*time.Millisecond, "the replica among rueidis's nodes")
	t.Cleanup(rc.Close)
	_, addrs := scanTargets(ctx, rc)
	assert.Equal(t, []string{cl.Masters()[0].Addr()}, addrs)

	env := map[string]string{envRedis: strings.Join(cl.Addrs(), ",")}
	code, out, errOut := invokeEnv(t, env, "", "list", name)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `\n`+name+` +mutex +1 +0 +[0-9.]+s\n$`, out)
	// One SCAN of one node, which asks for 1000 keys: the replica, when
	// the command's client has it among its nodes, is not scanned.
	code, out, errOut = invokeEnv(t, env, "", "list", name+"-nothing*")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "(1000 keys scanned)")
}

// --version prints the module version, or a source build's VCS revision
// and date: never "(devel)".
func TestVersionOf(t *testing.T) {
	t.Parallel()
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "4f2a9c1e8d3b77aa"}, {Key: "vcs.time", Value: "2026-11-25T21:30:00Z"}}
	dirty := append(vcs[:2:2], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, c := range []struct {
		what string
		bi   *debug.BuildInfo
		want string
	}{
		{"go install …@v0.1.0", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "v0.1.0"},
		{"a pseudo-version", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261125213000-4f2a9c1e8d3b"}, Settings: vcs}, "v0.0.0-20261125213000-4f2a9c1e8d3b"},
		{"a source build", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "source 4f2a9c1e8d3b 2026-11-25T21:30:00Z"},
		{"a modified tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: dirty}, "source 4f2a9c1e8d3b+dirty 2026-11-25T21:30:00Z"},
	} {
		assert.Equal(t, c.want, versionOf(c.bi, true), c.what)
	}
	noVCS := versionOf(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true)
	assert.NotContains(t, noVCS, "(devel)")
	assert.Contains(t, noVCS, "go run", "says why there is no revision")
	_, out, _ := invoke(t, "", "--version")
	assert.NotContains(t, out, "(devel)")
}

// go run records no version (nor VCS revision), whatever -buildvcs says:
// --version says so, rather than blame -buildvcs=false.
func TestVersionUnderGoRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	t.Parallel()
	cmd := exec.Command("go", "run", ".", "--version")
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=auto")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "go run records none")
}

// Flags before the command get one line saying that they go after it, not
// "unknown command" and the whole usage.
func TestFlagsBeforeCommand(t *testing.T) {
	t.Parallel()
	code, out, errOut := invokeEnv(t, nil, "", "--redis", "127.0.0.1:1", "--password", "secret", "run", "job", "true")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, out)
	assert.Equal(t, "distsync: flags go after the command: distsync run --redis ...\n", errOut, "no flag's value, such as the password")

	code, _, errOut = invokeEnv(t, nil, "", "-n", "job", "true")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "distsync: flags go after the command (\"-n\" is not one); run 'distsync help' for the commands\n", errOut)
}

// help COMMAND prints that command's usage, for every command.
func TestHelpCommand(t *testing.T) {
	t.Parallel()
	for _, cmd := range commands {
		code, out, errOut := invokeEnv(t, nil, "", "help", cmd.name)
		assert.Equal(t, exitOK, code, "%s: %s", cmd.name, errOut)
		_, want, _ := invokeEnv(t, nil, "", cmd.name, "--help")
		assert.Equal(t, want, out, cmd.name)
		assert.True(t, strings.HasPrefix(out, "Usage: distsync "+cmd.name), "%s: %q", cmd.name, out)
	}
	code, _, errOut := invokeEnv(t, nil, "", "help", "nosuch")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown command "nosuch"`)
}
