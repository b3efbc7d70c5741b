package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// The fallback is not used on machines with redis-server, so test it directly.
func TestMiniFallback(t *testing.T) {
	t.Parallel()
	s, err := startMini()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if s.Real() || !s.RESP2() || s.Kind() != miniKind || s.Pid() != 0 || !s.Running() {
		t.Fatalf("Real %v RESP2 %v Kind %q Pid %d Running %v", s.Real(), s.RESP2(), s.Kind(), s.Pid(), s.Running())
	}
	opt := s.ClientOption()
	if !opt.AlwaysRESP2 || !opt.DisableCache || !opt.ForceSingleClient {
		t.Fatalf("ClientOption %+v", opt)
	}
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()

	// TIME follows the wall clock.
	tm, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
	if err != nil || len(tm) != 2 {
		t.Fatalf("TIME: %v %v", tm, err)
	}
	sec, _ := strconv.ParseInt(tm[0], 10, 64)
	if d := time.Since(time.Unix(sec, 0)); d < -2*time.Second || d > 2*time.Second {
		t.Fatalf("TIME is %v off", d)
	}

	// Keys expire in real time.
	if err := c.Do(ctx, c.B().Set().Key("k").Value("v").Px(50*time.Millisecond).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		err := c.Do(ctx, c.B().Get().Key("k").Build()).Error()
		if rueidis.IsRedisNil(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 2*time.Second {
			t.Fatal("key with PX 50 still there after 2s")
		}
		time.Sleep(10 * time.Millisecond) // waiting for real time to pass
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("key with PX 50 expired after %v", d)
	}

	// Scripts see real time too.
	tm, err = c.Do(ctx, c.B().Eval().Script("return redis.call('TIME')").Numkeys(0).Build()).AsStrSlice()
	if err != nil || len(tm) != 2 {
		t.Fatalf("EVAL TIME: %v %v", tm, err)
	}
	sec, _ = strconv.ParseInt(tm[0], 10, 64)
	if d := time.Since(time.Unix(sec, 0)); d < -2*time.Second || d > 2*time.Second {
		t.Fatalf("TIME in a script is %v off", d)
	}

	s.Stop()
	s.Stop()
	if s.Running() {
		t.Fatal("Running after Stop")
	}
	if err := c.Do(ctx, c.B().Ping().Build()).Error(); err == nil {
		t.Fatal("PING answered after Stop")
	}
}

// ServerEnv chooses the server: "none" the fallback even where redis-server
// is installed, a path that binary. The choice is made once per test binary,
// so each case runs in a child process of this one.
func TestServerEnv(t *testing.T) {
	if os.Getenv("REDISTEST_CHILD") == "1" {
		fmt.Printf("kind=%s\n", Start(t).Kind())
		return
	}
	t.Parallel()
	cases := map[string]string{"none": miniKind}
	if bin := redisBinary(); bin != "" {
		cases[bin] = "(" + bin + ")"
	}
	for env, want := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestServerEnv$", "-test.count=1")
		cmd.Env = append(os.Environ(), "REDISTEST_CHILD=1", ServerEnv+"="+env, RequireEnv+"=", ReportEnv+"=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s=%s: %v\n%s", ServerEnv, env, err, out)
		}
		if !strings.Contains(string(out), "kind=") || !strings.Contains(string(out), want) {
			t.Errorf("%s=%s: want a server of kind %q, got:\n%s", ServerEnv, env, want, out)
		}
	}
}

// Redis does not expire keys while a script runs: every command of a script
// sees the instant the script started (a key it read is still there when it
// writes it). The distsync scripts rely on it: a mutex waiter that saw the
// lock held must still find it there for PTTL, or it registers against a
// lock that has gone (and marks a hash that then never expires). The
// fallback must do the same; the real server shows that it is Redis's way.
func TestKeysDoNotExpireWithinAScript(t *testing.T) {
	t.Parallel()
	servers := map[string]func(t *testing.T) *Server{"fallback": func(t *testing.T) *Server {
		s, err := startMini()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		return s
	}}
	if redisBinary() != "" {
		servers["redis-server"] = func(t *testing.T) *Server { return Start(t) }
	}
	for name, start := range servers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := start(t).Client(t)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			// A key with a 1 ms lease, then a spin far longer than that (a
			// loop in Lua: the script cannot sleep), then what the script
			// sees of the key.
			const script = `
redis.call('SET', KEYS[1], 'v', 'PX', 1)
local i = 0
while i < tonumber(ARGV[1]) do i = i + 1 end
return {redis.call('EXISTS', KEYS[1]), redis.call('PTTL', KEYS[1])}`
			// Spins until one took 20 times the lease by the wall clock (the
			// round trip bounds the script's run from above only: the
			// spin is made longer until the round trip is long enough).
			for n := 100_000; ; n *= 4 {
				if n > 1_000_000_000 {
					t.Fatal("no spin took 20 ms")
				}
				start := time.Now()
				got, err := c.Do(ctx, c.B().Eval().Script(script).Numkeys(1).Key("k").Arg(strconv.Itoa(n)).Build()).AsIntSlice()
				took := time.Since(start)
				if err != nil {
					t.Fatal(err)
				}
				if took < 20*time.Millisecond {
					continue
				}
				if got[0] != 1 || got[1] < 0 || got[1] > 1 {
					t.Fatalf("after a spin of %v in the script, the key with PX 1 it set: EXISTS %d, PTTL %d; want 1, 0 or 1", took, got[0], got[1])
				}
				break
			}
			// After the script, the time the spin took has passed.
			n, err := c.Do(ctx, c.B().Exists().Key("k").Build()).AsInt64()
			if err != nil || n != 0 {
				t.Fatalf("EXISTS after the script: %d %v; want 0", n, err)
			}
		})
	}
}
