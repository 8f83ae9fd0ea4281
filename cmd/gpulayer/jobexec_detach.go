package main

import (
	"bytes"
	"context"
	"io"
	"sync"
)

// detacher passes stdin on until the detach key, which ends the session.
type detacher struct {
	r    io.Reader
	once sync.Once
	hit  chan struct{}
}

func newDetacher(r io.Reader) *detacher { return &detacher{r: r, hit: make(chan struct{})} }

// Read reads stdin; the detach key and what follows it never pass.
func (d *detacher) Read(p []byte) (int, error) {
	if d.detached() {
		return 0, io.EOF
	}
	n, err := d.r.Read(p)
	if i := bytes.IndexByte(p[:n], detachKey); i >= 0 {
		d.once.Do(func() { close(d.hit) })
		return i, io.EOF
	}
	return n, err
}

func (d *detacher) detached() bool {
	select {
	case <-d.hit:
		return true
	default:
		return false
	}
}

// context is ctx, ended when the detach key is typed.
func (d *detacher) context(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-d.hit:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
