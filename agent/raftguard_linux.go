//go:build linux

package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// A task shares the host's network. A coordinator on the same host
// listens for Raft on a port a task could connect to: Raft runs over
// mutual TLS, so a task without the cluster key fails the handshake, but
// it should not reach the port at all. A root agent whose tasks run under
// uids of their own therefore refuses those uids the Raft ports of the
// coordinators on this host, with a netfilter rule that matches a
// socket's owner (iptables -m owner), added once the agent has
// identified itself (the coordinators then answer who they are) and
// removed when it stops. A rule carries the agent's uid range in its
// comment, and that range is the agent's alone on the host (uidclaim):
// rules an agent killed with SIGKILL left behind are removed at its next
// start. Without iptables, or where it fails, the agent says so and runs
// on: the handshake still refuses a task.

// raftGuard is the rules one agent added.
type raftGuard struct {
	tag   string     // the comment that marks them
	uids  string     // lo-hi
	rules [][]string // each rule's spec after the chain, with its binary first
	log   *slog.Logger
}

// guardRaft refuses the agent's task uids the Raft ports of the
// coordinators on this host, and returns what removes the rules.
func (a *Agent) guardRaft(ctx context.Context) func() {
	lo, hi, ok := a.taskUIDRange()
	if !ok || os.Geteuid() != 0 {
		return func() {}
	}
	g := &raftGuard{uids: fmt.Sprintf("%d-%d", lo, hi), log: a.log}
	g.tag = "gpulayer-raftguard:" + g.uids
	g.clearStale(ctx)
	for _, addr := range a.localRaftAddrs(ctx) {
		if err := g.refuse(ctx, addr); err != nil {
			a.log.Warn("could not refuse the task users the Raft port of a coordinator on this host; a task reaching it still fails the TLS handshake", "raft_addr", addr, "error", err)
			continue
		}
		a.log.Info("task users refused a local coordinator's Raft port", "raft_addr", addr, "uids", g.uids)
	}
	return g.remove
}

// localRaftAddrs asks each coordinator the agent was given who it is
// (GET /v1/status/self), and keeps the Raft addresses on this host.
func (a *Agent) localRaftAddrs(ctx context.Context) []string {
	var out []string
	for _, base := range a.client.Addrs() { // each address, a comma-separated list split
		c, err := client.New(client.Config{Addrs: []string{base}, CAFile: a.cfg.CAFile, ClientCert: a.cfg.ClientCert, ClientKey: a.cfg.ClientKey, FailFast: true})
		if err != nil {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var self api.SelfResponse
		err = c.Do(qctx, "GET", "/v1/status/self", nil, &self)
		cancel()
		if err != nil {
			a.log.Debug("asking a coordinator for its Raft address", "coordinator", base, "error", err)
			continue
		}
		host, _, err := net.SplitHostPort(self.RaftAddr)
		if err == nil && isLocalIP(net.ParseIP(host)) {
			out = append(out, self.RaftAddr)
		}
	}
	return out
}

// isLocalIP reports whether ip is this host's: loopback, or an address
// of one of its interfaces.
func isLocalIP(ip net.IP) bool {
	if ip == nil {
		return false
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// refuse adds the rule that refuses the task uids TCP to addr.
func (g *raftGuard) refuse(ctx context.Context, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	bin := "iptables"
	if ip.To4() == nil {
		bin = "ip6tables"
	}
	if ip.IsUnspecified() {
		host = "" // every address of the host
	}
	spec := []string{"OUTPUT", "-p", "tcp"}
	if host != "" {
		spec = append(spec, "-d", host)
	}
	spec = append(spec, "--dport", port, "-m", "owner", "--uid-owner", g.uids, "-m", "comment", "--comment", g.tag, "-j", "REJECT", "--reject-with", "tcp-reset")
	if err := runTables(ctx, bin, append([]string{"-I"}, spec...)); err != nil {
		return err
	}
	g.rules = append(g.rules, append([]string{bin}, spec...))
	return nil
}

// remove deletes the rules g added.
func (g *raftGuard) remove() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, r := range g.rules {
		if err := runTables(ctx, r[0], append([]string{"-D"}, r[1:]...)); err != nil {
			g.log.Warn("removing a Raft port rule", "rule", strings.Join(r, " "), "error", err)
		}
	}
	g.rules = nil
}

// clearStale deletes rules with g's tag that a killed agent left.
func (g *raftGuard) clearStale(ctx context.Context) {
	for _, bin := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(bin); err != nil {
			continue
		}
		out, err := exec.CommandContext(ctx, bin, "-w", "5", "-S", "OUTPUT").Output()
		if err != nil {
			continue
		}
		for _, del := range staleRules(out, g.tag) {
			if err := runTables(ctx, bin, del); err == nil {
				g.log.Info("removed a Raft port rule a stopped agent left", "rule", strings.Join(del, " "))
			}
		}
	}
}

// staleRules reads `iptables -S OUTPUT` and returns, for each rule whose
// comment is tag, the arguments that delete it. iptables prints a comment
// in double quotes; ours has no space, so each field is one argument.
func staleRules(listing []byte, tag string) [][]string {
	var out [][]string
	for _, line := range bytes.Split(listing, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 2 || f[0] != "-A" {
			continue
		}
		mine := false
		for i := range f {
			f[i] = strings.Trim(f[i], `"`)
			mine = mine || (f[i] == tag && i > 0 && f[i-1] == "--comment")
		}
		if mine {
			out = append(out, append([]string{"-D"}, f[1:]...))
		}
	}
	return out
}

var errNoTables = errors.New("no iptables on this host")

func runTables(ctx context.Context, bin string, args []string) error {
	if _, err := exec.LookPath(bin); err != nil {
		return errNoTables
	}
	out, err := exec.CommandContext(ctx, bin, append([]string{"-w", "5"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
