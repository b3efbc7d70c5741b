package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync"
)

const inspectUsage = `Usage: distsync inspect [--json] [--kind K] NAME

Shows what holds the primitive NAME: its kind (detected from its keys), the
owners and their hold counts, the remaining lease, the fencing token and the
registered waiters. Owners are "<client id>:<owner id>"; the client id is the
Client's random identity (distsync.Client.ID).

A NAME with no key is reported free ("kind" empty in JSON). When the keys fit
more than one kind, say which with --kind (` + "%s" + `).

JSON fields: name, kind, key, held, ttl_ms (remaining lease; -1 no expiry),
fencing_token, owners [{id, client, holds, mode, fencing_token, ttl_ms}],
waiters [{id, mode, window_ms}] and, where the kind has them, mode, permits
{available, held} and count.
`

const unlockUsage = `Usage: distsync unlock --force [--yes] [--kind K] NAME

Deletes the lock NAME whoever holds it and wakes its waiters: for a lock left
by a process that cannot release it. The holder learns of it at its next
renewal, when its context is cancelled (a "distsync run" holder stops its
command and exits 70). Shows the holders and asks for confirmation unless
--yes; --force is required.
`

// kind is a primitive inspect and unlock know: how to recognise its keys,
// read its state and delete its holds. Each lives in inspect_<primitive>.go
// and is listed in kinds (primitives.go).
type kind struct {
	name string
	// suffixes are the key suffixes the primitive uses beside its main key
	// (prefix + "{" + name + "}"), e.g. ":waiters"; probe reads their types.
	suffixes []string
	// detect says whether the probed keys are this primitive's.
	detect func(p *probe) fit
	// inspect fills r (Name, Key and Kind are set) from the server.
	inspect func(ctx context.Context, p *probe, r *report) error
	// forceUnlock deletes every hold and reports whether any was held; nil
	// when the primitive has no holds to delete.
	forceUnlock func(ctx context.Context, c *distsync.Client, name string) (bool, error)
	// remove deletes the primitive and reports whether it existed; nil for
	// the locks, which unlock --force deletes.
	remove func(ctx context.Context, c *distsync.Client, name string) (bool, error)
	// keyType is the Redis type of the main key ("hash", "string").
	keyType string
	// alike is the kind whose keys this one's can look exactly like (a fair
	// lock without waiters has a mutex's keys); nil for none.
	alike *kind
}

// fit is how well probed keys fit a kind.
type fit int

const (
	fitNo    fit = iota
	fitMaybe     // the keys could be this kind's, or another's alike (--kind decides)
	fitYes       // the keys are this kind's
)

func kindNames() string {
	var s []string
	for _, k := range kinds {
		s = append(s, k.name)
	}
	return strings.Join(s, ", ")
}

func findKind(name string) *kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

// probe is what inspect knows of a name before it knows the kind: the Redis
// type of the main key and of every suffix any kind uses, the main key's
// hash fields, and the server's clock.
type probe struct {
	client *distsync.Client
	rc     rueidis.Client
	name   string
	key    string            // the main key
	types  map[string]string // suffix ("" main key) -> type ("none" when absent)
	fields map[string]string // the main key's hash, when it is one
	now    int64             // server time, ms
}

// key returns the key with suffix, e.g. ":waiters".
func (p *probe) keyOf(suffix string) string { return p.key + suffix }

// exists reports whether the key with suffix exists.
func (p *probe) exists(suffix string) bool {
	t, ok := p.types[suffix]
	return ok && t != "none"
}

func newProbe(ctx context.Context, c *distsync.Client, prefix, name string) (*probe, error) {
	if prefix == "" {
		prefix = distsync.DefaultPrefix
	}
	p := &probe{client: c, rc: c.Rueidis(), name: name, key: prefix + "{" + name + "}", types: map[string]string{}}
	suffixes := []string{""}
	seen := map[string]bool{"": true}
	for _, k := range kinds {
		for _, s := range k.suffixes {
			if !seen[s] {
				seen[s] = true
				suffixes = append(suffixes, s)
			}
		}
	}
	cmds := make(rueidis.Commands, 0, len(suffixes)+1)
	cmds = append(cmds, p.rc.B().Time().Build())
	for _, s := range suffixes {
		cmds = append(cmds, p.rc.B().Type().Key(p.keyOf(s)).Build())
	}
	res := p.rc.DoMulti(ctx, cmds...)
	t, err := res[0].AsStrSlice()
	if err != nil {
		return nil, err
	}
	if p.now, err = serverMs(t); err != nil {
		return nil, err
	}
	for i, s := range suffixes {
		if p.types[s], err = res[i+1].ToString(); err != nil {
			return nil, err
		}
	}
	if p.types[""] == "hash" {
		if p.fields, err = p.rc.Do(ctx, p.rc.B().Hgetall().Key(p.key).Build()).AsStrMap(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func serverMs(t []string) (int64, error) {
	if len(t) != 2 {
		return 0, fmt.Errorf("unexpected TIME reply %v", t)
	}
	s, err := strconv.ParseInt(t[0], 10, 64)
	if err != nil {
		return 0, err
	}
	us, err := strconv.ParseInt(t[1], 10, 64)
	if err != nil {
		return 0, err
	}
	return s*1000 + us/1000, nil
}

// classify returns the kind of the probed keys: the one forced, the first
// that is sure of them, the only one that may fit, or nil when no key exists.
// Keys that fit no kind, or several equally, are an error.
func classify(p *probe, kinds []*kind, forced string) (*kind, error) {
	if forced != "" {
		k := findKind(forced)
		if k == nil {
			return nil, withCode(exitUsage, fmt.Errorf("unknown --kind %q (known: %s)", forced, kindNames()))
		}
		if err := verifyKind(p, k); err != nil {
			return nil, err
		}
		if !p.exists("") && !anyExists(p) {
			return nil, nil
		}
		return k, nil
	}
	var maybe []*kind
	for _, k := range kinds {
		switch k.detect(p) {
		case fitYes:
			return k, nil
		case fitMaybe:
			maybe = append(maybe, k)
		}
	}
	switch {
	case len(maybe) == 1:
		return maybe[0], nil
	case len(maybe) > 1:
		var names []string
		for _, k := range maybe {
			names = append(names, k.name)
		}
		return nil, fmt.Errorf("the keys of %q could be a %s: say which with --kind", p.name, strings.Join(names, " or a "))
	case !p.exists(""):
		return nil, nil
	}
	return nil, fmt.Errorf("%s is a %s that fits no known kind (%s)", p.key, p.types[""], kindNames())
}

// verifyKind returns an error unless the probed keys may be k's: absent, or
// a main key of k's Redis type that no other kind is sure of. Until the
// library marks each key with its kind, keys alike (a semaphore's count and
// a latch's, a fair lock without waiters and a mutex) pass for either.
func verifyKind(p *probe, k *kind) error {
	if p.exists("") && p.types[""] != k.keyType {
		return fmt.Errorf("%s is a %s, not a %s: a %s's key is a %s", p.key, p.types[""], k.name, k.name, k.keyType)
	}
	for _, o := range kinds {
		if o != k && o != k.alike && o.detect(p) == fitYes {
			return fmt.Errorf("the keys of %q are a %s's, not a %s's", p.name, o.name, k.name)
		}
	}
	return nil
}

// anyExists reports whether any probed key exists.
func anyExists(p *probe) bool {
	for s := range p.types {
		if p.exists(s) {
			return true
		}
	}
	return false
}

// report is what inspect prints, as text or JSON.
type report struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Key     string   `json:"key"`
	Held    bool     `json:"held"`              // a latch: while its count is above zero
	Mode    string   `json:"mode,omitempty"`    // read-write lock: "read" or "write"
	TTLMs   int64    `json:"ttl_ms"`            // remaining lease; 0 free, -1 no expiry
	Token   int64    `json:"fencing_token"`     // of the current hold; 0 none
	Owners  []owner  `json:"owners"`            // in id order
	Waiters []waiter `json:"waiters"`           // in queue order where there is one
	Permits *permits `json:"permits,omitempty"` // semaphores
	Count   *int64   `json:"count,omitempty"`   // latches
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

// newOwner splits an owner name "<client id>:<owner id>".
func newOwner(id string, holds int64) owner {
	client := id
	if i := strings.LastIndexByte(id, ':'); i > 0 {
		client = id[:i]
	}
	return owner{ID: id, Client: client, Holds: holds}
}

// deadline is a member of a sorted set scored by a deadline on the server
// clock (a lease's end, a waiter's window), with the ms left until it.
type deadline struct {
	member string
	left   int64
}

// deadlines reads the sorted set at the key with suffix, in score order:
// the members whose deadline is still ahead, and how many have passed (the
// primitive's next script drops them).
func deadlines(ctx context.Context, p *probe, suffix string) (live []deadline, passed int64, err error) {
	if !p.exists(suffix) {
		return nil, 0, nil
	}
	zs, err := p.rc.Do(ctx, p.rc.B().Zrange().Key(p.keyOf(suffix)).Min("0").Max("-1").Withscores().Build()).AsZScores()
	if err != nil {
		return nil, 0, err
	}
	for _, z := range zs {
		if left := int64(z.Score) - p.now; left > 0 {
			live = append(live, deadline{z.Member, left})
		} else {
			passed++
		}
	}
	return live, passed, nil
}

// waitersOf reads a waiter set (a sorted set waiter -> end of its window on
// the server clock), leaving out ended registrations.
func waitersOf(ctx context.Context, p *probe, suffix string) ([]waiter, error) {
	live, _, err := deadlines(ctx, p, suffix)
	ws := []waiter{}
	for _, d := range live {
		ws = append(ws, waiter{ID: d.member, WindowMs: d.left})
	}
	return ws, err
}

// ttlOf returns the PTTL of the key with suffix as the report has it:
// 0 absent, -1 no expiry.
func ttlOf(ctx context.Context, p *probe, suffix string) (int64, error) {
	ms, err := p.rc.Do(ctx, p.rc.B().Pttl().Key(p.keyOf(suffix)).Build()).AsInt64()
	switch {
	case err != nil:
		return 0, err
	case ms == -2:
		return 0, nil
	case ms < 0:
		return -1, nil
	}
	return ms, nil
}

// lookup probes name and builds its report; the kind is nil when no key exists.
func lookup(ctx context.Context, c *distsync.Client, prefix, name, forced string) (*report, *kind, error) {
	if err := validName(name); err != nil {
		return nil, nil, err
	}
	p, err := newProbe(ctx, c, prefix, name)
	if err != nil {
		return nil, nil, err
	}
	k, err := classify(p, kinds, forced)
	if err != nil {
		return nil, nil, err
	}
	r := &report{Name: name, Key: p.key, Owners: []owner{}, Waiters: []waiter{}}
	if k == nil {
		return r, nil, nil
	}
	r.Kind = k.name
	if err := k.inspect(ctx, p, r); err != nil {
		return nil, nil, fmt.Errorf("%s %q: %w", k.name, name, err)
	}
	sort.Slice(r.Owners, func(i, j int) bool {
		a, b := r.Owners[i], r.Owners[j]
		return a.ID < b.ID || (a.ID == b.ID && a.Mode < b.Mode)
	})
	return r, k, nil
}

// validName rejects what no primitive accepts, before touching Redis.
func validName(name string) error {
	if name == "" || strings.ContainsAny(name, "{}") {
		return withCode(exitUsage, fmt.Errorf("%w: %q", distsync.ErrInvalidName, name))
	}
	return nil
}

func (c *cli) inspect(args []string) error {
	f := newFlags("inspect", fmt.Sprintf(inspectUsage, kindNames()))
	var cf connFlags
	cf.register(f)
	asJSON := f.Bool("json", false, "print JSON")
	forced := f.String("kind", "", "the primitive's `kind`, when its keys are ambiguous")
	pos, err := f.parse(c, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("inspect", "give one NAME")
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
	r, _, err := lookup(ctx, client, cf.prefix, pos[0], *forced)
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
	switch {
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
		fmt.Fprintf(w, "  %-9s %s\n", label, fmt.Sprintf(format, args...))
	}
	line("key", "%s", r.Key)
	switch {
	case r.TTLMs > 0:
		line("ttl", "%s", roundMs(r.TTLMs))
	case r.TTLMs < 0:
		line("ttl", "none (the key has no expiry)")
	}
	if r.Token != 0 {
		line("token", "%d", r.Token)
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
			label = "owners"
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
		line("waiters", "none")
	}
	for i, wt := range r.Waiters {
		label := ""
		if i == 0 {
			label = "waiters"
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
	forced := f.String("kind", "", "the primitive's `kind`, when its keys are ambiguous")
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
	r, k, err := lookup(ctx, client, cf.prefix, name, *forced)
	if err != nil {
		return err
	}
	if k == nil || !r.Held {
		fmt.Fprintf(c.stdout, "%q is not held; nothing to do\n", name)
		return nil
	}
	if k.forceUnlock == nil {
		return fmt.Errorf("a %s has no holds to delete", k.name)
	}
	if !*yes {
		if err := c.confirm(r, fmt.Sprintf("Delete %s %q, whoever holds it?", k.name, name)); err != nil {
			return err
		}
	}
	was, err := k.forceUnlock(ctx, client, name)
	if err != nil {
		return err
	}
	if !was {
		fmt.Fprintf(c.stdout, "%s %q was released meanwhile; nothing deleted\n", k.name, name)
		return nil
	}
	fmt.Fprintf(c.stdout, "%s %q deleted; its waiters were woken\n", k.name, name)
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
"distsync unlock --force".
`

func (c *cli) deleteCmd(args []string) error {
	f := newFlags("delete", deleteUsage)
	var cf connFlags
	cf.register(f)
	yes := f.Bool("yes", false, "do not ask for confirmation")
	forced := f.String("kind", "", "the primitive's `kind`: semaphore or latch, when its keys are ambiguous")
	pos, err := f.parse(c, args, true)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErrorf("delete", "give one NAME")
	}
	if k := findKind(*forced); *forced != "" && k != nil && k.remove == nil {
		return usageErrorf("delete", "delete takes a semaphore or a latch; a %s is deleted with distsync unlock --force", k.name)
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
	r, k, err := lookup(ctx, client, cf.prefix, name, *forced)
	switch {
	case err != nil:
		return err
	case k == nil:
		fmt.Fprintf(c.stdout, "%q does not exist; nothing to do\n", name)
		return nil
	case k.remove == nil:
		return fmt.Errorf("%q is a %s: delete takes a semaphore or a latch; a lock is deleted with distsync unlock --force", name, k.name)
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

// roundMs renders milliseconds to a tenth of a second.
func roundMs(ms int64) time.Duration {
	return (time.Duration(ms) * time.Millisecond).Round(100 * time.Millisecond)
}
