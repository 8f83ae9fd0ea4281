package logbuf

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

func collect(t *testing.T, b *Buffer) []executor.LogChunk {
	t.Helper()
	var got []executor.LogChunk
	err := b.Follow(t.Context(), func(c executor.LogChunk) error {
		got = append(got, c)
		return nil
	})
	if err != nil {
		t.Fatalf("Follow: %v", err)
	}
	return got
}

func render(chunks []executor.LogChunk) string {
	var sb strings.Builder
	for _, c := range chunks {
		sb.WriteString(c.Stream + ":" + string(c.Data) + "|")
	}
	return sb.String()
}

func TestReplayInOrder(t *testing.T) {
	b := New(0)
	b.Write("stdout", []byte("a"))
	b.Write("stderr", []byte("b"))
	_, _ = b.Writer("stdout").Write([]byte("c"))
	b.Write("stdout", nil) // ignored
	b.Close()
	b.Close()
	b.Write("stdout", []byte("after close"))
	want := "stdout:a|stderr:b|stdout:c|"
	for i := range 3 {
		if got := render(collect(t, b)); got != want {
			t.Fatalf("replay #%d = %q, want %q", i, got, want)
		}
	}
}

func TestWriteCopies(t *testing.T) {
	b := New(0)
	p := []byte("xyz")
	b.Write("stdout", p)
	p[0] = 'Q'
	b.Close()
	if got := render(collect(t, b)); got != "stdout:xyz|" {
		t.Fatalf("got %q: Write kept the caller's slice", got)
	}
}

func TestDropOldestWithMarker(t *testing.T) {
	b := New(10)
	b.Write("stdout", []byte("aaaa")) // dropped
	b.Write("stderr", []byte("bbbb")) // dropped
	b.Write("stdout", []byte("cccc"))
	b.Write("stdout", []byte("dddddd"))
	b.Close()
	want := "stderr:[gpulayer: 8 bytes of earlier output dropped]\n|stdout:cccc|stdout:dddddd|"
	if got := render(collect(t, b)); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestOversizedWriteKeepsTail(t *testing.T) {
	b := New(4)
	b.Write("stdout", []byte("12"))
	b.Write("stdout", []byte("abcdefgh"))
	b.Close()
	want := "stderr:[gpulayer: 6 bytes of earlier output dropped]\n|stdout:efgh|"
	if got := render(collect(t, b)); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFollowLive(t *testing.T) {
	b := New(0)
	got := make(chan string, 16)
	done := make(chan error, 1)
	go func() {
		done <- b.Follow(t.Context(), func(c executor.LogChunk) error {
			got <- string(c.Data)
			return nil
		})
	}()
	for _, s := range []string{"one", "two", "three"} {
		b.Write("stdout", []byte(s))
		select {
		case g := <-got:
			if g != s {
				t.Fatalf("live chunk %q, want %q", g, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("chunk %q not delivered live", s)
		}
	}
	b.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Follow: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Follow did not return after Close")
	}
}

func TestSlowReaderGetsMarker(t *testing.T) {
	b := New(8)
	b.Write("stdout", []byte("1111"))
	holding := make(chan struct{})
	release := make(chan struct{})
	var got []string
	done := make(chan error, 1)
	go func() {
		first := true
		done <- b.Follow(t.Context(), func(c executor.LogChunk) error {
			got = append(got, string(c.Data))
			if first {
				first = false
				close(holding)
				<-release // hold the reader while the writer overruns it
			}
			return nil
		})
	}()
	<-holding
	b.Write("stdout", []byte("2222"))
	b.Write("stdout", []byte("3333")) // drops 1111 (already delivered)
	b.Write("stdout", []byte("4444")) // drops 2222 (never delivered)
	b.Close()
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []string{"1111", "[gpulayer: 4 bytes of earlier output dropped]\n", "3333", "4444"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestFollowCancel(t *testing.T) {
	b := New(0)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Follow(ctx, func(executor.LogChunk) error { return nil }) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after cancel = %v", err)
	}
}

func TestSendError(t *testing.T) {
	b := New(0)
	b.Write("stdout", []byte("a"))
	b.Write("stdout", []byte("b"))
	b.Close()
	boom := errors.New("boom")
	calls := 0
	err := b.Follow(t.Context(), func(executor.LogChunk) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("Follow = %v after %d calls, want boom after 1", err, calls)
	}
}
