package faultproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, msg string) (string, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func TestProxyForwardsCutsAndHeals(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := roundTrip(c, "hello"); err != nil || got != "hello\n" {
		t.Fatalf("through the proxy: %q %v", got, err)
	}
	p.SetBlocked(true)
	if _, err := roundTrip(c, "again"); err == nil {
		t.Fatal("an open connection survived a cut")
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		if _, err := roundTrip(c2, "x"); err == nil {
			t.Fatal("a new connection crossed a cut link")
		}
	}
	p.SetBlocked(false)
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := roundTrip(c3, "healed"); err != nil || got != "healed\n" {
		t.Fatalf("after healing: %q %v", got, err)
	}
}

func TestProxyDelays(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetDelay(50 * time.Millisecond)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := roundTrip(c, "slow"); err != nil {
		t.Fatal(err)
	}
	// Both directions are delayed: the round trip takes at least 100 ms.
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Fatalf("round trip took %v with 50ms injected each way", el)
	}
}

func TestProxyDropsConnections(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetDropRate(1)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(c, "lost"); err == nil {
		t.Fatal("drop rate 1 let a chunk through")
	}
}
