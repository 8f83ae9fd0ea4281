package executor

import (
	"errors"
	"testing"
)

func TestTaskUser(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		uid, gid uint32
		ok, bad  bool
	}{
		{"none", map[string]string{"X": "1"}, 0, 0, false, false},
		{"pair", map[string]string{EnvTaskUID: "61000", EnvTaskGID: "61001"}, 61000, 61001, true, false},
		{"uid only", map[string]string{EnvTaskUID: "61000"}, 0, 0, false, true},
		{"gid only", map[string]string{EnvTaskGID: "61000"}, 0, 0, false, true},
		{"root uid", map[string]string{EnvTaskUID: "0", EnvTaskGID: "61000"}, 0, 0, false, true},
		{"root gid", map[string]string{EnvTaskUID: "61000", EnvTaskGID: "0"}, 0, 0, false, true},
		{"negative", map[string]string{EnvTaskUID: "-1", EnvTaskGID: "61000"}, 0, 0, false, true},
		{"too big", map[string]string{EnvTaskUID: "4294967296", EnvTaskGID: "61000"}, 0, 0, false, true},
		{"name", map[string]string{EnvTaskUID: "nobody", EnvTaskGID: "61000"}, 0, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uid, gid, ok, err := TaskUser(Task{Env: tc.env})
			if tc.bad != errors.Is(err, ErrBadTaskUser) {
				t.Fatalf("err = %v, want bad=%v", err, tc.bad)
			}
			if uid != tc.uid || gid != tc.gid || ok != tc.ok {
				t.Errorf("got %d/%d ok=%v, want %d/%d ok=%v", uid, gid, ok, tc.uid, tc.gid, tc.ok)
			}
		})
	}
}
