package redistest

import (
	"time"

	"github.com/alicebob/miniredis/v2"
)

const miniKind = "miniredis (in-process fallback, RESP2)"

// startMini starts the in-process fallback. miniredis only expires keys when
// its clock is advanced, so a goroutine moves it with real time every 5 ms
// (SetTime for TIME, FastForward for TTLs) until the server stops.
func startMini() (*Server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, err
	}
	last := time.Now()
	m.SetTime(last)
	s := &Server{
		backend:   backendMini,
		kind:      miniKind,
		addr:      m.Addr(),
		port:      m.Server().Addr().Port,
		mini:      m,
		clockStop: make(chan struct{}),
		clockDone: make(chan struct{}),
	}
	go func() {
		defer close(s.clockDone)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.clockStop:
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

func (s *Server) stopMiniLocked() {
	if s.mini == nil {
		return
	}
	close(s.clockStop)
	<-s.clockDone
	s.mini.Close()
	s.mini = nil
}
