package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/distsync/distsync/internal/redistest"
)

func init() {
	binaryTests = append(binaryTests, struct {
		name string
		test func(e *binEnv, t *testing.T)
	}{"TLS", (*binEnv).testTLS})
}

// testTLS connects to a redis-server that speaks only TLS on its TLS port
// and wants client certificates. It runs the binary: after a failed
// handshake rueidis keeps a goroutine asleep for a while.
func (e *binEnv) testTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, caKey := newCert(t, dir, "ca", nil, nil)
	newCert(t, dir, "server", ca, caKey)
	newCert(t, dir, "client", ca, caKey)
	l, err := net.Listen("tcp", "127.0.0.1:0") // a free port for TLS
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	s := redistest.Start(t,
		redistest.WithConfig("tls-port", strconv.Itoa(port)),
		redistest.WithConfig("tls-cert-file", filepath.Join(dir, "server.pem")),
		redistest.WithConfig("tls-key-file", filepath.Join(dir, "server.key")),
		redistest.WithConfig("tls-ca-cert-file", filepath.Join(dir, "ca.pem")),
		redistest.WithConfig("tls-auth-clients", "yes"))
	redistest.RequireProcess(t, s)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	f := func(name string) string { return filepath.Join(dir, name) }
	client := []string{"--cert", f("client.pem"), "--key", f("client.key")}

	for _, c := range []struct {
		args []string
		want int
		msg  string // a regular expression the message matches
	}{
		{append([]string{"--redis", addr, "--cacert", f("ca.pem")}, client...), exitOK, ""},
		{append([]string{"--redis", "rediss://" + addr, "--cacert", f("ca.pem")}, client...), exitOK, ""},
		{append([]string{"--redis", addr, "--insecure"}, client...), exitOK, ""},
		{append([]string{"--redis", "rediss://" + addr + "?skip_verify=true"}, client...), exitOK, ""},
		{append([]string{"--redis", addr, "--tls"}, client...), exitUnavailable, `certificate`}, // unknown CA
		// TLS 1.3 reports the server's alert, or the reset that follows it.
		{[]string{"--redis", addr, "--cacert", f("ca.pem")}, exitUnavailable, `certificate required|does it want a client certificate`},
		{[]string{"--redis", addr}, exitUnavailable, `does it want TLS \(--tls\)\?`},
		// The plain port: it waits for the rest of a command.
		{[]string{"--redis", s.Addr(), "--insecure"}, exitUnavailable, `did not answer the TLS handshake: is this a port without TLS\?`},
	} {
		cmd := exec.Command(e.bin, append(append([]string{"inspect"}, c.args...), "x")...)
		cmd.Env = append(os.Environ(), envRedis+"=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		code := exitStatus(cmd.Run())
		assert.Equal(t, c.want, code, "%q: %s%s", c.args, &stdout, &stderr)
		if c.want == exitOK {
			assert.Contains(t, stdout.String(), "free", "%q", c.args)
		} else {
			assert.Regexp(t, c.msg, stderr.String(), "%q", c.args)
		}
	}
}

// newCert writes name.pem and name.key in dir: a CA when parent is nil,
// else a certificate for 127.0.0.1 signed by parent.
func newCert(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "distsync test " + name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	} else {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return cert, key
}
