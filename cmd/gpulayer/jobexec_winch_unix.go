//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// watchWindow sends the terminal fd's size each time the window changes
// (SIGWINCH) until stop.
func watchWindow(fd int) (<-chan client.TermSize, func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGWINCH)
	sizes := make(chan client.TermSize, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-sig:
				w, h, err := term.GetSize(fd)
				if err != nil {
					continue
				}
				select {
				case sizes <- client.TermSize{Rows: h, Cols: w}:
				case <-done:
					return
				}
			}
		}
	}()
	return sizes, func() {
		signal.Stop(sig)
		close(done)
	}
}
