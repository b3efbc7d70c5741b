package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/distsync/distsync"
)

// Environment variables read by every command that connects.
const (
	envRedis    = "DISTSYNC_REDIS"    // server addresses, comma-separated, or one redis:// URL
	envPassword = "DISTSYNC_PASSWORD" // password, kept off the command line
)

const connHelp = `Connection flags (every command; demo uses an in-process server unless --redis):
  --redis ADDR        host:port of a server; repeat or separate with commas for
                      Cluster nodes or Sentinels; or one URL
                      redis[s]://[user[:password]@]host:port[/db]
                      (default $` + envRedis + `, else 127.0.0.1:6379)
  --username U        ACL user
  --password P        password (default $` + envPassword + `)
  --db N              database on a standalone server
  --master NAME       Sentinel master set: connect through the --redis Sentinels
  --prefix P          key prefix (default "distsync:")
  --tls               connect with TLS (implied by rediss://, --cacert, --cert,
                      --key and --insecure)
  --cacert FILE       trust the CA certificates in FILE (PEM)
  --cert FILE         client certificate (PEM), with --key
  --key FILE          the client certificate's private key (PEM)
  --insecure          do not verify the server's certificate
  --resp2             speak RESP2 only (servers without HELLO 3, such as miniredis)
  -v, --verbose       log the library's warnings to stderr; run reports its
                      wait
`

// connFlags are the connection flags every connecting command takes.
type connFlags struct {
	f        *flags
	addrs    listFlag
	username string
	password string
	db       int
	master   string
	prefix   string
	tls      bool
	cacert   string
	cert     string
	key      string
	insecure bool
	resp2    bool
	verbose  bool
}

func (cf *connFlags) register(f *flags) {
	cf.f = f
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.Var(&cf.addrs, "redis", "`host:port` of a server, repeatable or comma-separated, or a redis:// or rediss:// URL (default $"+envRedis+", else 127.0.0.1:6379)")
	fs.StringVar(&cf.username, "username", "", "ACL `user`")
	fs.StringVar(&cf.password, "password", "", "`password` (default $"+envPassword+")")
	fs.IntVar(&cf.db, "db", 0, "database `N` on a standalone server")
	fs.StringVar(&cf.master, "master", "", "Sentinel master set `NAME`; --redis are then the Sentinels")
	fs.StringVar(&cf.prefix, "prefix", "", "key `prefix` (default \"distsync:\")")
	fs.BoolVar(&cf.tls, "tls", false, "connect with TLS")
	fs.StringVar(&cf.cacert, "cacert", "", "trust the CA certificates in `file` (PEM); implies --tls")
	fs.StringVar(&cf.cert, "cert", "", "client certificate `file` (PEM), with --key; implies --tls")
	fs.StringVar(&cf.key, "key", "", "the client certificate's private key `file` (PEM); implies --tls")
	fs.BoolVar(&cf.insecure, "insecure", false, "do not verify the server's certificate; implies --tls")
	fs.BoolVar(&cf.resp2, "resp2", false, "speak RESP2 only (e.g. miniredis)")
	fs.BoolVar(&cf.verbose, "v", false, "log the library's warnings to stderr; run reports its wait")
	f.conn = map[string]bool{}
	fs.VisitAll(func(fl *flag.Flag) {
		f.Var(fl.Value, fl.Name, fl.Usage)
		f.conn[fl.Name] = true
	})
	f.alias("verbose", "v")
}

// options returns the Client options: flags first, then a URL's parts,
// then the environment. A bad URL or an unreadable certificate is a usage
// error.
func (cf *connFlags) options(c *cli) (distsync.Options, error) {
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
	from := "--redis"
	if len(o.Addrs) == 0 {
		o.Addrs, from = splitList(c.getenv(envRedis)), "$"+envRedis
	}
	var urlTLS *tls.Config
	if i := indexURL(o.Addrs); i >= 0 {
		if len(o.Addrs) > 1 {
			return o, withCode(exitUsage, fmt.Errorf("%s: a URL must be the only address (more go in its ?addr= parameters)", from))
		}
		u, err := parseURL(o.Addrs[0])
		if err != nil {
			return o, withCode(exitUsage, fmt.Errorf("%s: %w", from, err))
		}
		o.Addrs = u.InitAddress
		if !cf.f.set("username") {
			o.Username = u.Username
		}
		if !cf.f.set("password") && u.Password != "" {
			o.Password = u.Password
		}
		if !cf.f.set("db") {
			o.DB = u.SelectDB
		}
		if !cf.f.set("master") {
			o.MasterName = u.Sentinel.MasterSet
		}
		o.RESP2 = o.RESP2 || u.AlwaysRESP2
		urlTLS = u.TLSConfig
	}
	if o.Password == "" {
		o.Password = c.getenv(envPassword)
	}
	if o.DB < 0 || o.DB > math.MaxInt32 {
		return o, withCode(exitUsage, fmt.Errorf("database %d: a database is numbered 0 to the server's \"databases\" setting - 1", o.DB))
	}
	var err error
	if o.TLS, err = cf.tlsConfig(urlTLS); err != nil {
		return o, withCode(exitUsage, err)
	}
	return o, nil
}

// indexURL returns the index of the first address that is a URL, or -1.
func indexURL(addrs []string) int {
	for i, a := range addrs {
		if strings.Contains(a, "://") {
			return i
		}
	}
	return -1
}

// urlParams are the query parameters of a URL that distsync understands.
var urlParams = map[string]bool{"db": true, "addr": true, "skip_verify": true, "protocol": true, "master_set": true}

// parseURL parses a redis:// or rediss:// URL with rueidis.ParseURL,
// refusing what a distsync.Options cannot carry.
func parseURL(s string) (rueidis.ClientOption, error) {
	u, err := url.Parse(s)
	if err != nil {
		return rueidis.ClientOption{}, err
	}
	switch u.Scheme {
	case "redis", "rediss":
	default:
		return rueidis.ClientOption{}, fmt.Errorf("URL scheme %q: want redis:// or rediss://", u.Scheme)
	}
	for k := range u.Query() {
		if !urlParams[k] {
			return rueidis.ClientOption{}, fmt.Errorf("URL parameter %q is not supported (known: addr, db, master_set, protocol, skip_verify)", k)
		}
	}
	o, err := rueidis.ParseURL(s)
	if err != nil {
		return o, errors.New(strings.TrimPrefix(err.Error(), "redis: "))
	}
	return o, nil
}

// tlsConfig returns the TLS configuration the flags ask for, on top of a
// URL's (rediss://), or nil for none.
func (cf *connFlags) tlsConfig(base *tls.Config) (*tls.Config, error) {
	if base == nil && !cf.tls && cf.cacert == "" && cf.cert == "" && cf.key == "" && !cf.insecure {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		cfg = base.Clone()
	}
	if cf.cacert != "" {
		pem, err := os.ReadFile(cf.cacert)
		if err != nil {
			return nil, fmt.Errorf("--cacert: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", cf.cacert)
		}
	}
	if (cf.cert == "") != (cf.key == "") {
		return nil, errors.New("--cert and --key go together")
	}
	if cf.cert != "" {
		pair, err := tls.LoadX509KeyPair(cf.cert, cf.key)
		if err != nil {
			return nil, fmt.Errorf("--cert/--key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if cf.insecure {
		cfg.InsecureSkipVerify = true
	}
	return cfg, nil
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

// connect returns a Client for o; failing to connect is exit code 69, options
// the library refuses are 64, and so is a database the server does not have
// (--db): a bad argument, which trying again does not mend.
func connect(o distsync.Options) (*distsync.Client, error) {
	c, err := distsync.New(o)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, distsync.ErrInvalidArgument):
		return nil, withCode(exitUsage, err)
	case isNoSuchDB(err):
		return nil, withCode(exitUsage, fmt.Errorf("database %d: %s has no such database (%s); they are numbered 0 to its \"databases\" setting - 1",
			o.DB, describeAddrs(o), strings.TrimPrefix(rueidisMessage(err), "ERR ")))
	}
	return nil, withCode(exitUnavailable, fmt.Errorf("cannot connect to %s: %s", describeAddrs(o), connectCause(err, o)))
}

// isNoSuchDB reports whether the server refused the database SELECT asked
// for: "DB index is out of range" (Redis 6 and later) or "invalid DB index".
func isNoSuchDB(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "DB index is out of range") || strings.Contains(msg, "invalid DB index")
}

// rueidisMessage is the server's error message in err, or err's text.
func rueidisMessage(err error) string {
	var re *rueidis.RedisError
	if errors.As(err, &re) {
		return re.Error()
	}
	return err.Error()
}

// connectCause explains a failure to connect to o in an operator's terms.
func connectCause(err error, o distsync.Options) string {
	withTLS := o.TLS != nil
	msg := strings.TrimPrefix(err.Error(), "distsync: connect: ")
	if withTLS && isTimeout(err) && len(o.Addrs) == 1 && o.MasterName == "" && acceptsTCP(o.Addrs[0]) {
		// A Redis port without TLS reads the handshake as the start of a
		// command and waits for the rest: the dial runs out of time.
		return msg + " (the server accepts connections but did not answer the TLS handshake: is this a port without TLS? then drop --tls, or use redis://)"
	}
	for _, garbled := range []string{"received unknown message type: ", "received unexpected number byte: ", "received unexpected simple string message"} {
		i := strings.Index(msg, garbled)
		if i < 0 {
			continue
		}
		first := ""
		if n, err := strconv.Atoi(strings.TrimSpace(msg[i+len(garbled):])); err == nil && n > 0 && n < 128 {
			first = fmt.Sprintf(" (its reply began with %q)", rune(n))
		}
		hint := ""
		if !withTLS {
			hint = "; or is it a TLS port (--tls)?"
		}
		return "the server does not speak the Redis protocol" + first + ": is this a Redis port" + hint
	}
	switch closed := errors.Is(err, io.EOF) || strings.Contains(msg, "connection reset"); {
	case closed && !withTLS:
		return msg + " (the server closed the connection: does it want TLS (--tls)?)"
	case closed:
		return msg + " (the server closed the connection: does it want a client certificate (--cert, --key)?)"
	}
	return msg
}

// isTimeout reports whether err is a dial or handshake that ran out of time.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// acceptsTCP reports whether addr accepts a TCP connection within a second.
func acceptsTCP(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
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

// durationFlag is a duration given as bare seconds ("5", "0.5", as flock
// -w takes them) or as a Go duration ("1m30s"). Unset, it keeps its default.
type durationFlag struct {
	d   time.Duration
	set bool
}

func (f *durationFlag) String() string {
	if f == nil || (!f.set && f.d == 0) {
		return ""
	}
	return f.d.String()
}

func (f *durationFlag) Set(v string) error {
	d, err := parseSeconds(v)
	if err != nil {
		return err
	}
	f.d, f.set = d, true
	return nil
}

// parseSeconds parses bare seconds or a Go duration; negative is an error.
func parseSeconds(v string) (time.Duration, error) {
	var d time.Duration
	if s, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "xXpPnN") {
		if s < 0 || s*float64(time.Second) >= math.MaxInt64 {
			return 0, fmt.Errorf("%s seconds is out of range", v)
		}
		d = time.Duration(s * float64(time.Second))
	} else if d, err = time.ParseDuration(v); err != nil {
		return 0, fmt.Errorf("%q is neither seconds nor a duration such as 1m30s", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %v", d)
	}
	return d, nil
}

// durationVar defines the duration flag name with default def.
func (f *flags) durationVar(name string, def time.Duration, usage string) *durationFlag {
	d := &durationFlag{d: def}
	f.Var(d, name, usage)
	return d
}

// budget returns the wait budget of a --wait flag: -1 for forever.
func (f *durationFlag) budget() time.Duration {
	if !f.set {
		return -1
	}
	return f.d
}
