package fsm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// stores are the output stores an FSM is tested over.
var stores = []struct {
	name string
	open func(t *testing.T) output.Store
}{
	{"memory", func(*testing.T) output.Store { return output.NewMem() }},
	{"bbolt", func(t *testing.T) output.Store { return openOutput(t, t.TempDir()) }},
}

func apply(t *testing.T, f *FSM, cmds ...command.Command) {
	t.Helper()
	for _, c := range cmds {
		b, err := command.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := f.Apply(&raft.Log{Type: raft.LogCommand, Data: b}).(state.Result); ok && r.Err() != nil {
			t.Fatalf("%T: %v", c, r.Err())
		}
	}
}

// running is a job j whose task j-a runs on w1.
func running() []command.Command {
	return []command.Command{
		command.RegisterWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "c1", Kind: "worker", Hash: "h"}, Capabilities: []string{"*"}, Executors: []string{"exec"}, Now: t0},
		command.SubmitJob{JobID: "j", TaskIDs: []string{"j-a"}, Spec: command.JobSpec{Executor: "exec", Config: []byte(`{}`), Count: 1}, CreatedBy: "admin", Now: t0},
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "att", Now: t0},
	}
}

func out(seq int, data string) command.AppendLogs {
	return command.AppendLogs{TaskID: "j-a", WorkerID: "w1", AttemptID: "att", Stream: "stdout", Seq: int64(seq), Data: data, Now: t0}
}

// logs is job j's whole output.
func logs(t *testing.T, f *FSM) []string {
	t.Helper()
	var got []string
	var cursor state.LogCursor
	for {
		p, err := f.Store().LogsPage("j", cursor, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range p.Lines {
			got = append(got, l.Data)
		}
		if cursor = p.Next; !p.More {
			return got
		}
	}
}

type sink struct {
	bytes.Buffer
	cancelled bool
}

func (*sink) ID() string      { return "test" }
func (s *sink) Cancel() error { s.cancelled = true; return nil }
func (*sink) Close() error    { return nil }

// persist takes a snapshot of f; between taking and persisting it, then
// applies (which the snapshot must not see).
func persist(t *testing.T, f *FSM, then ...command.Command) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	apply(t, f, then...)
	var s sink
	if err := snap.Persist(&s); err != nil {
		t.Fatal(err)
	}
	return s.Bytes()
}

func storeSection(t *testing.T, f *FSM) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.Store().Snapshot(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSnapshotCarriesOutput(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			f := New(state.NewWithOutput(st.open(t)))
			apply(t, f, running()...)
			apply(t, f, out(1, "one\n"), out(2, "two\n"))
			snap := persist(t, f, out(3, "after the snapshot\n"))

			for _, into := range stores {
				g := New(state.NewWithOutput(into.open(t)))
				if err := g.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
					t.Fatalf("restore into %s: %v", into.name, err)
				}
				if got := logs(t, g); !slices.Equal(got, []string{"one\n", "two\n"}) {
					t.Errorf("restored into %s: %q", into.name, got)
				}
				// The restored replica goes on as the original did.
				apply(t, g, out(3, "after the snapshot\n"))
				if got, want := logs(t, g), logs(t, f); !slices.Equal(got, want) {
					t.Errorf("replica in %s: %q, want %q", into.name, got, want)
				}
				if !bytes.Equal(persist(t, g), persist(t, f)) {
					t.Errorf("replica in %s snapshots differently", into.name)
				}
			}
		})
	}
}

// section reframes a store section and an output section as a snapshot.
func section(version uint64, store, output []byte) []byte {
	var b bytes.Buffer
	b.Write(binary.AppendUvarint([]byte(snapshotMagic), version))
	for _, s := range [][]byte{store, output} {
		cw := newChunkWriter(&b)
		_, _ = cw.Write(s)
		_ = cw.Close()
	}
	return b.Bytes()
}

// badSnapshot is a snapshot a restore refuses, and the error it gives.
type badSnapshot struct {
	name string
	snap []byte
	want error
}

// badSnapshots is a good snapshot of src (running, with output) and the
// ways of spoiling one.
func badSnapshots(t *testing.T, src *FSM) ([]byte, []badSnapshot) {
	t.Helper()
	good := persist(t, src)
	storeBytes := storeSection(t, src)
	var outBytes bytes.Buffer
	c, _ := src.Store().CaptureOutput()
	_, _ = c.WriteTo(&outBytes)
	c.Release()
	return good, []badSnapshot{
		{"truncated output section", good[:len(good)-3], ErrBadSnapshot},
		{"output section without its end", good[:len(good)-1], ErrBadSnapshot},
		{"truncated store section", good[:len(snapshotMagic)+40], ErrBadSnapshot},
		{"wrong version", section(sectionsVersion+1, storeBytes, outBytes.Bytes()), ErrBadSnapshot},
		{"checksummed version without its trailer", section(sectionsVersion, storeBytes, outBytes.Bytes()), ErrBadSnapshot},
		{"no header", []byte("garbage"), ErrBadSnapshot},
		{"empty", nil, ErrBadSnapshot},
		{"data after the sections", append(slices.Clone(good), 1, 'x', 0), ErrBadSnapshot},
		{"chunk too long", append([]byte(snapshotMagic+"\x01"), binary.AppendUvarint(nil, maxChunk+1)...), ErrBadSnapshot},
		{"bad output record", section(1, storeBytes, []byte(`{"task":"j-a","data":`+"\n")), output.ErrSection},
		{"output of an unknown task", section(1, storeBytes, []byte(`{"task":"nope","data":"x"}`+"\n")), state.ErrInvalid},
		{"bad store section", section(1, []byte(`{"version":9}`), outBytes.Bytes()), state.ErrInvalid},
	}
}

func TestBadSnapshotChangesNothing(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			src := New(state.NewWithOutput(st.open(t)))
			apply(t, src, running()...)
			apply(t, src, out(1, "from the snapshot\n"))
			_, cases := badSnapshots(t, src)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					f := New(state.NewWithOutput(st.open(t)))
					apply(t, f, running()...)
					apply(t, f, out(1, "kept\n"))
					before := storeSection(t, f)
					err := f.Restore(io.NopCloser(bytes.NewReader(c.snap)))
					if !errors.Is(err, c.want) {
						t.Fatalf("restore: %v, want %v", err, c.want)
					}
					if !bytes.Equal(storeSection(t, f), before) {
						t.Error("a refused snapshot changed the state")
					}
					if got := logs(t, f); !slices.Equal(got, []string{"kept\n"}) {
						t.Errorf("a refused snapshot changed the output: %q", got)
					}
				})
			}
		})
	}
}

// A snapshot written before sections (the store's JSON alone, version 1,
// output in its "logs" field; testdata/unsectioned-v1.json was written by
// that code from the running() state, two output records added) restores,
// with its output, to the state it was taken from.
func TestUnsectionedSnapshot(t *testing.T) {
	src := New(state.New())
	apply(t, src, running()...)
	snap, err := os.ReadFile(filepath.Join("testdata", "unsectioned-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			f := New(state.NewWithOutput(st.open(t)))
			apply(t, f, running()...)
			apply(t, f, out(1, "replaced\n"))
			if err := f.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
				t.Fatal(err)
			}
			if got := logs(t, f); !slices.Equal(got, []string{"old 1\n", "old 2\n"}) {
				t.Errorf("output after an unsectioned snapshot: %q", got)
			}
			if !bytes.Equal(storeSection(t, f), storeSection(t, src)) {
				t.Error("state differs from the snapshot's")
			}
		})
	}
}

// Chunked sections round-trip whatever their size, and a reader stops at
// its section's end.
func TestChunks(t *testing.T) {
	for _, n := range []int{0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 3*chunkSize + 7} {
		data := bytes.Repeat([]byte{'a'}, n)
		var b bytes.Buffer
		cw := newChunkWriter(&b)
		_, _ = cw.Write(data[:n/2])
		_, _ = cw.Write(data[n/2:])
		_ = cw.Close()
		b.WriteString("next")
		r := bufioReader(&b)
		got, err := io.ReadAll(newChunkReader(r))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: read %d, %v", n, len(got), err)
		}
		if rest, _ := io.ReadAll(r); string(rest) != "next" {
			t.Errorf("%d bytes: after the section %q", n, rest)
		}
	}
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
