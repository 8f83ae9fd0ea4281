package api

import (
	"errors"
	"testing"
)

func TestCheckExecDir(t *testing.T) {
	for _, tc := range []struct {
		dir string
		ok  bool
	}{
		{"", true}, {".", true}, {"sub", true}, {"a/b", true}, {"a/../b", true}, {"./a/", true}, {"..a", true},
		{"/", false}, {"/etc", false}, {"..", false}, {"../", false}, {"../../", false}, {"a/../../b", false},
		{"a/../..", false}, {"\\evil", false}, {"a\x00b", false},
	} {
		err := CheckExecDir(tc.dir)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrExecDirOutside)) {
			t.Errorf("CheckExecDir(%q) = %v, want ok=%v", tc.dir, err, tc.ok)
		}
	}
}
