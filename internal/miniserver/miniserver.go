// Package miniserver runs an in-process Redis server (miniredis, RESP2 only)
// whose clock follows real time, for programs that must work on a machine
// with nothing but Go: the distsync demo and the examples.
//
// miniredis expires keys and answers TIME only from a clock it is told about,
// so a goroutine moves that clock with real time every few milliseconds
// (SetTime for TIME, FastForward for TTLs) until Close. Connect to it with
// distsync.Options{Addrs: []string{s.Addr()}, RESP2: true}.
package miniserver

import (
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Tick is how often the server's clock is advanced.
const Tick = 5 * time.Millisecond

// Server is a running in-process server. Close it when done.
type Server struct {
	m    *miniredis.Miniredis
	stop chan struct{}
	done chan struct{}
}

// Start starts a server on a free loopback port, its clock following real
// time.
func Start() (*Server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("miniserver: %w", err)
	}
	s := &Server{m: m, stop: make(chan struct{}), done: make(chan struct{})}
	last := time.Now()
	m.SetTime(last)
	go func() {
		defer close(s.done)
		t := time.NewTicker(Tick)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				now := time.Now()
				m.SetTime(now)
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	}()
	return s, nil
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.m.Addr() }

// Miniredis returns the server itself, e.g. to inspect keys.
func (s *Server) Miniredis() *miniredis.Miniredis { return s.m }

// Close stops the clock goroutine and the server and waits for both. It is
// safe to call more than once.
func (s *Server) Close() {
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	<-s.done
	s.m.Close()
}
