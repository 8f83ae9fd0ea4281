// Command clusterscenario drives a containerised GpuLayer cluster (three
// coordinators and two agents, deploy/cluster/docker-compose.yml) through
// a scripted fault scenario and checks what must hold afterwards:
//
//  1. wait until every coordinator names the same leader and both agents
//     are registered;
//  2. submit -jobs short echo jobs from a background loop (idempotency keys,
//     retries), while
//  3. the leader container is killed (docker kill) and, once a new leader
//     has served an agent, started again;
//  4. one follower is cut off the network (docker network disconnect) for
//     -partition and reconnected, jobs still flowing;
//  5. once every job is acknowledged, all three coordinators restart at
//     once (docker restart);
//  6. every job must end, every task must have succeeded exactly once, and
//     all three coordinators must report the same digest, applied index
//     and job count.
//
// It prints one summary line on stdout and exits 1 when an invariant is
// violated (2 on bad flags). Progress goes to stderr. The admin token is
// read from GPULAYER_TOKEN and never printed.
//
// The failover time it reports runs from the moment the killed leader's
// container stopped (Docker's State.FinishedAt) to the first task
// assignment made after it: the first agent acquire a new leader served
// (each assignment is stamped by the leader that made it; containers share
// the host's clock). The election time beside it runs from the same moment
// to the first poll in which a surviving coordinator named a new leader.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg config
	var urls, containers, ids, advertise, agents string
	flag.StringVar(&urls, "coordinators", "http://127.0.0.1:7171,http://127.0.0.1:7172,http://127.0.0.1:7173", "coordinator URLs reachable from here, comma separated, in the order of -node-ids")
	flag.StringVar(&containers, "containers", "", "coordinator container names, comma separated, in the order of -node-ids (required)")
	flag.StringVar(&ids, "node-ids", "c1,c2,c3", "coordinator Raft node ids, comma separated")
	flag.StringVar(&advertise, "advertise", "", "coordinator URLs as the cluster advertises them (default <scheme>://<node-id>:7070, the scheme of -coordinators); requests to them are sent to the matching -coordinators URL")
	flag.StringVar(&cfg.caFile, "ca-file", "", "PEM bundle trusted for the coordinators' HTTPS (default: the system roots)")
	flag.StringVar(&agents, "agents", "", "agent container names, comma separated (checked to be still running at the end)")
	flag.StringVar(&cfg.workers, "workers", "agent1,agent2", "worker ids that must be registered before jobs are submitted")
	flag.StringVar(&cfg.network, "network", "", "docker network the coordinators share (default: the first container's only network)")
	flag.StringVar(&cfg.docker, "docker", "docker", "docker command")
	flag.IntVar(&cfg.jobs, "jobs", 200, "jobs to submit")
	flag.DurationVar(&cfg.pace, "pace", 50*time.Millisecond, "time between two submissions")
	flag.DurationVar(&cfg.partition, "partition", 5*time.Second, "how long the follower stays cut off")
	flag.DurationVar(&cfg.timeout, "timeout", 6*time.Minute, "deadline for the whole scenario")
	flag.StringVar(&cfg.runID, "run-id", "", "prefix of the idempotency keys (default: from the clock)")
	flag.DurationVar(&cfg.maxFailover, "max-failover", 0, "fail when the measured failover takes longer (0: only report it)")
	flag.Parse()

	cfg.token = os.Getenv("GPULAYER_TOKEN")
	if cfg.token == "" {
		fmt.Fprintln(os.Stderr, "clusterscenario: set GPULAYER_TOKEN to the admin token")
		return 2
	}
	nodes, err := parseNodes(split(ids), split(urls), split(containers), split(advertise))
	if err != nil {
		fmt.Fprintln(os.Stderr, "clusterscenario:", err)
		return 2
	}
	cfg.nodes = nodes
	cfg.agents = split(agents)
	if cfg.runID == "" {
		cfg.runID = fmt.Sprintf("cs%d", time.Now().UnixNano())
	}
	if cfg.jobs < 10 {
		fmt.Fprintln(os.Stderr, "clusterscenario: -jobs must be at least 10")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	s, err := newScenario(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clusterscenario:", err)
		return 2
	}
	res, err := s.run(ctx)
	if err != nil {
		s.logf("FAILED: %v", err)
		fmt.Printf("cluster test: FAILED: %v\n", err)
		return 1
	}
	fmt.Println(res.summary())
	return 0
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseNodes(ids, urls, containers, advertise []string) ([]*node, error) {
	if len(ids) < 3 {
		return nil, fmt.Errorf("need at least three coordinators, got -node-ids %v", ids)
	}
	if len(urls) != len(ids) || len(containers) != len(ids) {
		return nil, fmt.Errorf("-coordinators (%d), -containers (%d) and -node-ids (%d) must list the same number of coordinators", len(urls), len(containers), len(ids))
	}
	if len(advertise) != 0 && len(advertise) != len(ids) {
		return nil, fmt.Errorf("-advertise lists %d URLs for %d coordinators", len(advertise), len(ids))
	}
	out := make([]*node, len(ids))
	for i, id := range ids {
		scheme := "http"
		if strings.HasPrefix(urls[i], "https://") {
			scheme = "https"
		}
		adv := scheme + "://" + id + ":7070"
		if len(advertise) != 0 {
			adv = advertise[i]
		}
		out[i] = &node{id: id, url: strings.TrimRight(urls[i], "/"), container: containers[i], advertise: strings.TrimRight(adv, "/")}
	}
	return out, nil
}
