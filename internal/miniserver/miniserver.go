// Package miniserver runs an in-process Redis server (miniredis, RESP2 only)
// whose clock follows real time, for what must work on a machine with
// nothing but Go: the distsync demo and the tests' fallback. (The examples
// start miniredis themselves, so that they import nothing internal.)
//
// By default miniredis expires keys only when its clock is advanced by hand.
// With ClockTTL (miniredis v2.40+) TTLs run against the wall clock, checked
// on every command as Redis does lazily, and TIME reports time.Now(): no
// goroutine is needed. Connect with
// distsync.Options{Addrs: []string{s.Addr()}, RESP2: true}.
package miniserver

import (
	"fmt"

	"github.com/alicebob/miniredis/v2"
)

// Server is a running in-process server. Close it when done.
type Server struct {
	m *miniredis.Miniredis
}

// Start starts a server on a free loopback port, its clock following real
// time.
func Start() (*Server, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("miniserver: %w", err)
	}
	return &Server{m: m}, nil
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.m.Addr() }

// Port returns the server's TCP port.
func (s *Server) Port() int { return s.m.Server().Addr().Port }

// Miniredis returns the server itself, e.g. to inspect keys.
func (s *Server) Miniredis() *miniredis.Miniredis { return s.m }

// Close stops the server. It is safe to call more than once.
func (s *Server) Close() { s.m.Close() }
