package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
)

// A config file that holds a secret (secretFlags: the join, admin and
// instance tokens) must be readable by its owner alone, and owned by root
// or by the user running the command, as ssh requires of a private key:
// a root agent's tasks run as other local users, and a token in a
// world-readable file is theirs to read. A file without a secret may stay
// readable (the examples in deploy/ are). Coordinator run reads the same
// files and takes no secret flag today; the check covers it all the same.

// errConfigSecret: a config file holds a secret others can read.
var errConfigSecret = errors.New("config file holds a secret others can read")

// checkSecretConfig refuses file, described by fi, if values holds a
// secret and the file is not private to its owner.
func checkSecretConfig(file string, fi fs.FileInfo, values map[string]any) error {
	var secrets []string
	for k := range values {
		if _, ok := secretFlags[k]; ok {
			secrets = append(secrets, k)
		}
	}
	if len(secrets) == 0 || runtime.GOOS == "windows" {
		return nil
	}
	sort.Strings(secrets)
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		return fmt.Errorf("%w: config %s holds a secret (%s) and is mode %04o: make it 0600", errConfigSecret, file, secrets[0], mode)
	}
	if uid, ok := fileOwner(fi); ok && uid != 0 && uid != os.Geteuid() {
		return fmt.Errorf("%w: config %s holds a secret (%s) and is owned by uid %d: make root or uid %d its owner", errConfigSecret, file, secrets[0], uid, os.Geteuid())
	}
	return nil
}
