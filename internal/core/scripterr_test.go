package core

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/redistest"
)

// leak matches what only a script's author could read: a SHA, Redis's
// "@user_script" position, a Lua line or a traceback.
var leak = regexp.MustCompile(`[0-9a-f]{40}|user_script|traceback|\.lua:\d|:\d+:`)

// Every error reply a script can give reaches the caller in the caller's
// words: a foreign kind or type wraps ErrWrongKind, and no message carries
// the script's SHA, line or traceback, while the server's reply stays
// reachable with RedisErr.
func TestScriptErrorsSpeakGo(t *testing.T) {
	s := redistest.Shared(t)
	redistest.RequireReal(t, s, redistest.ErrorTables)
	c, rc := testCore(t, s)
	ctx := context.Background()
	key := "scripterr:{" + t.Name() + "}"
	if err := rc.Do(ctx, rc.B().Set().Key(key).Value("x").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	defer rc.Do(ctx, rc.B().Del().Key(key).Build())
	for _, tc := range []struct {
		name, body string
		kind       bool
	}{
		{"wrongkind", `redis.call('DEL', KEYS[1]); redis.call('HSET', KEYS[1], '#k', 'latch'); ds_kind(KEYS[1], 'mutex')`, true},
		{"wrongtype", `return redis.call('HGET', KEYS[1], 'f')`, true},
		{"lua error", `error('boom')`, false},
		{"error table", `return redis.error_reply('ERR boom')`, false},
		{"runtime", `local x = nil; return x.y`, false},
		{"unknown command", `return redis.call('NOSUCHCOMMAND')`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.kind {
				rc.Do(ctx, rc.B().Set().Key(key).Value("x").Build())
			}
			err := c.Eval(ctx, NewScript(tc.body), []string{key}, nil).Error()
			if err == nil {
				t.Fatal("no error")
			}
			if leak.MatchString(err.Error()) {
				t.Errorf("error speaks Lua: %q", err)
			}
			if errors.Is(err, ErrWrongKind) != tc.kind {
				t.Errorf("errors.Is(%q, ErrWrongKind) = %v, want %v", err, !tc.kind, tc.kind)
			}
			if !tc.kind && RedisErr(err) == nil {
				t.Errorf("the server's reply is lost: %q", err)
			}
			t.Logf("%s: %v", tc.name, err)
		})
	}
}

// testCore is a Core on a rueidis client of s, closed when the test ends.
func testCore(t *testing.T, s *redistest.Server) (*Core, rueidis.Client) {
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr()}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	return &Core{Config: Config{Client: rc}}, rc
}
