package main

import (
	"bufio"
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gpulayer dev listens on its HTTP port alone: its Raft runs in process,
// with no port a task on the host (or anyone) could send Raft messages
// to. Before, dev's Raft listened on a loopback port, which a task could
// reach (its TLS handshake then failed for want of the cluster key).
func TestDevListensOnItsHTTPPortAlone(t *testing.T) {
	envFile := filepath.Join(t.TempDir(), "env")
	p := startBinary(t, "dev", "--http-addr", "127.0.0.1:0", "--env-file", envFile, "--log-level", "warn")
	var env []byte
	deadline := time.Now().Add(60 * time.Second)
	for {
		if b, err := os.ReadFile(envFile); err == nil && bytes.Count(b, []byte("\n")) == 2 {
			env = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gpulayer dev not ready\n%s", p.stderr.String())
		}
		select {
		case err := <-p.exited:
			t.Fatalf("gpulayer dev exited: %v\n%s", err, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	var httpPort int
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(line, "GPULAYER_ADDR="); ok {
			u, err := url.Parse(strings.Trim(v, `"'`))
			if err != nil {
				t.Fatal(err)
			}
			httpPort, _ = strconv.Atoi(u.Port())
		}
	}
	if httpPort == 0 {
		t.Fatalf("no GPULAYER_ADDR in %q", env)
	}
	ports := listeningPorts(t, p.cmd.Process.Pid)
	if !slices.Equal(ports, []int{httpPort}) {
		t.Fatalf("gpulayer dev listens on TCP ports %v, want its HTTP port %d alone", ports, httpPort)
	}
}

// listeningPorts lists the TCP ports pid listens on: its sockets (from
// /proc/<pid>/fd) that /proc/net/tcp{,6} list in state LISTEN.
func listeningPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fields[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if err == nil {
				ports = append(ports, int(port))
			}
		}
		f.Close()
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}
