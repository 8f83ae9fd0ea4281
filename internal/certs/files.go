package certs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists refuses to overwrite a certificate or key file.
var ErrExists = errors.New("refusing to overwrite")

// Names of the CA's files, as `gpulayer tls ca create` writes them.
const (
	CAFile    = "gpulayer-ca.pem"
	CAKeyFile = "gpulayer-ca-key.pem"
)

// WriteNew writes p as certFile (0644) and keyFile (0600). It refuses when
// either exists, and leaves neither behind when it fails.
func WriteNew(p PEM, certFile, keyFile string) error {
	for _, f := range []string{certFile, keyFile} {
		if _, err := os.Lstat(f); err == nil {
			return fmt.Errorf("%w %s", ErrExists, f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := writeExclusive(keyFile, p.Key, 0o600); err != nil {
		return err
	}
	if err := writeExclusive(certFile, p.Cert, 0o644); err != nil {
		os.Remove(keyFile)
		return err
	}
	return nil
}

// writeExclusive creates file (never replacing one) with mode, whatever
// the umask.
func writeExclusive(file string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w %s", ErrExists, file)
	}
	if err != nil {
		return err
	}
	err = f.Chmod(mode)
	if _, werr := f.Write(data); err == nil {
		err = werr
	}
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file)
	}
	return err
}
