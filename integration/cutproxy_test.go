package integration_test

import (
	"net"
	"sync"
	"testing"
)

// cutProxy is a TCP proxy on 127.0.0.1 in front of one server, with a switch
// that cuts the network between its clients and the server: while cut, the
// connections stay open but no byte passes either way, and bytes sent
// meanwhile are delivered when the cut heals, as TCP retransmission delivers
// them after a partition that ends before the connection times out.
//
// Why not toxiproxy (github.com/Shopify/toxiproxy/v2) as a library: its Proxy
// type lives in the module's root package together with the HTTP API and the
// Prometheus metrics, so importing it adds gorilla/mux, prometheus
// client_golang (with protobuf, procfs, client_model, common), zerolog, xid
// and tomb: fifteen modules in this module's go.mod for one switch. The
// behaviour needed here, a cut with delivery on heal, is these few lines.
type cutProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	open   chan struct{} // closed while bytes flow; replaced by cut
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// startCutProxy listens on a free loopback port and forwards to target until
// the test ends.
func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, open: make(chan struct{}), conns: map[net.Conn]bool{}}
	close(p.open)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the address clients dial instead of the server's.
func (p *cutProxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's port.
func (p *cutProxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// cut stops every byte between the clients and the server until heal.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default: // already cut
	}
}

// heal lets the bytes flow again, those held during the cut first.
func (p *cutProxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

func (p *cutProxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}

func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		if !p.track(client) || !p.track(server) {
			client.Close()
			server.Close()
			return
		}
		p.wg.Add(2)
		go p.pipe(server, client)
		go p.pipe(client, server)
	}
}

// pipe copies src to dst, holding each chunk while the network is cut, and
// closes both ends when either side does.
func (p *cutProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// sever closes every connection through the proxy now, dropping the bytes
// held by a cut, as a partition that outlasts the connections does; new
// connections are still accepted.
func (p *cutProxy) sever() {
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
}

// close stops the proxy and waits for its goroutines. Held bytes are dropped:
// the connections close before the cut heals.
func (p *cutProxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ln.Close()
	p.sever()
	p.heal()
	p.wg.Wait()
}
