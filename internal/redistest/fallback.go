package redistest

import (
	"github.com/alicebob/miniredis/v2"
)

const miniKind = "miniredis (in-process fallback, RESP2)"

// startMini starts the in-process fallback. By default miniredis only expires
// keys when its clock is advanced by hand; ClockTTL(true) (miniredis v2.40+)
// makes TTLs run against the wall clock, advanced on every command, and with
// no SetTime the TIME command reports time.Now(). That replaces a ticking
// goroutine calling SetTime and FastForward, and is exact rather than 5 ms
// coarse.
func startMini() (*Server, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return &Server{
		backend: backendMini,
		kind:    miniKind,
		addr:    m.Addr(),
		port:    m.Server().Addr().Port,
		mini:    m,
	}, nil
}

func (s *Server) stopMiniLocked() {
	if s.mini == nil {
		return
	}
	s.mini.Close()
	s.mini = nil
}
