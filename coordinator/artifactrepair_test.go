package coordinator_test

// Artifacts outlive any node (issue 27): a coordinator that lost its
// artifact files, or its whole data dir, gets back the blobs it should
// hold; it never stays recorded as a holder of bytes it lacks; the leader
// brings every artifact back to two live holders; and every coordinator
// serves every artifact throughout.

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// blobPath is where node n keeps the bytes of d.
func blobPath(n *coordinatortest.Node, d string) string {
	return filepath.Join(n.DataDir, "artifacts", d[:2], d)
}

// holdsBytes reports whether n's disk has exactly body under d.
func holdsBytes(n *coordinatortest.Node, d string, body []byte) bool {
	got, err := os.ReadFile(blobPath(n, d))
	return err == nil && bytes.Equal(got, body)
}

// uploadToTwo starts a cluster of three, uploads body and returns the
// cluster, the digest, the leader and the other holder the upload was
// acknowledged with.
func uploadToTwo(t *testing.T, body []byte) (*coordinatortest.Cluster, string, *coordinatortest.Node, *coordinatortest.Node) {
	t.Helper()
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	leader := c.WaitLeader(15 * time.Second)
	c.Converged(10 * time.Second)
	d := digest(body)
	a, err := c.Client(c.AdminToken).PutArtifact(t.Context(), d, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Holders) != 2 || !slices.Contains(a.Holders, leader.ID) {
		t.Fatalf("acknowledged with holders %v", a.Holders)
	}
	var other *coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader && slices.Contains(a.Holders, n.ID) {
			other = n
		}
	}
	c.Converged(10 * time.Second)
	return c, d, leader, other
}

// record is the artifact's record on the current leader's replica.
func record(t *testing.T, c *coordinatortest.Cluster, d string) artifacts.Artifact {
	t.Helper()
	l := c.Leader()
	if l == nil || l.Server() == nil {
		return artifacts.Artifact{}
	}
	a, _ := l.Server().Store().Artifact(d)
	return a
}

// healthy reports whether the record lists at least two coordinators of
// the cluster, each with the bytes on its disk, and names none that
// lacks them.
func healthy(t *testing.T, c *coordinatortest.Cluster, d string, body []byte) bool {
	a := record(t, c, d)
	live := 0
	for _, h := range a.Holders {
		for _, n := range c.Nodes {
			if n.ID != h || !n.Running() {
				continue
			}
			if !holdsBytes(n, d, body) {
				return false
			}
			live++
		}
	}
	return live >= 2
}

// readEverywhere reads the artifact through every running coordinator,
// each on its own.
func readEverywhere(t *testing.T, c *coordinatortest.Cluster, d string, body []byte) {
	t.Helper()
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		one, err := client.New(client.Config{Addrs: []string{n.URL}, Token: c.AdminToken, MaxRetryWait: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := one.GetArtifact(t.Context(), d, &buf); err != nil || !bytes.Equal(buf.Bytes(), body) {
			t.Fatalf("reading %s through %s: %q %v", d, n.ID, buf.Bytes(), err)
		}
	}
}

// noLieAfterCorrection watches the record on the leader's replica while
// cond is awaited: once it has stopped naming victim while victim's disk
// lacks the bytes (the record from before the loss, which no code could
// correct while victim was down), it must never name it so again. It
// reports whether the stale claim was seen at all.
func noLieAfterCorrection(t *testing.T, c *coordinatortest.Cluster, victim *coordinatortest.Node, d string, body []byte, timeout time.Duration, what string, cond func() bool) (staleSeen bool) {
	t.Helper()
	corrected := false
	coordinatortest.WaitFor(t, timeout, what, func() bool {
		// The record first, the disk after: a copy, once fetched, is not
		// removed, so a record naming victim that is followed by a
		// missing file was a claim without the bytes.
		listed := slices.Contains(record(t, c, d).Holders, victim.ID)
		has := holdsBytes(victim, d, body)
		switch {
		case listed && !has && corrected:
			t.Errorf("the record names %s as a holder again while its disk lacks the bytes", victim.ID)
		case listed && !has:
			staleSeen = true
		default:
			corrected = true
		}
		return corrected && cond()
	})
	return staleSeen
}

func holderEvents(c *coordinatortest.Cluster, d string) []string {
	var out []string
	for _, ev := range c.Leader().Server().Store().Audit(audit.Filter{Kinds: []string{"artifact"}}) {
		if ev.Subject == d {
			out = append(out, ev.Kind+" "+ev.Detail)
		}
	}
	return out
}

// A holder's artifact files are lost while it is down (its Raft data is
// intact). Back up, it has itself dropped from the record at once, fetches
// the bytes from the other holder, verifies them, and is recorded again;
// the artifact is read through every coordinator throughout.
func TestArtifactCopyComesBackAfterItsFilesAreLost(t *testing.T) {
	body := []byte("weights whose second copy loses its disk")
	c, d, _, victim := uploadToTwo(t, body)
	c.Stop(victim)
	if err := os.RemoveAll(filepath.Join(victim.DataDir, "artifacts")); err != nil {
		t.Fatal(err)
	}
	readEverywhere(t, c, d, body)
	c.Restart(victim)
	stale := noLieAfterCorrection(t, c, victim, d, body, 30*time.Second, "the lost copy repaired", func() bool {
		return slices.Contains(record(t, c, d).Holders, victim.ID) && healthy(t, c, d, body)
	})
	if !stale {
		t.Log("the stale record was corrected before the first look")
	}
	events := holderEvents(c, d)
	if !slices.Contains(events, "artifact.holder_dropped "+victim.ID+": missing") || !slices.Contains(events, "artifact.holder_added "+victim.ID+": fetched") {
		t.Fatalf("audit %q: want the drop of %s's missing copy, then its fetched copy recorded", events, victim.ID)
	}
	if i, j := slices.Index(events, "artifact.holder_dropped "+victim.ID+": missing"), slices.Index(events, "artifact.holder_added "+victim.ID+": fetched"); i > j {
		t.Fatalf("audit %q: recorded again before it was dropped", events)
	}
	readEverywhere(t, c, d, body)
	c.Converged(10 * time.Second)
}

// A holder loses its whole data dir: the operator removes it from the
// configuration (the leader then copies the artifact to the third
// coordinator, the only one left without a copy), and adds it back as a
// new, empty member. It catches up on the record that still names it,
// and, lacking the bytes, has itself dropped, fetches them and is
// recorded again. Every coordinator serves the artifact.
func TestArtifactsComeBackToANodeThatLostItsDataDir(t *testing.T) {
	body := []byte("a checkpoint that outlives a whole data dir")
	c, d, leader, victim := uploadToTwo(t, body)
	var third *coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader && n != victim {
			third = n
		}
	}
	admin := c.Client(c.AdminToken)
	c.Stop(victim)
	if _, err := admin.RemovePeer(t.Context(), victim.ID); err != nil {
		t.Fatal(err)
	}
	// Two coordinators are left, one of which holds no copy: the leader
	// has it take one, and records it once it holds the bytes.
	coordinatortest.WaitFor(t, 30*time.Second, "a copy on "+third.ID, func() bool {
		return slices.Contains(record(t, c, d).Holders, third.ID)
	})
	if !holdsBytes(third, d, body) {
		t.Fatalf("%s recorded as a holder without the bytes", third.ID)
	}
	readEverywhere(t, c, d, body)

	// The disk is replaced: nothing of the data dir is left but the
	// bootstrap credentials an operator installs with the node.
	boot, err := os.ReadFile(filepath.Join(c.Nodes[0].DataDir, coordinator.BootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(victim.DataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(victim.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(victim.DataDir, coordinator.BootstrapFile), boot, 0o600); err != nil {
		t.Fatal(err)
	}
	c.Restart(victim)
	if _, err := admin.AddPeer(t.Context(), victim.ID, victim.Server().Node().Addr()); err != nil {
		t.Fatal(err)
	}
	noLieAfterCorrection(t, c, victim, d, body, 45*time.Second, "the new member repaired", func() bool {
		own, ok := victim.Server().Store().Artifact(d)
		return ok && slices.Contains(own.Holders, victim.ID) && slices.Contains(record(t, c, d).Holders, victim.ID) && healthy(t, c, d, body)
	})
	events := holderEvents(c, d)
	if !slices.Contains(events, "artifact.holder_added "+third.ID+": copied") || !slices.Contains(events, "artifact.holder_dropped "+victim.ID+": missing") {
		t.Fatalf("audit %q", events)
	}
	readEverywhere(t, c, d, body)
	c.Converged(20 * time.Second)
}

// The leader's artifact files are wiped under it while it runs: a read
// through any coordinator is served from the other holder, and the leader
// repairs its own copy.
func TestArtifactReadsSurviveTheLeadersFilesWiped(t *testing.T) {
	body := []byte("read while the leader's disk is empty")
	c, d, leader, _ := uploadToTwo(t, body)
	if err := os.RemoveAll(filepath.Join(leader.DataDir, "artifacts")); err != nil {
		t.Fatal(err)
	}
	readEverywhere(t, c, d, body)
	// A copy whose size is wrong is not served either.
	if err := os.MkdirAll(filepath.Dir(blobPath(leader, d)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blobPath(leader, d), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	readEverywhere(t, c, d, body)
	coordinatortest.WaitFor(t, 30*time.Second, "the leader's copy repaired", func() bool {
		return c.Leader() == leader && slices.Contains(record(t, c, d).Holders, leader.ID) && healthy(t, c, d, body)
	})
	events := strings.Join(holderEvents(c, d), "; ")
	if !strings.Contains(events, "artifact.holder_dropped "+leader.ID) {
		t.Fatalf("audit %q: the leader never dropped its lost copy", events)
	}
}

// The repair routes are another coordinator's alone (the route table's
// matrix checks every credential is refused): a coordinator, by the
// cluster key's certificate, reads a copy, has one taken, and reports a
// holder, and what it sends is validated; a report forwarded by another
// coordinator is refused, as a node address is.
func TestArtifactRepairRoutesTakeOnlyACoordinator(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	id := h.Server.Node().ID()
	body := []byte("one coordinator's copy")
	d := digest(body)
	if _, err := h.Client(t, h.AdminToken).PutArtifact(t.Context(), d, body); err != nil {
		t.Fatal(err)
	}
	https := strings.Replace(h.URL, "http://", "https://", 1)
	peer := peerClient(t, filepath.Join(h.DataDir, coordinator.ClusterKeyFileName))
	do := func(client *http.Client, base, method, path, body string, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	plain := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/v1/operator/local/artifacts/" + d, "/v1/operator/artifacts/" + d + "/holders/" + id} {
		for _, tok := range []string{"", h.AdminToken} {
			method := map[bool]string{true: "GET", false: "PUT"}[strings.Contains(path, "local")]
			hdr := map[string]string{}
			if tok != "" {
				hdr["Authorization"] = "Bearer " + tok
			}
			if code, _ := do(plain, h.URL, method, path, `{"held":false,"reason":"missing"}`, hdr); code != http.StatusUnauthorized && code != http.StatusForbidden {
				t.Fatalf("%s %s without a peer certificate: HTTP %d", method, path, code)
			}
		}
	}
	if a, _ := h.Server.Store().Artifact(d); !slices.Equal(a.Holders, []string{id}) {
		t.Fatalf("holders %v after refused calls", a.Holders)
	}

	if code, got := do(peer, https, "GET", "/v1/operator/local/artifacts/"+d, "", nil); code != http.StatusOK || got != string(body) {
		t.Fatalf("a coordinator reads the copy: HTTP %d %q", code, got)
	}
	if code, _ := do(peer, https, "GET", "/v1/operator/local/artifacts/"+digest([]byte("absent")), "", nil); code != http.StatusNotFound {
		t.Fatalf("a copy not held: HTTP %d", code)
	}
	if code, got := do(peer, https, "POST", "/v1/operator/local/artifacts/"+d+"/copy", `{"size":22,"sources":[]}`, nil); code != http.StatusCreated {
		t.Fatalf("a copy held already is verified and confirmed: HTTP %d %s", code, got)
	}
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		want                     int
	}{
		{"a copy with a negative size", "POST", "/v1/operator/local/artifacts/" + d + "/copy", `{"size":-1,"sources":["c9"]}`, nil, http.StatusBadRequest},
		{"a copy from too many sources", "POST", "/v1/operator/local/artifacts/" + d + "/copy", `{"size":22,"sources":["` + strings.Repeat(`a","`, 16) + `a"]}`, nil, http.StatusBadRequest},
		{"a copy nobody can serve", "POST", "/v1/operator/local/artifacts/" + digest([]byte("absent")) + "/copy", `{"size":6,"sources":["c9"]}`, nil, http.StatusNotFound},
		{"a report with an unknown reason", "PUT", "/v1/operator/artifacts/" + d + "/holders/" + id, `{"held":false,"reason":"bored"}`, nil, http.StatusBadRequest},
		{"a drop that says held", "PUT", "/v1/operator/artifacts/" + d + "/holders/" + id, `{"held":true,"reason":"missing"}`, nil, http.StatusBadRequest},
		{"a report for no coordinator", "PUT", "/v1/operator/artifacts/" + d + "/holders/c9", `{"held":false,"reason":"missing"}`, nil, http.StatusNotFound},
		{"a report forwarded by another coordinator", "PUT", "/v1/operator/artifacts/" + d + "/holders/" + id, `{"held":false,"reason":"missing"}`, map[string]string{"X-GpuLayer-Forwarded-By": "c9"}, http.StatusForbidden},
		{"a holder of the wrong size", "PUT", "/v1/operator/artifacts/" + d + "/holders/" + id, `{"held":true,"size":5,"reason":"fetched"}`, nil, http.StatusConflict},
		{"a holder of a digest without a record", "PUT", "/v1/operator/artifacts/" + digest([]byte("absent")) + "/holders/" + id, `{"held":true,"size":6,"reason":"fetched"}`, nil, http.StatusNotFound},
	} {
		if code, got := do(peer, https, tc.method, tc.path, tc.body, tc.header); code != tc.want {
			t.Errorf("%s: HTTP %d %s, want %d", tc.name, code, got, tc.want)
		}
	}
	if a, _ := h.Server.Store().Artifact(d); !slices.Equal(a.Holders, []string{id}) {
		t.Fatalf("holders %v after refused reports", a.Holders)
	}
	if _, ok := h.Server.Store().Artifact(digest([]byte("absent"))); ok {
		t.Fatal("a report created a record")
	}
	// A real report: dropped, then recorded again.
	if code, got := do(peer, https, "PUT", "/v1/operator/artifacts/"+d+"/holders/"+id, `{"held":false,"reason":"damaged"}`, nil); code != http.StatusOK {
		t.Fatalf("drop: HTTP %d %s", code, got)
	}
	if a, _ := h.Server.Store().Artifact(d); len(a.Holders) != 0 {
		t.Fatalf("holders %v after the drop", a.Holders)
	}
	if code, got := do(peer, https, "PUT", "/v1/operator/artifacts/"+d+"/holders/"+id, `{"held":true,"size":22,"reason":"fetched"}`, nil); code != http.StatusOK {
		t.Fatalf("add: HTTP %d %s", code, got)
	}
	if a, _ := h.Server.Store().Artifact(d); !slices.Equal(a.Holders, []string{id}) {
		t.Fatalf("holders %v after it was recorded again", a.Holders)
	}
}
