package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestRunCSV(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), slog.New(slog.DiscardHandler), &out, "dgxh100", false); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^GPU-[0-9a-f-]{36}, NVIDIA H100 80GB HBM3, 81920, 550\.54\.15$`)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8 {
		t.Fatalf("got %d lines:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("line %q is not nvidia-smi style", l)
		}
	}
}

func TestRunJSON(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), slog.New(slog.DiscardHandler), &out, "dgxa100", true); err != nil {
		t.Fatal(err)
	}
	var devs []api.Device
	if err := json.Unmarshal(out.Bytes(), &devs); err != nil {
		t.Fatal(err)
	}
	if len(devs) != 8 || !devs[7].Healthy || devs[7].Index != 7 {
		t.Fatalf("devices = %+v", devs)
	}
}

func TestRunNoneAndUnknown(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), slog.New(slog.DiscardHandler), &out, "none", false); err != nil || out.Len() != 0 {
		t.Fatalf("none: %v, output %q", err, out.String())
	}
	if err := run(t.Context(), slog.New(slog.DiscardHandler), &out, "bogus", false); err == nil {
		t.Fatal("unknown fake set accepted")
	}
}
