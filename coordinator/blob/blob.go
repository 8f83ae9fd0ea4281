// Package blob keeps content-addressed files (artifacts) in a coordinator's
// data dir: one file per SHA-256 digest, written through a temporary file
// and renamed into place only once its bytes hash to its name.
//
// Only metadata (digest, size, which nodes hold a copy) is replicated
// through Raft; the bytes stay on the nodes that hold them (the one that
// received the upload, the one it copied it to, and those that repairs
// copied it to since). Stat and Verify are how a coordinator checks the
// copies the state says it holds.
package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Sentinel errors.
var (
	// ErrDigestMismatch refuses an upload whose bytes do not hash to the
	// digest it was sent under; nothing is stored.
	ErrDigestMismatch = errors.New("blob: content does not hash to its name")
	// ErrNotFound means this node holds no blob for the digest.
	ErrNotFound = errors.New("blob: not held here")
	// ErrInvalidDigest refuses a name that is not 64 lowercase hex.
	ErrInvalidDigest = errors.New("blob: digest must be 64 lowercase hex characters")
	// ErrStorage wraps a failure of this node's disk (full, read-only,
	// failing) while storing a blob: the fault is the node's, not the
	// sender's; nothing was stored.
	ErrStorage = errors.New("blob: could not store")
)

// Store is a directory of blobs. It is safe for concurrent use: writers
// never share a temporary file, and a rename is atomic.
type Store struct {
	dir string
}

// Open prepares dir (and its tmp/ subdirectory, emptied of leftovers from
// an interrupted upload).
func Open(dir string) (*Store, error) {
	tmp := filepath.Join(dir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("blob: clear %s: %w", tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	// Artifacts are private to the coordinator: the store's directories
	// are 0700 even where they existed with looser modes (its files are
	// created 0600 by CreateTemp and keep that mode when renamed).
	for _, d := range []string{dir, tmp} {
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, fmt.Errorf("blob: %w", err)
		}
	}
	return &Store{dir: dir}, nil
}

// ValidDigest reports whether d is 64 lowercase hex characters (the
// protocol's rule, api.ValidDigest).
func ValidDigest(d string) bool { return api.ValidDigest(d) }

func (s *Store) path(digest string) string { return filepath.Join(s.dir, digest[:2], digest) }

// Put copies r into the store under digest, and keeps it only if its bytes
// hash to digest. It returns the size stored. A read error (a body over
// its cap, a dropped connection) stores nothing and is returned as is; a
// failure of this node's disk stores nothing and wraps ErrStorage.
func (s *Store) Put(digest string, r io.Reader) (int64, error) {
	if !ValidDigest(digest) {
		return 0, ErrInvalidDigest
	}
	f, err := s.createTemp("upload-*")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op once renamed
	h := sha256.New()
	src := &readErrs{r: r}
	n, err := io.Copy(io.MultiWriter(f, h), src)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil && src.err != nil && errors.Is(err, src.err):
		return 0, err
	case err != nil:
		return 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return 0, fmt.Errorf("%w: the body hashes to %s", ErrDigestMismatch, got)
	}
	if err := os.MkdirAll(filepath.Dir(s.path(digest)), 0o700); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if err := os.Rename(tmp, s.path(digest)); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return n, nil
}

// createTemp creates a file in tmp/, making tmp/ again first if it is
// gone (the store's directory was wiped under the running coordinator:
// it takes copies again, which is how it gets its blobs back).
func (s *Store) createTemp(pattern string) (*os.File, error) {
	tmp := filepath.Join(s.dir, "tmp")
	f, err := os.CreateTemp(tmp, pattern)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return nil, err
		}
		f, err = os.CreateTemp(tmp, pattern)
	}
	return f, err
}

// readErrs remembers the error its reader returned (other than io.EOF),
// so that Put can tell the sender's failures from the disk's.
type readErrs struct {
	r   io.Reader
	err error
}

func (e *readErrs) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// Open opens the blob of digest for reading, with its size.
func (s *Store) Open(digest string) (*os.File, int64, error) {
	if !ValidDigest(digest) {
		return nil, 0, ErrInvalidDigest
	}
	f, err := os.Open(s.path(digest))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("blob: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("blob: %w", err)
	}
	return f, info.Size(), nil
}

// Stat returns the size of the blob of digest and when it was written;
// ErrNotFound when it is not held here.
func (s *Store) Stat(digest string) (int64, time.Time, error) {
	if !ValidDigest(digest) {
		return 0, time.Time{}, ErrInvalidDigest
	}
	info, err := os.Stat(s.path(digest))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, time.Time{}, ErrNotFound
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("blob: %w", err)
	}
	if !info.Mode().IsRegular() {
		return 0, time.Time{}, fmt.Errorf("blob: %s is not a regular file", digest)
	}
	return info.Size(), info.ModTime(), nil
}

// Verify reads the blob of digest through and checks that it still
// hashes to its name; it returns its size. A blob whose bytes changed on
// disk is ErrDigestMismatch; one not held here ErrNotFound; a read that
// fails is another error (the disk's: nothing is known about the bytes).
func (s *Store) Verify(digest string) (int64, error) {
	f, _, err := s.Open(digest)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, fmt.Errorf("blob: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return n, fmt.Errorf("%w: the file hashes to %s", ErrDigestMismatch, got)
	}
	return n, nil
}

// Has reports whether the blob of digest is held here.
func (s *Store) Has(digest string) bool {
	if !ValidDigest(digest) {
		return false
	}
	_, err := os.Stat(s.path(digest))
	return err == nil
}

// Held is one blob in the store: its digest and when it was written.
type Held struct {
	Digest  string
	ModTime time.Time
}

// List returns the blobs held here, in digest order. Files whose names
// are not digests (none are written) are left out.
func (s *Store) List() ([]Held, error) {
	shards, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	var out []Held
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 {
			continue // tmp/, or not ours
		}
		files, err := os.ReadDir(filepath.Join(s.dir, sh.Name()))
		if err != nil {
			return nil, fmt.Errorf("blob: %w", err)
		}
		for _, f := range files {
			if !ValidDigest(f.Name()) || f.Name()[:2] != sh.Name() || !f.Type().IsRegular() {
				continue
			}
			info, err := f.Info()
			if err != nil {
				continue // removed meanwhile
			}
			out = append(out, Held{Digest: f.Name(), ModTime: info.ModTime()})
		}
	}
	return out, nil
}

// Remove deletes the blob of digest; one not held here is no error.
func (s *Store) Remove(digest string) error {
	if !ValidDigest(digest) {
		return ErrInvalidDigest
	}
	if err := os.Remove(s.path(digest)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: %w", err)
	}
	return nil
}

// Spool copies r into a file of the store's tmp/ directory and returns it
// open, at its start, with its size; the file has no name left (it is
// removed once open), so it goes when the caller closes it, or with the
// process. It is how a large upload that is not an artifact (a snapshot
// to restore) is held on disk instead of in memory. A read error is
// returned as is; a failure of this node's disk wraps ErrStorage.
func (s *Store) Spool(r io.Reader) (*os.File, int64, error) {
	f, err := s.createTemp("spool-*")
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	src := &readErrs{r: r}
	n, err := io.Copy(f, src)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		if src.err != nil && errors.Is(err, src.err) {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return f, n, nil
}
