package pluginhost_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/pluginhost"
)

// plugin writes an executable stand-in named gpulayer-executor-<name>
// into dir with exactly mode perm.
func plugin(t *testing.T, dir, name string, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, pluginhost.BinaryPrefix+name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 1\n"), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

// The attack: any executable in --plugin-dir was advertised, world-
// writable files and symbolic links included. Only regular, executable
// files of root or the agent's user that group and others cannot write
// are; Get refuses the others with ErrPluginUntrusted.
func TestUntrustedPluginsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	good := plugin(t, dir, "good", 0o755)
	plugin(t, dir, "world-writable", 0o777)
	plugin(t, dir, "group-writable", 0o775)
	if err := os.Symlink(good, filepath.Join(dir, pluginhost.BinaryPrefix+"symlink")); err != nil {
		t.Fatal(err)
	}
	refused := []string{"world-writable", "group-writable", "symlink"}
	if os.Geteuid() == 0 {
		foreign := plugin(t, dir, "foreign", 0o755)
		if err := os.Chown(foreign, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		refused = append(refused, "foreign")
	}
	h := newHost(t, dir)
	if got, want := h.Names(), []string{"exec", "good"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, name := range refused {
		if _, err := h.Get(t.Context(), name); !errors.Is(err, pluginhost.ErrPluginUntrusted) {
			t.Errorf("Get(%q) = %v, want ErrPluginUntrusted", name, err)
		}
	}
}

// A plugin directory others may write to lets them swap any plugin in
// it: nothing in it is advertised.
func TestWritablePluginDirRefused(t *testing.T) {
	dir := t.TempDir()
	plugin(t, dir, "good", 0o755)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, dir)
	if got := h.Names(); !slices.Equal(got, []string{"exec"}) {
		t.Errorf("Names() = %v, want only the built-in", got)
	}
	if _, err := h.Get(t.Context(), "good"); !errors.Is(err, pluginhost.ErrPluginUntrusted) {
		t.Errorf("Get(good) = %v, want ErrPluginUntrusted", err)
	}
}

func sumFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// pinnedHost is newHost with pins.
func pinnedHost(t *testing.T, dir string, pins map[string]string) *pluginhost.Host {
	t.Helper()
	h, err := pluginhost.New(pluginhost.Config{
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		SelfExe:      os.Args[0],
		SelfArgs:     func(name string) []string { return []string{serveArg, name} },
		PluginDir:    dir,
		PluginSHA256: pins,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// A plugin pinned to a SHA-256 runs only while its file matches: a
// mismatch (the file was replaced) is neither advertised nor launched,
// whether the pin comes from --plugin-sha256 or plugins.sha256.
func TestPinnedPlugins(t *testing.T) {
	built := filepath.Join(buildPlugins(t), pluginhost.BinaryPrefix+"echo")
	right := sumFile(t, built)
	wrong := strings.Repeat("0", 64)
	writePins := func(t *testing.T, dir, sum string, perm os.FileMode) {
		t.Helper()
		line := fmt.Sprintf("%s  %secho\n", sum, pluginhost.BinaryPrefix)
		path := filepath.Join(dir, pluginhost.PinsFile)
		if err := os.WriteFile(path, []byte(line), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		flag     string // pin given in the config, if any
		file     string // pin in plugins.sha256, if any
		filePerm os.FileMode
		ok       bool
	}{
		{"flag matches", right, "", 0, true},
		{"file matches", "", right, 0o644, true},
		{"both match", right, right, 0o644, true},
		{"flag mismatch", wrong, "", 0, false},
		{"file mismatch", "", wrong, 0o644, false},
		{"flag and file disagree", right, wrong, 0o644, false},
		{"writable pins file", "", right, 0o666, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(built)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, pluginhost.BinaryPrefix+"echo"), b, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.file != "" {
				writePins(t, dir, tc.file, tc.filePerm)
			}
			pins := map[string]string{}
			if tc.flag != "" {
				pins["echo"] = tc.flag
			}
			h := pinnedHost(t, dir, pins)
			advertised := slices.Contains(h.Names(), "echo")
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			_, err = h.Get(ctx, "echo")
			if tc.ok {
				if !advertised || err != nil {
					t.Fatalf("advertised=%v Get=%v, want a running plugin", advertised, err)
				}
				return
			}
			if advertised || !errors.Is(err, pluginhost.ErrPluginUntrusted) {
				t.Fatalf("advertised=%v Get=%v, want refused with ErrPluginUntrusted", advertised, err)
			}
		})
	}
}

func TestBadPinRefused(t *testing.T) {
	for _, pins := range []map[string]string{{"echo": "abc"}, {"Bad.Name": strings.Repeat("0", 64)}} {
		_, err := pluginhost.New(pluginhost.Config{SelfExe: os.Args[0], PluginSHA256: pins})
		if !errors.Is(err, pluginhost.ErrBadPin) {
			t.Errorf("New with pins %v = %v, want ErrBadPin", pins, err)
		}
	}
	for _, s := range []string{"echo", "=" + strings.Repeat("0", 64), "echo=xyz"} {
		if _, _, err := pluginhost.ParsePin(s); !errors.Is(err, pluginhost.ErrBadPin) {
			t.Errorf("ParsePin(%q) = %v, want ErrBadPin", s, err)
		}
	}
	if name, sum, err := pluginhost.ParsePin("echo=" + strings.Repeat("A", 64)); err != nil || name != "echo" || sum != strings.Repeat("a", 64) {
		t.Errorf("ParsePin = %q %q %v", name, sum, err)
	}
}
