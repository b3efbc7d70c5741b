package dstest

import (
	"context"
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
	Then  func()        // Hook: what runs between the apply and the reply
	Times int           // how many matching commands it hits (0: every one)

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
	return f.inject(ctx, r, func() rueidis.RedisResult { return f.Client.Do(ctx, cmd) })
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
	var res []rueidis.RedisResult
	one := f.inject(ctx, r, func() rueidis.RedisResult {
		res = f.Client.DoMulti(ctx, cmds...)
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

func (f *Faulty) inject(ctx context.Context, r *Rule, send func() rueidis.RedisResult) rueidis.RedisResult {
	switch r.Fault {
	case LoseRequest:
		return rueidis.NewErrorResult(ErrInjected)
	case LoseReply:
		send()
		return rueidis.NewErrorResult(ErrInjected)
	case LateReply:
		res := send()
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
		r.Then()
		return res
	}
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
