package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync"
)

const listUsage = `Usage: distsync list [--json] [--all] [--max N] [PATTERN]

Lists the names under the key prefix that are held or waited for, with their
kind, holders, waiters and remaining lease (TTL): a closed latch counts as
held. PATTERN is a glob on the names, as Redis's SCAN MATCH reads it
(default *: every name). With --all, names that store state while free (a
semaphore whose size is set) are listed too.

list scans: it walks the keyspace of every node (on a Cluster, of every
master; replicas hold their master's keys) with SCAN, which blocks nothing
but reads every key of the database, and stops after --max keys (saying so
on stderr, as more names may exist). Then it inspects each name
it found, one round trip each, as distsync inspect does; what it prints is
what each name held at that moment, not one snapshot of all of them. An ACL
user needs +scan beside the README's recipe.

A counting semaphore does not record its holders: its HOLDERS are "-", and
it is listed when waited for, or with --all. A name with a character that
does not print as itself (a tab, a zero-width or bidirectional mark) is
printed quoted, in Go syntax; one no Client accepts (with a line break, say,
written by hand) is not inspected but reported on stderr.

JSON: an array of what inspect --json prints, one element per name.
`

// defaultListMax is list's default bound on the keys it scans.
const defaultListMax = 100000

func (c *cli) list(args []string) error {
	f := newFlags("list", listUsage)
	var cf connFlags
	cf.register(f)
	asJSON := f.Bool("json", false, "print JSON")
	all := f.Bool("all", false, "also list names that store state but are free")
	maxKeys := f.Int("max", defaultListMax, "scan at most `N` keys")
	pos, err := f.parse(c, args, true)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageErrorf("list", "give at most one PATTERN")
	}
	if *maxKeys <= 0 {
		return usageErrorf("list", "--max %d: give a positive number of keys", *maxKeys)
	}
	pattern := "*"
	if len(pos) == 1 {
		if pattern = pos[0]; pattern == "" || strings.ContainsAny(pattern, "{}") {
			return usageErrorf("list", "PATTERN %q: give a glob of names, which have no braces", pattern)
		}
	}
	o, err := cf.options(c)
	if err != nil {
		return err
	}
	prefix := o.Prefix
	if prefix == "" {
		prefix = distsync.DefaultPrefix
	}
	client, err := connect(o)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	names, scanned, full, err := scanNames(ctx, client.Rueidis(), prefix, pattern, *maxKeys)
	if err != nil {
		return err
	}
	if full {
		fmt.Fprintf(c.stderr, "distsync list: stopped after --max %d keys; more names may exist\n", *maxKeys)
	}
	var reports []*report
	for _, name := range names {
		r, _, err := lookup(ctx, client, name, "")
		if err != nil {
			fmt.Fprintf(c.stderr, "distsync list: %q: %s\n", name, errText(err))
			continue
		}
		if r.Held || len(r.Waiters) > 0 || (*all && r.Kind != "") {
			reports = append(reports, r)
		}
	}
	if *asJSON {
		if reports == nil {
			reports = []*report{}
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	if len(reports) == 0 {
		fmt.Fprintf(c.stdout, "nothing held or waited for under %q matching %q (%d keys scanned)\n", prefix, pattern, scanned)
		return nil
	}
	writeList(c.stdout, reports)
	return nil
}

// scanNames returns the sorted names whose keys under prefix match the
// glob pattern, scanning at most maxKeys keys across the nodes of rc; full
// reports that it stopped at maxKeys.
func scanNames(ctx context.Context, rc rueidis.Client, prefix, pattern string, maxKeys int) (names []string, scanned int, full bool, err error) {
	match := globEscape(prefix) + "{" + pattern + "}*"
	seen := map[string]bool{}
	nodes, addrs := scanTargets(ctx, rc)
	for _, a := range addrs {
		node := nodes[a]
		for cursor := uint64(0); ; {
			count := int64(min(1000, maxKeys-scanned))
			e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(match).Count(count).Build()).AsScanEntry()
			if err != nil {
				if strings.Contains(err.Error(), "NOPERM") {
					err = reworded{err.Error() + " (the user needs +scan: see the README's ACL recipe)", err}
				}
				return nil, scanned, false, fmt.Errorf("scanning %s: %w", a, err)
			}
			for _, k := range e.Elements {
				if name, ok := nameOf(k, prefix); ok && !seen[name] {
					seen[name] = true
					names = append(names, name)
				}
			}
			// COUNT bounds the keys a SCAN call reads only roughly: count
			// what it asked for.
			scanned += int(count)
			if cursor = e.Cursor; cursor == 0 {
				break
			}
			if scanned >= maxKeys {
				sort.Strings(names)
				return names, scanned, true, nil
			}
		}
	}
	sort.Strings(names)
	return names, scanned, false, nil
}

// scanTargets returns the nodes of rc and, sorted, the addresses of those
// list scans: every node, but on a Cluster not the replicas, which rueidis's
// Nodes include and whose keys are their master's. The replicas are those
// that CLUSTER SLOTS, asked of every node (their views may differ for a
// moment: Redis 7 names a replica only once it reports a replication
// offset), names as replicas and none names as a master; any other node is
// scanned, as every node is when none answers: names are counted once
// anyway.
func scanTargets(ctx context.Context, rc rueidis.Client) (map[string]rueidis.Client, []string) {
	nodes := rc.Nodes()
	addrs := make([]string, 0, len(nodes))
	for a := range nodes {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	if rc.Mode() != rueidis.ClientModeCluster {
		return nodes, addrs
	}
	replicas, masters := map[string]bool{}, map[string]bool{}
	for _, a := range addrs {
		node := nodes[a]
		if slots, err := node.Do(ctx, node.B().ClusterSlots().Build()).ToArray(); err == nil {
			clusterRoles(slots, a, masters, replicas)
		}
	}
	scan := addrs[:0]
	for _, a := range addrs {
		if !replicas[a] || masters[a] {
			scan = append(scan, a)
		}
	}
	return nodes, scan
}

// clusterRoles reads a CLUSTER SLOTS reply from the node at from into the
// addresses of the masters and of the replicas it names, as rueidis names
// them (a node that does not know its own IP is at from's host).
func clusterRoles(slots []rueidis.RedisMessage, from string, masters, replicas map[string]bool) {
	host, _, _ := net.SplitHostPort(from)
	for _, r := range slots {
		entry, _ := r.ToArray() // start, end, master, replicas...
		for i := 2; i < len(entry); i++ {
			node, _ := entry[i].ToArray() // ip, port, id, ...
			if len(node) < 2 {
				continue
			}
			ip, _ := node[0].ToString()
			port, err := node[1].AsInt64()
			if err != nil || ip == "?" {
				continue
			}
			if ip == "" {
				ip = host
			}
			addr := net.JoinHostPort(ip, strconv.FormatInt(port, 10))
			if i == 2 {
				masters[addr] = true
			} else {
				replicas[addr] = true
			}
		}
	}
}

// nameOf returns the name of the key prefix{name}suffix.
func nameOf(key, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(key, prefix+"{")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, "}")
	return name, ok && name != ""
}

// globEscape escapes the characters SCAN MATCH reads as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// writeList prints one line per report: name, kind, holders, waiters, TTL.
func writeList(w io.Writer, reports []*report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tHOLDERS\tWAITERS\tTTL")
	for _, r := range reports {
		holders := strconv.Itoa(len(r.Owners))
		if r.Kind == distsync.KindSemaphore {
			holders = "-"
		}
		if r.Mode != "" {
			holders += " (" + r.Mode + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", listName(r.Name), r.Kind, holders, len(r.Waiters), listTTL(r))
	}
	tw.Flush()
}

// listName is name as a row prints it: quoted (Go syntax) when it has a
// character that does not print as itself or could be read as the quotes,
// so that every name is one field of one row.
func listName(name string) string {
	if strings.HasPrefix(name, `"`) || strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(name)
	}
	return name
}

// listTTL is the remaining lease of a report: the lock's, else the
// shortest of its holds' (a read-write lock's, a permit's); "-" when none,
// "none" when the key has no expiry.
func listTTL(r *report) string {
	ms := r.TTLMs
	if ms == 0 {
		for _, o := range r.Owners {
			if o.TTLMs > 0 && (ms == 0 || o.TTLMs < ms) {
				ms = o.TTLMs
			}
		}
	}
	switch {
	case ms < 0:
		return "none"
	case ms == 0:
		return "-"
	}
	return roundMs(ms).String()
}
