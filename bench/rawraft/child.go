package rawraft

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// ChildMain is the body of one raw Raft node process. The node that
// becomes leader runs the load and prints its Result as JSON on stdout,
// then exits; the others serve until their stdin closes.
func ChildMain(args []string, stores map[string]StoreFactory) error {
	fs := flag.NewFlagSet("rawraft", flag.ContinueOnError)
	self := fs.Int("self", 0, "index of this node in -peers")
	peerList := fs.String("peers", "", "id=addr,id=addr,id=addr")
	dir := fs.String("dir", "", "data dir")
	storeName := fs.String("store", "boltdb", "log store")
	entrySize := fs.Int("entry-size", 256, "bytes per entry")
	concList := fs.String("conc", "1,64", "concurrencies")
	dur := fs.Duration("duration", 2*time.Second, "measured time per concurrency")
	warm := fs.Duration("warmup", 500*time.Millisecond, "unmeasured time per concurrency")
	if err := fs.Parse(args); err != nil {
		return err
	}
	factory, ok := stores[*storeName]
	if !ok {
		return fmt.Errorf("rawraft: unknown store %q", *storeName)
	}
	peers, err := parsePeers(*peerList)
	if err != nil {
		return err
	}
	var concs []int
	for _, c := range strings.Split(*concList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			return fmt.Errorf("rawraft: bad concurrency %q", c)
		}
		concs = append(concs, n)
	}
	n, err := open(peers[*self], peers, *dir, factory)
	if err != nil {
		return err
	}
	defer n.close()

	leader, err := awaitLeader(n, 20*time.Second)
	if err != nil {
		return err
	}
	if leader != peers[*self].Addr {
		_, _ = io.Copy(io.Discard, os.Stdin) // serve until the parent closes stdin
		return nil
	}
	entry := make([]byte, *entrySize)
	for i := range entry {
		entry[i] = byte('a' + i%26)
	}
	res := Result{Store: *storeName, EntrySize: *entrySize}
	for _, c := range concs {
		res.Runs = append(res.Runs, load(n.raft, entry, c, *warm, *dur))
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func awaitLeader(n *node, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if addr, _ := n.raft.LeaderWithID(); addr != "" {
			return string(addr), nil
		}
		if time.Now().After(deadline) {
			return "", errors.New("rawraft: no leader elected")
		}
		<-tick.C
	}
}

func parsePeers(s string) ([]Peer, error) {
	var out []Peer
	for _, p := range strings.Split(s, ",") {
		id, addr, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("rawraft: bad peer %q", p)
		}
		out = append(out, Peer{ID: id, Addr: addr})
	}
	if len(out) == 0 {
		return nil, errors.New("rawraft: no peers")
	}
	return out, nil
}
