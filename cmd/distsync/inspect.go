package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/distsync/distsync"
	"github.com/distsync/distsync/internal/core"
)

const inspectUsage = `Usage: distsync inspect [--json] [--kind K] NAME

Shows what holds the primitive NAME, as distsync.Client.Inspect reads it:
its kind (the one it stores), the owners and their hold counts, the
remaining lease, the fencing token and the registered waiters. Owners are
"<client id>:<owner id>"; the client id is "<client name>/<random id>"
(distsync.Client.ID; the name is Options.ClientName, by default the host
name and pid).

A NAME with nothing stored is reported free ("kind" empty in JSON). With
--kind K, inspect fails unless NAME is free or a K, one of:
` + "%s" + `.

An election shows its leader (its owner, the value it announced, its term
and since when it leads) and its candidates in queue order.

JSON fields: name, kind, key, held, ttl_ms (remaining lease; -1 no expiry),
fencing_token (an election's term), owners [{id, client, holds, mode,
fencing_token, ttl_ms}], waiters [{id, mode, window_ms}] (an election's
candidates) and, where the kind has them, mode, permits {available, held},
count and leader {value, term, since}.
`

const unlockUsage = `Usage: distsync unlock --force [--yes] [--kind K] NAME

Deletes the lock NAME whoever holds it and wakes its waiters: for a lock left
by a process that cannot release it. The holder's context ends at once, told
by push on its Client's control channel (at its next renewal where push
cannot reach it): a "distsync run" holder stops its command and exits 70. On
an election, deposes the leader (ForceResign): the head candidate leads, and
the deposed leader's context ends at once (push).
Shows the holders and asks for confirmation unless --yes; --force is
required.
`

// kind is a primitive inspect, unlock and delete know, by the name
// distsync.Info.Kind gives it: how to delete its holds, or itself. The
// kinds are listed in kinds (primitives.go).
type kind struct {
	name distsync.Kind
	// forceUnlock deletes every hold and reports whether any was held; nil
	// when the primitive has no holds to delete.
	forceUnlock func(ctx context.Context, c *distsync.Client, name string) (bool, error)
	// remove deletes the primitive and reports whether it existed; nil for
	// the locks, which unlock --force deletes.
	remove func(ctx context.Context, c *distsync.Client, name string) (bool, error)
}

func kindNames() string {
	var s []string
	for _, k := range kinds {
		s = append(s, string(k.name))
	}
	return strings.Join(s, ", ")
}

func findKind(name distsync.Kind) *kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

// checkKindFlag refuses a --kind no primitive has, before connecting.
func checkKindFlag(forced distsync.Kind) error {
	if forced != "" && findKind(forced) == nil {
		return withCode(exitUsage, fmt.Errorf("unknown --kind %q (known: %s)", forced, kindNames()))
	}
	return nil
}

// verifyKind returns an error unless info is of kind want: nothing stored
// passes for any kind, and so does any kind when want is "".
func verifyKind(info distsync.Info, want distsync.Kind) error {
	if want != "" && info.Kind != "" && info.Kind != want {
		return core.WrongKind(info.Key, string(info.Kind), string(want))
	}
	return nil
}

// report is what inspect prints, as text or JSON.
type report struct {
	Name    string        `json:"name"`
	Kind    distsync.Kind `json:"kind"`
	Key     string        `json:"key"`
	Held    bool          `json:"held"`              // a latch: while its count is above zero
	Mode    string        `json:"mode,omitempty"`    // read-write lock: "read" or "write"
	TTLMs   int64         `json:"ttl_ms"`            // remaining lease; 0 free, -1 no expiry
	Token   int64         `json:"fencing_token"`     // of the current hold; 0 none
	Owners  []owner       `json:"owners"`            // in id order
	Waiters []waiter      `json:"waiters"`           // in queue order where there is one
	Permits *permits      `json:"permits,omitempty"` // semaphores
	Count   *int64        `json:"count,omitempty"`   // latches
	Leader  *leader       `json:"leader,omitempty"`  // elections, while someone leads
}

// leader is an election's leader; its owner is the report's only owner.
type leader struct {
	Value string    `json:"value"`
	Term  int64     `json:"term"`
	Since time.Time `json:"since"` // by the server's clock
}

type owner struct {
	ID     string `json:"id"`     // "<client id>:<owner id>"
	Client string `json:"client"` // the Client's id
	Holds  int64  `json:"holds"`  // hold count (reentrancy)
	Mode   string `json:"mode,omitempty"`
	Token  int64  `json:"fencing_token,omitempty"`
	TTLMs  int64  `json:"ttl_ms,omitempty"` // the hold's own lease, where holds have one
}

type waiter struct {
	ID       string `json:"id"`
	Mode     string `json:"mode,omitempty"` // read-write lock: what it waits for
	WindowMs int64  `json:"window_ms"`      // how long its registration lasts unless renewed
}

type permits struct {
	Available int64 `json:"available"`
	Held      int64 `json:"held"`
}

// lookup inspects name and builds its report, checking the kind stored
// against forced when it is given; the kind is nil when nothing is stored.
// A name that holds another kind than forced, or keys no primitive makes,
// is a state error (65) in every command: the arguments are well formed,
// what the server holds under them is not what they expect.
func lookup(ctx context.Context, c *distsync.Client, name string, forced distsync.Kind) (*report, *kind, error) {
	info, err := c.Inspect(ctx, name)
	switch {
	case errors.Is(err, distsync.ErrWrongKind):
		// Without Inspect's "inspect NAME: ", which repeats the command.
		msg := strings.TrimPrefix(errText(err), fmt.Sprintf("inspect %q: ", name))
		return nil, nil, withCode(exitState, reworded{msg, err})
	case err != nil:
		return nil, nil, err
	}
	if err := verifyKind(info, forced); err != nil {
		return nil, nil, withCode(exitState, err)
	}
	k := findKind(info.Kind)
	if k == nil && info.Kind != "" {
		return nil, nil, withCode(exitState, fmt.Errorf("%s holds %s, a kind this command does not know (%s)", info.Key, core.A(string(info.Kind)), kindNames()))
	}
	return newReport(info), k, nil
}

// newReport is the report of info.
func newReport(info distsync.Info) *report {
	r := &report{
		Name: info.Name, Kind: info.Kind, Key: info.Key, Held: info.Held, Mode: info.Mode,
		TTLMs: msOf(info.TTL), Token: info.Token, Owners: []owner{}, Waiters: []waiter{}, Count: info.Count,
	}
	for _, o := range info.Owners {
		r.Owners = append(r.Owners, owner{ID: o.ID, Client: o.Client, Holds: int64(o.Holds), Mode: o.Mode, Token: o.Token, TTLMs: msOf(o.TTL)})
	}
	for _, w := range info.Waiters {
		r.Waiters = append(r.Waiters, waiter{ID: w.ID, Mode: w.Mode, WindowMs: msOf(w.Window)})
	}
	if p := info.Permits; p != nil {
		r.Permits = &permits{Available: p.Available, Held: p.Held}
	}
	if l := info.Leader; l != nil {
		r.Leader = &leader{Value: l.Value, Term: l.Term, Since: l.Since.UTC()}
	}
	return r
}

// msOf renders a remaining time in ms as the report has it: -1 no expiry.
func msOf(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Milliseconds()
}

func (c *cli) inspect(args []string) error {
	f := newFlags("inspect", fmt.Sprintf(inspectUsage, kindNames()))
	var cf connFlags
	cf.register(f)
	asJSON := f.Bool("json", false, "print JSON")
	forced := f.String("kind", "", "fail unless NAME is of this `kind` (or free)")
	pos, err := f.parse(c, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("inspect", "give one NAME")
	}
	if err := checkKindFlag(distsync.Kind(*forced)); err != nil {
		return err
	}
	o, err := cf.options(c)
	if err != nil {
		return err
	}
	client, err := connect(o)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, _, err := lookup(ctx, client, pos[0], distsync.Kind(*forced))
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	r.writeText(c.stdout)
	return nil
}

// writeText prints the report for a person.
func (r *report) writeText(w io.Writer) {
	if r.Kind == "" {
		fmt.Fprintf(w, "%q: free (no key %s)\n", r.Name, r.Key)
		return
	}
	state := "free"
	// An election's owner is its leader, its waiters its candidates.
	ownersLabel, waitersLabel, tokenLabel := "owners", "waiters", "token"
	if r.Kind == distsync.KindElection {
		ownersLabel, waitersLabel, tokenLabel = "leader", "candidates", "term"
	}
	switch {
	case r.Kind == distsync.KindElection && r.Held:
		state = "led"
	case r.Kind == distsync.KindElection:
		state = "nobody leads"
	case r.Count != nil && *r.Count > 0:
		state = "closed"
	case r.Count != nil:
		state = "open"
	case r.Held:
		state = "held"
		if r.Mode != "" {
			state += " for " + r.Mode
		}
	}
	fmt.Fprintf(w, "%s %q: %s\n", r.Kind, r.Name, state)
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "  %-10s %s\n", label, fmt.Sprintf(format, args...))
	}
	line("key", "%s", r.Key)
	switch {
	case r.TTLMs > 0:
		line("ttl", "%s", roundMs(r.TTLMs))
	case r.TTLMs < 0:
		line("ttl", "none (the key has no expiry)")
	}
	if r.Token != 0 {
		line(tokenLabel, "%d", r.Token)
	}
	if l := r.Leader; l != nil {
		line("value", "%q", l.Value)
		line("since", "%s", l.Since.Format("2006-01-02 15:04:05.000 MST"))
	}
	if r.Count != nil {
		line("count", "%d", *r.Count)
	}
	if r.Permits != nil {
		line("permits", "%d available, %d held", r.Permits.Available, r.Permits.Held)
	}
	for i, o := range r.Owners {
		label := ""
		if i == 0 {
			label = ownersLabel
		}
		s := fmt.Sprintf("%s  holds %d", o.ID, o.Holds)
		if o.Mode != "" {
			s += ", " + o.Mode
		}
		if o.Token != 0 {
			s += fmt.Sprintf(", token %d", o.Token)
		}
		if o.TTLMs != 0 {
			s += fmt.Sprintf(", ttl %s", roundMs(o.TTLMs))
		}
		line(label, "%s", s)
	}
	if len(r.Waiters) == 0 {
		line(waitersLabel, "none")
	}
	for i, wt := range r.Waiters {
		label := ""
		if i == 0 {
			label = waitersLabel
		}
		mode := ""
		if wt.Mode != "" {
			mode = ", for " + wt.Mode
		}
		line(label, "%d. %s  (registered for %s more%s)", i+1, wt.ID, roundMs(wt.WindowMs), mode)
	}
}

func (c *cli) unlock(args []string) error {
	f := newFlags("unlock", unlockUsage)
	var cf connFlags
	cf.register(f)
	force := f.Bool("force", false, "required: delete the lock whoever holds it")
	yes := f.Bool("yes", false, "do not ask for confirmation")
	forced := f.String("kind", "", "fail unless NAME is of this `kind` (or free)")
	pos, err := f.parse(c, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("unlock", "give one NAME")
	}
	if !*force {
		return usageErrorf("unlock", "unlock needs --force: it deletes a lock that another process holds")
	}
	if err := checkKindFlag(distsync.Kind(*forced)); err != nil {
		return err
	}
	o, err := cf.options(c)
	if err != nil {
		return err
	}
	client, err := connect(o)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := pos[0]
	r, k, err := lookup(ctx, client, name, distsync.Kind(*forced))
	if err != nil {
		return err
	}
	// An election's hold is its leadership: forcing it deposes the leader.
	election := k != nil && k.name == distsync.KindElection
	switch {
	case election && !r.Held:
		fmt.Fprintf(c.stdout, "nobody leads %q; nothing to do\n", name)
		return nil
	case k == nil || !r.Held:
		fmt.Fprintf(c.stdout, "%q is not held; nothing to do\n", name)
		return nil
	case k.forceUnlock == nil:
		return withCode(exitState, fmt.Errorf("%q is %s, which has no holds to delete; distsync delete deletes it", name, core.A(string(k.name))))
	}
	question := fmt.Sprintf("Delete %s %q, whoever holds it?", k.name, name)
	if election {
		question = fmt.Sprintf("Depose the leader of election %q?", name)
	}
	if !*yes {
		if err := c.confirm(r, question); err != nil {
			return err
		}
	}
	was, err := k.forceUnlock(ctx, client, name)
	switch {
	case err != nil:
		return err
	case !was && election:
		fmt.Fprintf(c.stdout, "nobody leads election %q any more; nothing done\n", name)
	case !was:
		fmt.Fprintf(c.stdout, "%s %q was released meanwhile; nothing deleted\n", k.name, name)
	case election:
		fmt.Fprintf(c.stdout, "election %q: its leader was deposed; the head candidate, if any, leads\n", name)
	default:
		fmt.Fprintf(c.stdout, "%s %q deleted; its waiters were woken\n", k.name, name)
	}
	return nil
}

// confirm shows the report and asks question; anything but yes (or the end
// of the input) is exit code 1.
func (c *cli) confirm(r *report, question string) error {
	r.writeText(c.stdout)
	fmt.Fprintf(c.stdout, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(c.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	if answer == "" {
		fmt.Fprintln(c.stdout)
	}
	return withCode(exitFailure, fmt.Errorf("not confirmed; %q left as it is", r.Name))
}

const deleteUsage = `Usage: distsync delete [--yes] [--kind K] NAME

Deletes the semaphore or the latch NAME: one no longer used, or set to the
wrong size or count. A semaphore's holders lose their permits at their next
renewal (a "distsync run --semaphore" holder stops its command and exits 70),
and its waiters wait until its size is set again; a latch opens and wakes
its awaiters. Shows its state and asks for confirmation unless --yes; --kind,
when given, is checked against what is stored. Locks are deleted with
"distsync unlock --force"; an election is refused: "distsync unlock --force"
deposes its leader, and its candidates leave when they stop campaigning.
`

func (c *cli) deleteCmd(args []string) error {
	f := newFlags("delete", deleteUsage)
	var cf connFlags
	cf.register(f)
	yes := f.Bool("yes", false, "do not ask for confirmation")
	forced := f.String("kind", "", "fail unless NAME is of this `kind`: semaphore, permitsemaphore or latch")
	pos, err := f.parse(c, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("delete", "give one NAME")
	}
	if err := checkKindFlag(distsync.Kind(*forced)); err != nil {
		return err
	}
	if k := findKind(distsync.Kind(*forced)); *forced != "" && k != nil && k.remove == nil {
		return usageErrorf("delete", "delete takes a semaphore or a latch; %s", unlockHint(k.name))
	}
	o, err := cf.options(c)
	if err != nil {
		return err
	}
	client, err := connect(o)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := pos[0]
	r, k, err := lookup(ctx, client, name, distsync.Kind(*forced))
	switch {
	case err != nil:
		return err
	case k == nil:
		fmt.Fprintf(c.stdout, "%q does not exist; nothing to do\n", name)
		return nil
	case k.remove == nil:
		return withCode(exitState, fmt.Errorf("%q is %s: delete takes a semaphore or a latch; %s", name, core.A(string(k.name)), unlockHint(k.name)))
	}
	if !*yes {
		if err := c.confirm(r, fmt.Sprintf("Delete %s %q?", k.name, name)); err != nil {
			return err
		}
	}
	was, err := k.remove(ctx, client, name)
	if err != nil {
		return err
	}
	if !was {
		fmt.Fprintf(c.stdout, "%s %q was deleted meanwhile; nothing to do\n", k.name, name)
		return nil
	}
	fmt.Fprintf(c.stdout, "%s %q deleted\n", k.name, name)
	return nil
}

// unlockHint says what deletes a kind that delete refuses.
func unlockHint(k distsync.Kind) string {
	if k == distsync.KindElection {
		return "an election's leader is deposed with distsync unlock --force"
	}
	return fmt.Sprintf("a %s is deleted with distsync unlock --force", k)
}

// roundMs renders milliseconds to a tenth of a second.
func roundMs(ms int64) time.Duration {
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond)
}
