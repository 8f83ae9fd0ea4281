// Package faultproxy is a TCP proxy that injects network faults between two
// endpoints: it can cut a link (refuse new connections and sever existing
// ones), delay every chunk it forwards, and drop connections at random.
// Tests put one on each directed link between Raft servers.
package faultproxy

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections from its listen address to a target.
type Proxy struct {
	ln     net.Listener
	target string

	mu       sync.Mutex
	blocked  bool
	delay    time.Duration
	dropRate float64
	conns    map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// New listens on a free loopback port and forwards to target.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is where clients connect.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetBlocked cuts (true) or restores (false) the link. Cutting severs
// every open connection and refuses new ones.
func (p *Proxy) SetBlocked(b bool) {
	p.mu.Lock()
	p.blocked = b
	var cut []net.Conn
	if b {
		for c := range p.conns {
			cut = append(cut, c)
		}
	}
	p.mu.Unlock()
	for _, c := range cut {
		c.Close()
	}
}

// Blocked reports whether the link is cut.
func (p *Proxy) Blocked() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.blocked
}

// SetDelay holds every forwarded chunk for d.
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// SetDropRate severs a connection with probability rate at each chunk.
func (p *Proxy) SetDropRate(rate float64) {
	p.mu.Lock()
	p.dropRate = rate
	p.mu.Unlock()
}

// Close stops the proxy and severs its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.SetBlocked(true)
	p.wg.Wait()
	return err
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.blocked || p.closed {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.handle(c)
	}
}

func (p *Proxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		if p.blocked || p.closed {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *Proxy) handle(in net.Conn) {
	defer p.wg.Done()
	out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		in.Close()
		return
	}
	if !p.track(in, true) || !p.track(out, true) {
		in.Close()
		out.Close()
		p.track(in, false)
		return
	}
	var once sync.Once
	done := func() {
		once.Do(func() {
			in.Close()
			out.Close()
		})
	}
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() { defer pipes.Done(); p.pipe(out, in); done() }()
	go func() { defer pipes.Done(); p.pipe(in, out); done() }()
	pipes.Wait()
	p.track(in, false)
	p.track(out, false)
}

func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			delay, rate, blocked := p.delay, p.dropRate, p.blocked
			p.mu.Unlock()
			if blocked || (rate > 0 && rand.Float64() < rate) {
				return
			}
			if delay > 0 {
				time.Sleep(delay) // the injected fault itself
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			return
		}
	}
}
