//go:build linux

package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// diskSize is the size of the small filesystem a node's data dir is moved
// onto: room for its Raft log and snapshots of a few hundred jobs.
const diskSize = "48m"

// A real full filesystem under a coordinator's data dir (a tmpfs of its
// own, filled to ENOSPC with a ballast file), on a follower and on the
// leader: every acknowledged job is kept once, the cluster goes on taking
// writes through the two nodes with room, an artifact upload to the full
// node is refused whole, and once space is freed the node catches up to
// byte-identical state. The injected disk faults of the fault campaign
// (internal/faultstore) reach Raft's stores only; this reaches every
// write a coordinator makes to its data dir.
func TestRealFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts coordinator processes")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a small filesystem needs root")
	}
	for _, role := range []string{"follower", "leader"} {
		t.Run(role, func(t *testing.T) {
			c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Processes: true})
			admin := c.Client(c.AdminToken)
			submitted := submitKeyed(t, admin, role+"-before", 20)

			// Every node onto a small filesystem of its own, one at a time
			// (each restart keeps a majority), so that whichever leads
			// afterwards can be filled.
			for _, n := range c.Nodes {
				onSmallDisk(t, c, n)
			}
			c.WaitLeader(30 * time.Second)
			var full *coordinatortest.Node
			coordinatortest.WaitFor(t, 30*time.Second, "a "+role+" to fill", func() bool {
				l := c.Leader()
				if l == nil {
					return false
				}
				full = l
				if role == "follower" {
					full = c.Nodes[(l.Index+1)%len(c.Nodes)]
				}
				return true
			})
			ballast := fill(t, full.DataDir)
			t.Logf("%s %s: data dir full (ballast %d MiB)", role, full.ID, ballast/(1<<20))

			// An artifact sent to the full node: a follower forwards it to
			// the leader, which stores it; the leader itself cannot, and
			// says so as its own fault, without naming its paths.
			body := bytes.Repeat([]byte("gpulayer full disk "), 1<<16) // 1.2 MiB
			sum := sha256.Sum256(body)
			digest := hex.EncodeToString(sum[:])
			direct, err := client.New(client.Config{Addrs: []string{full.URL}, Token: c.AdminToken, MaxRetryWait: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			_, err = direct.PutArtifact(t.Context(), digest, body)
			var apiErr *api.Error
			switch {
			case role == "follower" && err != nil:
				t.Errorf("an artifact upload through the full follower: %v", err)
			case role == "leader" && err == nil:
				t.Errorf("an artifact upload to the leader with a full disk was acknowledged")
			case role == "leader" && (!errors.As(err, &apiErr) || apiErr.Code != api.CodeInternal || strings.Contains(err.Error(), full.DataDir)):
				t.Errorf("an artifact upload to the full leader: %v, want an internal error that names no path", err)
			}

			// Writes go on: every submit is acknowledged, resent by the
			// client under its idempotency key where the outcome was
			// unknown (a leader that cannot write its log steps down).
			submitted = append(submitted, submitKeyed(t, admin, role+"-full", 60)...)
			// A leader that cannot write its log steps down (hashicorp/raft),
			// and one of the nodes with room leads.
			if l := c.WaitLeader(30 * time.Second); role == "leader" && l == full {
				t.Errorf("%s still leads with a full disk", full.ID)
			}

			// Room again: the node comes back (restarted if the full disk
			// ended it, as its supervisor would) and catches up.
			if err := os.Remove(filepath.Join(full.DataDir, "ballast")); err != nil {
				t.Fatal(err)
			}
			for _, e := range c.Exits() {
				t.Logf("exited by itself: %+v", e)
			}
			if !full.Running() {
				c.Restart(full)
			}
			submitted = append(submitted, submitKeyed(t, admin, role+"-after", 10)...)
			c.Converged(60 * time.Second)

			jobs := map[string]int{}
			page, err := admin.Jobs(t.Context(), 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range page {
				jobs[j.Name]++
			}
			for _, name := range submitted {
				if jobs[name] != 1 {
					t.Errorf("job %s is kept %d times, want once", name, jobs[name])
				}
			}
			if role == "leader" {
				if _, err := direct.PutArtifact(t.Context(), digest, body); err != nil {
					t.Errorf("an artifact upload once space was freed: %v", err)
				}
			}
		})
	}
}

// submitKeyed submits n jobs named prefix-i under idempotency keys of the
// same name, and returns their names; every submit must be acknowledged.
func submitKeyed(t *testing.T, cl *client.Client, prefix string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		// Padded, so that the Raft log must grow past what its file has.
		spec := api.JobSpec{Name: name, Executor: "exec", Config: []byte(`{"command":"true","args":["` + strings.Repeat("x", 16<<10) + `"]}`), IdempotencyKey: name}
		if _, err := cl.SubmitJob(t.Context(), spec); err != nil {
			t.Fatalf("submit %s: %v", name, err)
		}
		names = append(names, name)
	}
	return names
}

// onSmallDisk moves n's data dir onto a tmpfs of diskSize: n is stopped,
// its files copied onto the new filesystem mounted at the same path, and
// n restarted there. The filesystem is unmounted when the test ends.
func onSmallDisk(t *testing.T, c *coordinatortest.Cluster, n *coordinatortest.Node) {
	t.Helper()
	c.Stop(n)
	saved := n.DataDir + ".saved"
	if err := os.Rename(n.DataDir, saved); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(n.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", n.DataDir, "tmpfs", 0, "size="+diskSize+",mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		// Detached: the node may still be stopping when this runs.
		if err := syscall.Unmount(n.DataDir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", n.DataDir, err)
		}
	})
	if out, err := exec.Command("cp", "-a", saved+"/.", n.DataDir).CombinedOutput(); err != nil {
		t.Fatalf("copy the data dir: %v\n%s", err, out)
	}
	c.Restart(n)
	c.Converged(30 * time.Second)
}

// fill writes a ballast file in dir until the filesystem is full, and
// returns its size.
func fill(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "ballast"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 256<<10)
	var size int64
	for {
		n, err := f.Write(chunk)
		size += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			return size
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
