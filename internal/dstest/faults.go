package dstest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync/internal/core"
)

// Fault is what Faulty does to a command a rule matches.
type Fault int

const (
	// LoseRequest fails the call as a dropped connection would, without
	// sending the command: the server never sees it.
	LoseRequest Fault = iota
	// LoseReply sends the command, which the server applies, and fails the
	// call as a dropped connection would: the reply is lost.
	LoseReply
	// LateReply sends the command and holds its reply back for the rule's
	// Delay, or until the call's context ends, which then fails the call:
	// a reply that comes after its deadline.
	LateReply
	// Hook sends the command and runs the rule's Then after the server
	// applied it and before the reply is returned (for instance Close of
	// the Client, so the reply arrives during Close).
	Hook
)

// ErrInjected is the failure Faulty returns for a lost request or reply: a
// network error, as a dropped connection gives.
var ErrInjected error = injected{}

type injected struct{}

func (injected) Error() string   { return "dstest: injected connection failure" }
func (injected) Timeout() bool   { return false }
func (injected) Temporary() bool { return true }

// Rule is one injected fault: which commands it hits, how, how many times.
type Rule struct {
	Match func(cmd []string) bool
	Fault Fault
	Delay time.Duration // LateReply: how long the reply is held back
	Times int           // how many matching commands it hits (0: every one)
	// Then runs after the server applied the command and before the reply
	// is returned, lost or held back (with LoseRequest: when the request is
	// dropped). Hook needs it; with the other faults it may check what the
	// command did on the server.
	Then func()

	mu   sync.Mutex
	hits int
	hit  chan struct{} // closed at the first hit
}

// Hits returns how many commands the rule has hit.
func (r *Rule) Hits() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits
}

// Hit is closed when the rule hits its first command.
func (r *Rule) Hit() <-chan struct{} { return r.hit }

func (r *Rule) take(cmd []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if (r.Times > 0 && r.hits >= r.Times) || !r.Match(cmd) {
		return false
	}
	r.hits++
	if r.hits == 1 {
		close(r.hit)
	}
	return true
}

// Faulty is a rueidis client, for distsync.FromClient, that injects faults
// into the commands sent through Do and DoMulti (scripts, and the
// watchdog's renewals): the fault-injection layer of the tests. Commands no
// rule matches pass through.
type Faulty struct {
	rueidis.Client
	mu    sync.Mutex
	rules []*Rule
}

// NewFaulty wraps c.
func NewFaulty(c rueidis.Client) *Faulty { return &Faulty{Client: c} }

// Inject adds r (first match wins among rules) and returns it.
func (f *Faulty) Inject(r *Rule) *Rule {
	r.hit = make(chan struct{})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, r)
	return r
}

// Clear removes every rule.
func (f *Faulty) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

func (f *Faulty) rule(cmd rueidis.Completed) *Rule {
	f.mu.Lock()
	rules := f.rules
	f.mu.Unlock()
	if len(rules) == 0 {
		return nil
	}
	args := cmd.Commands()
	for _, r := range rules {
		if r.take(args) {
			return r
		}
	}
	return nil
}

// Do sends cmd, or injects the fault of the first rule that matches it.
func (f *Faulty) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	r := f.rule(cmd)
	if r == nil {
		return f.Client.Do(ctx, cmd)
	}
	e := evalOf(cmd)
	return f.inject(ctx, r, func() rueidis.RedisResult {
		res := f.Client.Do(ctx, cmd)
		if e != nil && core.IsNoScript(res.Error()) {
			res = f.Client.Do(ctx, e.build(f.Client))
		}
		return res
	})
}

// DoMulti sends cmds; a rule that matches one of them hits the whole batch.
func (f *Faulty) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	var r *Rule
	for _, c := range cmds {
		if r = f.rule(c); r != nil {
			break
		}
	}
	if r == nil {
		return f.Client.DoMulti(ctx, cmds...)
	}
	evals := make([]*evalCmd, len(cmds))
	for i, c := range cmds {
		evals[i] = evalOf(c)
	}
	var res []rueidis.RedisResult
	one := f.inject(ctx, r, func() rueidis.RedisResult {
		res = f.Client.DoMulti(ctx, cmds...)
		for i, e := range evals {
			if e != nil && core.IsNoScript(res[i].Error()) {
				res[i] = f.Client.Do(ctx, e.build(f.Client))
			}
		}
		return rueidis.RedisResult{}
	})
	if err := one.Error(); err != nil || res == nil {
		out := make([]rueidis.RedisResult, len(cmds))
		for i := range out {
			out[i] = one
		}
		return out
	}
	return res
}

// inject applies r's fault to a command that send sends. A script command
// the fault lets through is applied whether or not the server has the
// script cached: send resends an EVALSHA answered NOSCRIPT as EVAL, as the
// library's own fallback would have had the fault not taken the reply. So
// LoseReply, LateReply and Hook always hit a command the server ran, on a
// fresh server as on one that earlier tests warmed. (Loading the library's
// scripts when Faulty is made would not do: a restart or SCRIPT FLUSH, or a
// Cluster node that joins later, empties the cache again.)
func (f *Faulty) inject(ctx context.Context, r *Rule, send func() rueidis.RedisResult) rueidis.RedisResult {
	then := func() {
		if r.Then != nil {
			r.Then()
		}
	}
	switch r.Fault {
	case LoseRequest:
		then()
		return rueidis.NewErrorResult(ErrInjected)
	case LoseReply:
		send()
		then()
		return rueidis.NewErrorResult(ErrInjected)
	case LateReply:
		res := send()
		then()
		t := time.NewTimer(r.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			return res
		case <-ctx.Done():
			return rueidis.NewErrorResult(ctx.Err())
		}
	default:
		res := send()
		then()
		return res
	}
}

// evalCmd is an EVALSHA of one of the library's scripts, taken apart so
// that it can be sent again as EVAL (rueidis recycles a command once sent).
type evalCmd struct {
	script     *core.Script
	keys, args []string
	pipe       bool
}

// evalOf takes cmd apart if it is an EVALSHA of a known script, else nil.
func evalOf(cmd rueidis.Completed) *evalCmd {
	c := cmd.Commands()
	if len(c) < 3 || !strings.EqualFold(c[0], "EVALSHA") {
		return nil
	}
	s := core.ScriptBySHA(c[1])
	n, err := strconv.Atoi(c[2])
	if s == nil || err != nil || n < 0 || 3+n > len(c) {
		return nil
	}
	return &evalCmd{
		script: s,
		keys:   slices.Clone(c[3 : 3+n]),
		args:   slices.Clone(c[3+n:]),
		pipe:   cmd.IsPipe(),
	}
}

// build returns the EVAL carrying the script's source.
func (e *evalCmd) build(c rueidis.CommandClient) rueidis.Completed {
	cmd := e.script.Eval(c, e.keys, e.args)
	if e.pipe {
		cmd = cmd.ToPipe()
	}
	return cmd
}

// Script matches a script command (EVALSHA or EVAL) whose body contains
// text, such as the first words of its comment.
func Script(text string) func(cmd []string) bool {
	return func(cmd []string) bool {
		if len(cmd) < 2 {
			return false
		}
		switch strings.ToUpper(cmd[0]) {
		case "EVALSHA":
			return strings.Contains(core.ScriptBody(cmd[1]), text)
		case "EVAL":
			return strings.Contains(cmd[1], text)
		}
		return false
	}
}
