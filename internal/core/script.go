package core

import (
	"context"
	_ "embed"
	"sync"

	"github.com/redis/rueidis"
)

//go:embed lib.lua
var lib string

// Script is one Lua script: the shared library (lib.lua) followed by a body.
// It runs with EVALSHA and falls back to EVAL when the server does not have it.
type Script struct {
	lua  *rueidis.Lua
	src  string
	sha  string
	body string // src without the shared library
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

// run is Exec with the EVALSHA (and the EVAL fallback) marked for the
// auto-pipelined connection when pipe is true.
func (s *Script) run(ctx context.Context, c rueidis.Client, keys, args []string, pipe bool) rueidis.RedisResult {
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
	return r
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
