package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/internal/certs"
)

func peerFor(t *testing.T, ca *certs.CA, cluster, serverName string) *PeerTLS {
	t.Helper()
	p, err := certs.NewCert(ca, certs.CertOptions{Kind: certs.Server, Cluster: cluster, Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	kp, err := tls.X509KeyPair(p.Cert, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return &PeerTLS{Certificate: kp, Roots: pool, ServerName: serverName, HandshakeTimeout: time.Second}
}

func testCA(t *testing.T) *certs.CA {
	t.Helper()
	p, err := certs.NewCA(certs.CAOptions{Cluster: "global", Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certs.ParseCA(p.Cert, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// A failed handshake surfaces on that connection only: Accept keeps
// returning connections, and a real peer accepted after a bad one talks.
func TestTLSStreamAcceptSurvivesBadHandshakes(t *testing.T) {
	ca := testCA(t)
	name := certs.ServerName("global")
	srv, err := newStreamLayer("127.0.0.1:0", "", nil, peerFor(t, ca, "global", name))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	good, err := newStreamLayer("127.0.0.1:0", "", nil, peerFor(t, ca, "global", name))
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	wrongName, err := newStreamLayer("127.0.0.1:0", "", nil, peerFor(t, ca, "other", certs.ServerName("other")))
	if err != nil {
		t.Fatal(err)
	}
	defer wrongName.Close()

	// Like raft's transport, read every accepted connection at once, in
	// its own goroutine (that runs the handshake), and report what it
	// read: four bytes, or the error.
	reads := make(chan string, 4)
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4)
				if _, err := io.ReadFull(c, buf); err != nil {
					reads <- "error: " + err.Error()
					return
				}
				reads <- string(buf)
			}()
		}
	}()
	addr := srv.Addr().String()

	// 1. Plain TCP, as an attacker writing a raw RPC would.
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write([]byte{1, 0x80, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if r := <-reads; !strings.HasPrefix(r, "error: ") {
		t.Fatalf("a plaintext connection was read: %q", r)
	}
	// 2. A peer that expects another cluster's name refuses ours, and the
	// listener refuses its certificate: nothing is read.
	began := time.Now()
	if _, err := wrongName.Dial(raft.ServerAddress(addr), time.Second); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a peer that expects another cluster's name: %v", err)
	}
	if r := <-reads; !strings.HasPrefix(r, "error: ") {
		t.Fatalf("read from a failed handshake: %q", r)
	}
	if d := time.Since(began); d >= time.Second {
		t.Fatalf("the refusal took %v: a timeout, not a verification", d)
	}
	// 3. A real peer still gets through.
	conn, err := good.Dial(raft.ServerAddress(addr), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if r := <-reads; r != "ping" {
		t.Fatalf("the accepted side read %q", r)
	}
}
