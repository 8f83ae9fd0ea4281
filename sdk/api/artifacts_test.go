package api

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestArtifactRefDecodesBothShapes(t *testing.T) {
	d := strings.Repeat("ab", 32)
	cases := []struct {
		name  string
		json  string
		want  ArtifactRef
		stage string
		bad   bool
	}{
		{"bare digest (jobs stored before paths)", `"` + d + `"`, ArtifactRef{SHA256: d}, "inputs/" + d, false},
		{"object without path", `{"sha256":"` + d + `"}`, ArtifactRef{SHA256: d}, "inputs/" + d, false},
		{"object with path", `{"sha256":"` + d + `","path":"data/train.csv"}`, ArtifactRef{SHA256: d, Path: "data/train.csv"}, "data/train.csv", false},
		{"unknown field", `{"sha256":"` + d + `","mode":"0755"}`, ArtifactRef{}, "", true},
		{"a number", `7`, ArtifactRef{}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []ArtifactRef
			err := json.Unmarshal([]byte("["+c.json+"]"), &got)
			if c.bad {
				if err == nil {
					t.Fatalf("decoded %+v, want an error", got)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0] != c.want || got[0].StagePath() != c.stage {
				t.Fatalf("got %+v (%v), want %+v staged at %s", got, err, c.want, c.stage)
			}
		})
	}
}

func TestTaskArtifactDecodesBothShapes(t *testing.T) {
	d := strings.Repeat("cd", 32)
	var got []TaskArtifact
	if err := json.Unmarshal([]byte(`["`+d+`",{"path":"out/a.bin","sha256":"`+d+`","size":3}]`), &got); err != nil {
		t.Fatal(err)
	}
	want := []TaskArtifact{{SHA256: d}, {Path: "out/a.bin", SHA256: d, Size: 3}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if err := json.Unmarshal([]byte(`[{"sha256":"`+d+`","owner":"root"}]`), &got); err == nil {
		t.Fatal("an unknown field was accepted")
	}
}

func TestCheckArtifactPath(t *testing.T) {
	cases := []struct {
		path string
		ok   bool
	}{
		{"data.csv", true},
		{"data/train/x.csv", true},
		{".hidden", true},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/../../x", false},
		{"a/../b", false}, // not clean: two spellings of one file
		{"a//b", false},
		{"a/./b", false},
		{"a/", false},
		{"/etc/passwd", false},
		{`a\b`, false},
		{"a\x00b", false},
		{strings.Repeat("a", MaxPathBytes+1), false},
	}
	for _, c := range cases {
		err := CheckArtifactPath(c.path)
		if (err == nil) != c.ok {
			t.Errorf("CheckArtifactPath(%q) = %v, want ok=%v", c.path, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrArtifactPath) {
			t.Errorf("CheckArtifactPath(%q) = %v, not ErrArtifactPath", c.path, err)
		}
	}
}

func TestCheckOutputGlob(t *testing.T) {
	cases := []struct {
		glob string
		ok   bool
	}{
		{"out/*.bin", true},
		{"results", true},
		{"ckpt-[0-9]*", true},
		{"out/[", false},
		{"../*", false},
		{"/tmp/*", false},
		{strings.Repeat("a", MaxOutputGlobBytes+1), false},
	}
	for _, c := range cases {
		if err := CheckOutputGlob(c.glob); (err == nil) != c.ok {
			t.Errorf("CheckOutputGlob(%q) = %v, want ok=%v", c.glob, err, c.ok)
		}
	}
}
