package redistest

import (
	"context"
	"strconv"
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
