package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/distsync/distsync"
)

// Environment variables read by every command that connects.
const (
	envRedis    = "DISTSYNC_REDIS"    // server addresses, comma-separated
	envPassword = "DISTSYNC_PASSWORD" // password, kept off the command line
)

const connHelp = `Connection flags (every command; demo uses an in-process server unless --redis):
  --redis host:port   server address; repeat or separate with commas for Cluster
                      nodes or Sentinels (default $` + envRedis + `, else 127.0.0.1:6379)
  --username U        ACL user
  --password P        password (default $` + envPassword + `)
  --db N              database on a standalone server
  --master NAME       Sentinel master set: connect through the --redis Sentinels
  --prefix P          key prefix (default "distsync:")
  --tls               connect with TLS
  --resp2             speak RESP2 only (servers without HELLO 3, such as miniredis)
  -v                  log the library's warnings to stderr
`

// connFlags are the connection flags every connecting command takes.
type connFlags struct {
	addrs    listFlag
	username string
	password string
	db       int
	master   string
	prefix   string
	tls      bool
	resp2    bool
	verbose  bool
}

func (cf *connFlags) register(f *flags) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.Var(&cf.addrs, "redis", "`host:port` of a server; repeatable or comma-separated (default $"+envRedis+", else 127.0.0.1:6379)")
	fs.StringVar(&cf.username, "username", "", "ACL `user`")
	fs.StringVar(&cf.password, "password", "", "`password` (default $"+envPassword+")")
	fs.IntVar(&cf.db, "db", 0, "database `N` on a standalone server")
	fs.StringVar(&cf.master, "master", "", "Sentinel master set `NAME`; --redis are then the Sentinels")
	fs.StringVar(&cf.prefix, "prefix", "", "key `prefix` (default \"distsync:\")")
	fs.BoolVar(&cf.tls, "tls", false, "connect with TLS")
	fs.BoolVar(&cf.resp2, "resp2", false, "speak RESP2 only (e.g. miniredis)")
	fs.BoolVar(&cf.verbose, "v", false, "verbose: log the library's warnings to stderr")
	f.conn = map[string]bool{}
	fs.VisitAll(func(fl *flag.Flag) {
		f.Var(fl.Value, fl.Name, fl.Usage)
		f.conn[fl.Name] = true
	})
}

// options returns the Client options: flags first, then the environment.
func (cf *connFlags) options(c *cli) distsync.Options {
	o := distsync.Options{
		Addrs:      cf.addrs,
		Username:   cf.username,
		Password:   cf.password,
		DB:         cf.db,
		MasterName: cf.master,
		Prefix:     cf.prefix,
		RESP2:      cf.resp2,
		Logger:     cf.logger(c.stderr),
	}
	if len(o.Addrs) == 0 {
		o.Addrs = splitList(c.getenv(envRedis))
	}
	if o.Password == "" {
		o.Password = c.getenv(envPassword)
	}
	if cf.tls {
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return o
}

// logger logs the library's warnings (a lost lease, a resubscription) to w
// with -v, only its errors otherwise: commands report what matters
// themselves.
func (cf *connFlags) logger(w io.Writer) *slog.Logger {
	level := slog.LevelError
	if cf.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// connect returns a Client for o; failing to connect is exit code 69.
func connect(o distsync.Options) (*distsync.Client, error) {
	c, err := distsync.New(o)
	if err != nil {
		return nil, withCode(exitUnavailable, fmt.Errorf("%w (server %s)", err, describeAddrs(o)))
	}
	return c, nil
}

func describeAddrs(o distsync.Options) string {
	if len(o.Addrs) == 0 {
		return "127.0.0.1:6379"
	}
	s := strings.Join(o.Addrs, ",")
	if o.MasterName != "" {
		s = fmt.Sprintf("master %q via Sentinels %s", o.MasterName, s)
	}
	return s
}

// listFlag is a repeatable flag whose values may also be comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	parts := splitList(v)
	if len(parts) == 0 {
		return fmt.Errorf("empty address")
	}
	*l = append(*l, parts...)
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// waitFlag is a duration flag whose unset value means "wait forever".
type waitFlag struct {
	d   time.Duration
	set bool
}

func (w *waitFlag) String() string {
	if w == nil || !w.set {
		return ""
	}
	return w.d.String()
}

func (w *waitFlag) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("negative duration %v", d)
	}
	w.d, w.set = d, true
	return nil
}

// budget returns the wait budget: -1 for forever.
func (w *waitFlag) budget() time.Duration {
	if !w.set {
		return -1
	}
	return w.d
}
