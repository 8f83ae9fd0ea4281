package runner

import (
	"context"
	"sync"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// maxShipChunk bounds one log request.
const maxShipChunk = 256 << 10

// shipper sends a task's output to the coordinator in order, one request
// per chunk, with increasing sequence numbers so that a retried request is
// recognised and ignored.
type shipper struct {
	c Coordinator
	a api.Assignment

	mu        sync.Mutex
	seq       int64
	stale     chan struct{}
	staleOnce sync.Once
}

func newShipper(c Coordinator, a api.Assignment) *shipper {
	return &shipper{c: c, a: a, stale: make(chan struct{})}
}

func (s *shipper) send(ch executor.LogChunk) error {
	data := ch.Data
	for len(data) > 0 {
		n := min(len(data), maxShipChunk)
		if err := s.post(ch.Stream, string(data[:n])); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

func (s *shipper) post(stream, data string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isStale() {
		return nil // drain the stream; the attempt is over
	}
	s.seq++
	err := s.c.AppendLogs(context.Background(), s.a.ID, api.LogsRequest{AttemptID: s.a.AttemptID, Stream: stream, Seq: s.seq, Data: data})
	if client.IsCode(err, api.CodeStaleAttempt) || client.IsCode(err, api.CodeNotClaimed) || client.IsCode(err, api.CodeWrongClaimant) {
		s.staleOnce.Do(func() { close(s.stale) })
		return nil
	}
	return err
}

// lastSeq is the sequence number of the last chunk sent or tried.
func (s *shipper) lastSeq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// note adds an agent line to the task's stderr.
func (s *shipper) note(msg string) {
	_ = s.post(api.StreamStderr, "[gpulayer] "+msg+"\n")
}

func (s *shipper) isStale() bool {
	select {
	case <-s.stale:
		return true
	default:
		return false
	}
}
