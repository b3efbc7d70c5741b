package redistest

import "github.com/distsync/distsync/internal/miniserver"

const miniKind = "miniredis (in-process fallback, RESP2)"

// startMini starts the in-process fallback: miniserver, whose TTLs and TIME
// follow the wall clock.
func startMini() (*Server, error) {
	m, err := miniserver.Start()
	if err != nil {
		return nil, err
	}
	return &Server{
		backend: backendMini,
		kind:    miniKind,
		addr:    m.Addr(),
		port:    m.Port(),
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
