package core

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/redis/rueidis"
)

//go:generate go run ./luagen ../..

//go:embed lib.lua
var lib string

// FastLib is the few helpers (fast.lua, generated from fast.in.lua) a
// common case placed before the shared library may use: prepend it to
// NewFastScript's fast part.
//
//go:embed fast.lua
var FastLib string

// Script is one Lua script: the shared library (lib.lua) followed by a body.
// It runs with EVALSHA and falls back to EVAL when the server does not have it.
type Script struct {
	lua  *rueidis.Lua
	src  string
	sha  string
	body string // src without the shared library

	kindOnce sync.Once
	kind     *Script // the script preceded by a check of the kind (EvalKind)
}

// NewScript returns the script made of the shared library and body.
func NewScript(body string) *Script {
	return newScript("", body)
}

// NewFastScript returns the script made of fast, the shared library and
// body: fast runs before any helper is defined, so a run that returns in it
// (the common case of a primitive) pays nothing for them; one that does not
// goes on to body, which has them.
func NewFastScript(fast, body string) *Script { return newScript(fast, body) }

func newScript(fast, body string) *Script {
	src := fast + lib + body
	s := &Script{lua: rueidis.NewLuaScript(src), src: src, sha: shaOf(src), body: fast + body}
	scripts.Store(s.sha, s)
	return s
}

// scripts maps the SHA of every script to the script, for ScriptBySHA.
var scripts sync.Map

// kindCheck refuses, before the body runs, a primitive of another kind at
// the last key (its hash), whose marker ('#k') must be the last argument or
// absent; a key of another type fails by itself with WRONGTYPE.
const kindCheck = `local ds_k = redis.call('HGET', KEYS[#KEYS], '#k')
if ds_k and ds_k ~= ARGV[#ARGV] then
  return redis.error_reply('WRONGKIND ' .. ds_k .. ' ' .. ARGV[#ARGV] .. ' ' .. KEYS[#KEYS])
end
`

// kinded returns s preceded by kindCheck, which needs no helper of the
// library: it runs first.
func (s *Script) kinded() *Script {
	s.kindOnce.Do(func() { s.kind = newScript(kindCheck, s.body) })
	return s.kind
}

// ScriptBySHA returns the script whose SHA is sha, or nil: tests use it to
// recognise scripts on the wire and to resend an EVALSHA as EVAL.
func ScriptBySHA(sha string) *Script {
	v, _ := scripts.Load(sha)
	s, _ := v.(*Script)
	return s
}

// ScriptBody returns the body (without the shared library) of the script
// whose SHA is sha, or "".
func ScriptBody(sha string) string {
	if s := ScriptBySHA(sha); s != nil {
		return s.body
	}
	return ""
}

// Exec runs the script once: one round trip when the server has it cached.
func (s *Script) Exec(ctx context.Context, c rueidis.Client, keys, args []string) rueidis.RedisResult {
	return s.lua.Exec(ctx, c, keys, args)
}

// run runs the script on co's connection, as Exec does: EVALSHA, then
// EVAL when the server does not have it. While other scripts of co are
// running (co.inflight) it marks them for the auto-pipelined connection.
// An error reply comes back translated (scriptErr).
func (s *Script) run(ctx context.Context, co *Core, keys, args []string) rueidis.RedisResult {
	pipe := co.inflight.Add(1) > 1
	defer co.inflight.Add(-1)
	c := co.Client
	mark := func(cmd rueidis.Completed) rueidis.Completed {
		if pipe {
			return cmd.ToPipe()
		}
		return cmd
	}
	r := c.Do(ctx, mark(s.EvalSHA(c, keys, args)))
	if IsNoScript(r.Error()) {
		r = c.Do(ctx, mark(s.Eval(c, keys, args)))
	}
	return scriptResult(r)
}

// EvalSHA builds the EVALSHA command, for pipelines (DoMulti).
func (s *Script) EvalSHA(c rueidis.CommandClient, keys, args []string) rueidis.Completed {
	return c.B().Evalsha().Sha1(s.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
}

// Eval builds the EVAL command carrying the source, the fallback for NOSCRIPT.
func (s *Script) Eval(c rueidis.CommandClient, keys, args []string) rueidis.Completed {
	return c.B().Eval().Script(s.src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
}

// IsNoScript reports whether err is the server's NOSCRIPT error.
func IsNoScript(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && re.IsNoScript()
}

// Load caches the script on every node of c (SCRIPT LOAD), so EVALSHA finds it.
func (s *Script) Load(ctx context.Context, c rueidis.Client) error {
	for _, n := range c.Nodes() {
		if err := n.Do(ctx, n.B().ScriptLoad().Script(s.src).Build()).Error(); err != nil {
			return err
		}
	}
	return nil
}

// ScriptErr is a server's error reply to a script, in the caller's words:
// the script's SHA, its "@user_script" line, Lua's positions and any
// traceback are left out of the message. Unwrap returns the server's reply
// as rueidis gave it.
type ScriptErr struct {
	msg string
	re  *rueidis.RedisError
}

func (e *ScriptErr) Error() string { return e.msg }
func (e *ScriptErr) Unwrap() error { return e.re }

// RedisErr returns the server's error reply in err, through a ScriptErr, or
// nil when err is none.
func RedisErr(err error) *rueidis.RedisError {
	if re, ok := rueidis.IsRedisErr(err); ok {
		return re
	}
	var se *ScriptErr
	if errors.As(err, &se) {
		return se.re
	}
	return nil
}

var (
	// " script: <sha>, on @user_script:<line>." that Redis 7 appends to a
	// script's error.
	scriptSuffix = regexp.MustCompile(`\s*script: [0-9a-f]{40}, on @user_script:\d+\.?\s*$`)
	// "Error running script (call to f_<sha>): " and "@user_script:<line>: "
	// or "user_script:<line>: " of Lua's runtime errors (Redis 6 and 7).
	scriptNoise = regexp.MustCompile(`Error running script \(call to f_[0-9a-f]{40}\):\s*|@?user_script:\d+:\s*|\s*script: [0-9a-f]{40}.*$`)
)

// scriptErr translates err, the outcome of a script, for callers: a key of
// another kind (the scripts' WRONGKIND) or of another Redis type
// (WRONGTYPE) becomes an error wrapping ErrWrongKind, and any other error
// reply loses what only the script's author could read (see ScriptErr).
// Errors that are not the server's replies are returned as they are.
func scriptErr(err error) error {
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		return err
	}
	msg := re.Error()
	if i := strings.Index(msg, "\nstack traceback:"); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSpace(scriptNoise.ReplaceAllString(scriptSuffix.ReplaceAllString(msg, ""), ""))
	switch {
	case strings.HasPrefix(msg, "WRONGKIND "):
		// "WRONGKIND <kind found> <kind wanted> <key>" (ds_kind); a kind is one word.
		if f := strings.SplitN(strings.TrimPrefix(msg, "WRONGKIND "), " ", 3); len(f) == 3 {
			return WrongKind(f[2], f[0], f[1])
		}
		return fmt.Errorf("%w: %s", ErrWrongKind, strings.TrimPrefix(msg, "WRONGKIND "))
	case strings.HasPrefix(msg, "WRONGTYPE"):
		return fmt.Errorf("%w: a key of the name is not a distsync primitive (it holds another Redis type)", ErrWrongKind)
	case msg == re.Error():
		return err
	}
	return &ScriptErr{msg: "redis: " + msg, re: re}
}

// ScriptError is scriptErr for a script's outcome that did not come through
// Eval (the watchdog's pipelined renewals).
func ScriptError(err error) error { return scriptErr(err) }

// scriptResult is r with its error translated by scriptErr.
func scriptResult(r rueidis.RedisResult) rueidis.RedisResult {
	if err := r.Error(); err != nil {
		if t := scriptErr(err); t != err {
			return rueidis.NewErrorResult(t)
		}
	}
	return r
}
