// Package miniserver runs an in-process Redis server (miniredis, RESP2 only)
// whose clock follows real time, for what must work on a machine with
// nothing but Go: the distsync demo and the tests' fallback. (The examples
// start miniredis themselves, so that they import nothing internal.)
//
// By default miniredis expires keys only when its clock is advanced by hand.
// With ClockTTL (miniredis v2.40+) TTLs run against its clock, checked on
// every database access. Left to follow time.Now(), that clock would also
// move inside a script, between two of its commands, where Redis expires
// nothing: a script that read a key would find it gone at its next command.
// So the clock is set (SetTime) to time.Now() as each command arrives from a
// client, never backwards, and stands still while a command (a script, a
// transaction) runs: keys expire, and TIME advances, between commands as in
// Redis. The Miniredis accessors see the clock of the last command. Connect
// with distsync.Options{Addrs: []string{s.Addr()}, RESP2: true}.
package miniserver

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// Server is a running in-process server. Close it when done.
type Server struct {
	m *miniredis.Miniredis

	mu   sync.Mutex // orders the clock's settings
	last time.Time  // the clock's last setting
}

// Start starts a server on a free loopback port, its clock following real
// time between commands.
func Start() (*Server, error) {
	m := miniredis.NewMiniRedis()
	s := &Server{m: m, last: time.Now()}
	m.SetTime(s.last)
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("miniserver: %w", err)
	}
	m.Server().SetPreHook(s.tick)
	return s, nil
}

// tick, run before every command, sets the clock to now when the command
// came from a client; a command a script calls (nested) runs at the
// script's instant. It never handles the command itself.
func (s *Server) tick(c *server.Peer, _ string, _ ...string) bool {
	if nested(c) {
		// The script holds the server's lock: SetTime would wait for it.
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Two clients' commands may arrive in either order: time.Now() of the
	// later setting may come before the earlier's.
	if now := time.Now(); now.After(s.last) {
		s.last = now
	}
	s.m.SetTime(s.last)
	return false
}

// nested reports whether c is the peer miniredis makes for the commands a
// script calls: its context (miniredis's connCtx, unexported) says
// nested. A peer without one has sent no command yet: a client's.
func nested(c *server.Peer) bool {
	if c.Ctx == nil {
		return false
	}
	v := reflect.ValueOf(c.Ctx)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("miniserver: miniredis's peer context is a %T, not a *connCtx", c.Ctx))
	}
	f := v.Elem().FieldByName("nested")
	if f.Kind() != reflect.Bool {
		panic("miniserver: miniredis's peer context has no nested flag")
	}
	return f.Bool()
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.m.Addr() }

// Port returns the server's TCP port.
func (s *Server) Port() int { return s.m.Server().Addr().Port }

// Miniredis returns the server itself, e.g. to inspect keys.
func (s *Server) Miniredis() *miniredis.Miniredis { return s.m }

// Close stops the server. It is safe to call more than once.
func (s *Server) Close() { s.m.Close() }
