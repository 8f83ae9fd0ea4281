// Command gpulayer is the single GpuLayer binary: coordinator, agent,
// built-in executor plugins, the CLI for people, and `gpulayer dev`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// exitError carries a process exit code through the command tree.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
	sub     map[string]*command
}

func commands() map[string]*command {
	return map[string]*command{
		"coordinator": {summary: "run or initialise a coordinator", sub: map[string]*command{
			"init": {summary: "mint the first admin and join tokens", run: coordinatorInit},
			"run":  {summary: "run a coordinator", run: coordinatorRun},
		}},
		"agent": {summary: "run an agent on a GPU node", sub: map[string]*command{
			"run": {summary: "register (or resume) and run tasks", run: agentRun},
		}},
		"job": {summary: "submit and inspect jobs", sub: map[string]*command{
			"submit": {summary: "submit a job", run: jobSubmit},
			"list":   {summary: "list jobs", run: jobList},
			"status": {summary: "show a job and its tasks", run: jobStatus},
			"logs":   {summary: "print a job's output", run: jobLogs},
			"cancel": {summary: "cancel a job", run: jobCancel},
		}},
		"worker": {summary: "inspect and manage workers (admin)", sub: map[string]*command{
			"list":    {summary: "list workers", run: workerList},
			"status":  {summary: "show one worker", run: workerStatus},
			"reissue": {summary: "give a worker a new credential (the old one dies)", run: workerReissue},
			"revoke":  {summary: "revoke a worker for good; its tasks are requeued", run: workerRevoke},
			"approve": {summary: "let a pending worker take work", run: workerApprove},
		}},
		"token": {summary: "client, join and instance tokens (admin)", sub: map[string]*command{
			"create": {summary: "mint a token, printed once: --kind client|join|instance", run: tokenCreate},
			"list":   {summary: "list tokens (never their secrets)", run: tokenList},
			"revoke": {summary: "revoke a token by id", run: tokenRevoke},
		}},
		"enrollment": {summary: "allowlist enrollment without tokens (admin)", sub: map[string]*command{
			"cluster": {summary: "enrollment clusters and their source networks", sub: map[string]*command{
				"set":  {summary: "create a cluster or replace its networks: KEY --cidrs A,B", run: clusterSet},
				"list": {summary: "list clusters", run: clusterList},
			}},
			"add":    {summary: "allowlist a machine: KEY --cluster C --public-ip IP", run: enrollmentAdd},
			"list":   {summary: "list allowlist rows", run: enrollmentList},
			"revoke": {summary: "revoke a row and the worker enrolled through it", run: enrollmentRevoke},
		}},
		"audit": {summary: "print the audit log (admin)", run: auditList},
		"group": {summary: "manage worker groups (admin)", sub: map[string]*command{
			"create": {summary: "create a group: GROUP [worker:ID|group:ID]...", run: groupCreate},
			"add":    {summary: "add members: GROUP worker:ID|group:ID...", run: groupAdd},
			"remove": {summary: "remove members: GROUP worker:ID|group:ID...", run: groupRemove},
			"delete": {summary: "delete a group", run: groupDelete},
			"list":   {summary: "list groups (or show one)", run: groupList},
		}},
		"operator": {summary: "cluster administration (admin)", sub: map[string]*command{
			"raft": {summary: "Raft membership", sub: map[string]*command{
				"list-peers":  {summary: "list the Raft servers", run: raftListPeers},
				"add-peer":    {summary: "add a server", run: raftAddPeer},
				"remove-peer": {summary: "remove a server", run: raftRemovePeer},
			}},
			"snapshot": {summary: "backups of the replicated state", sub: map[string]*command{
				"save":    {summary: "write a snapshot to FILE", run: snapshotSave},
				"restore": {summary: "replace the whole state with FILE", run: snapshotRestore},
			}},
		}},
		"tls": {summary: "certificates for mutual TLS between coordinators", sub: map[string]*command{
			"ca": {summary: "the cluster's certificate authority", sub: map[string]*command{
				"create": {summary: "write gpulayer-ca.pem and gpulayer-ca-key.pem", run: tlsCACreate},
			}},
			"cert": {summary: "server and client certificates", sub: map[string]*command{
				"create": {summary: "sign a certificate: --server|--client", run: tlsCertCreate},
			}},
		}},
		"plugin": {summary: "serve a built-in executor plugin (run by the agent)", run: pluginServe},
		"dev":    {summary: "a coordinator and an agent in one process", run: devRun},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := dispatch(ctx, commands(), os.Args[1:], "gpulayer")
	stop()
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "gpulayer:", err)
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, cmds map[string]*command, args []string, prefix string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(os.Stderr, cmds, prefix)
		if len(args) == 0 {
			return exitError{2}
		}
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(os.Stderr, cmds, prefix)
		return fmt.Errorf("unknown command %q", strings.TrimSpace(prefix+" "+args[0]))
	}
	if c.sub != nil {
		return dispatch(ctx, c.sub, args[1:], prefix+" "+args[0])
	}
	return c.run(ctx, args[1:])
}

func usage(w io.Writer, cmds map[string]*command, prefix string) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", prefix)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, cmds[n].summary)
	}
}
