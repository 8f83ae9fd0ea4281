package coordinator_test

// Allowlist enrollment (seed 003) over the real HTTP server: the source
// address decides, and only a trusted proxy may say what it is.

import (
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// allowlist creates cluster key with cidrs and one pending row per
// key → public ip.
func allowlist(t *testing.T, admin *client.Client, cluster string, cidrs []string, rows map[string]string) {
	t.Helper()
	if _, err := admin.PutCluster(t.Context(), api.ClusterRequest{ClusterKey: cluster, AllowedSourceCIDRs: cidrs}); err != nil {
		t.Fatalf("cluster %s: %v", cluster, err)
	}
	for key, ip := range rows {
		if _, err := admin.CreateEnrollment(t.Context(), api.EnrollmentRequest{ClusterKey: cluster, ExternalWorkerKey: key, PublicIP: ip}); err != nil {
			t.Fatalf("row %s: %v", key, err)
		}
	}
}

func enrollBody(t *testing.T, cluster, key, workerID string) []byte {
	return jsonBody(t, api.EnrollRequest{ClusterKey: cluster, ExternalWorkerKey: key, WorkerID: workerID, Capabilities: []string{"*"}, Executors: []string{"exec"}})
}

// from makes a request say, through X-Real-IP, that it comes from ip. It
// is believed only where the test client's loopback is a trusted proxy
// (behindLoopbackProxy): no proxy is trusted by default.
func from(ip string) map[string]string { return map[string]string{"X-Real-IP": ip} }

// behindLoopbackProxy trusts loopback as a reverse proxy, so that the
// test client speaks as other addresses with from().
func behindLoopbackProxy(c *coordinator.Config) {
	c.TrustedProxyCIDRs = []string{"127.0.0.0/8", "::1/128"}
}

func TestAllowlistEnrollment(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: behindLoopbackProxy})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	allowlist(t, admin, "lab", []string{"203.0.113.0/24"}, map[string]string{"vm-1": "203.0.113.5", "vm-2": "203.0.113.6/32"})
	if _, err := admin.CreateEnrollment(ctx, api.EnrollmentRequest{ClusterKey: "lab", ExternalWorkerKey: "vm-out", PublicIP: "198.51.100.1"}); !client.IsCode(err, api.CodeInvalidArgument) {
		t.Fatalf("row outside the cluster's networks: %v, want invalid_argument", err)
	}
	if _, err := admin.CreateEnrollment(ctx, api.EnrollmentRequest{ClusterKey: "ghost", ExternalWorkerKey: "vm-x", PublicIP: "203.0.113.9"}); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("row in an unknown cluster: %v", err)
	}
	if _, err := admin.PutCluster(ctx, api.ClusterRequest{ClusterKey: "lab", AllowedSourceCIDRs: []string{"198.51.100.0/24"}}); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("narrowing a cluster away from its rows: %v, want conflict", err)
	}

	// No bearer at all; the source address (from the trusted loopback
	// proxy's X-Real-IP) must be the row's.
	wantCode(t, "wrong source", call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "lab", "vm-1", "vm1"), from("203.0.113.77")), 403, api.CodeEnrollmentRefused)
	wantCode(t, "unknown key", call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "lab", "vm-9", "vm9"), from("203.0.113.5")), 403, api.CodeEnrollmentRefused)
	wantCode(t, "wrong cluster", call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "other", "vm-1", "vm1"), from("203.0.113.5")), 403, api.CodeEnrollmentRefused)
	wantCode(t, "no determinable address", call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "lab", "vm-1", "vm1"), from("not-an-address")), 400, api.CodeInvalidArgument)
	var reg api.RegisterResponse
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "lab", "vm-1", "vm1"), from("203.0.113.5")), 201, &reg)
	if reg.WorkerID != "vm1" || !strings.HasPrefix(reg.WorkerToken, "glw_") || reg.ExternalWorkerKey != "vm-1" || reg.ClusterKey != "lab" ||
		reg.Worker.Origin != api.OriginEnrollment || reg.Worker.ClusterKey != "lab" || reg.Status != api.WorkerReady {
		t.Fatalf("enroll answer %+v", reg)
	}
	row, _ := h.Server.Store().Enrollment("vm-1")
	if row.Status != api.EnrollmentEnrolled || row.WorkerID != "vm1" {
		t.Fatalf("row after enrollment %+v", row)
	}
	again := call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "lab", "vm-1", "vm1b"), from("203.0.113.5"))
	wantCode(t, "re-enroll", again, 409, api.CodeConflict)
	if strings.Contains(string(again.raw), "glw_") {
		t.Fatal("re-enrollment handed out a credential")
	}
	worker := h.Client(t, reg.WorkerToken)
	if _, err := admin.SubmitJob(ctx, execJob()); err != nil {
		t.Fatal(err)
	}
	acquireOne(t, worker)

	// Revoking the row revokes its worker, and the row stays revoked.
	revoked, err := admin.RevokeEnrollment(ctx, "vm-1")
	if err != nil || revoked.Status != api.EnrollmentRevoked {
		t.Fatalf("revoke row: %+v %v", revoked, err)
	}
	if _, err := worker.Self(ctx); !client.IsCode(err, api.CodeWorkerRevoked) {
		t.Fatalf("worker of a revoked row: %v, want worker_revoked", err)
	}
	wantCode(t, "enroll a revoked row", call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "lab", "vm-1", "vm1c"), from("203.0.113.5")), 403, api.CodeEnrollmentRefused)
	if _, err := admin.CreateEnrollment(ctx, api.EnrollmentRequest{ClusterKey: "lab", ExternalWorkerKey: "vm-1", PublicIP: "203.0.113.5"}); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("re-adding a revoked row: %v, want conflict", err)
	}
	allowlist(t, admin, "lab", []string{"203.0.113.0/24"}, map[string]string{"vm-1-again": "203.0.113.5"})
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "lab", "vm-1-again", "vm1d"), from("203.0.113.5")), 201, nil)
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "lab", "vm-2", ""), from("203.0.113.6")), 201, nil)
}

// An untrusted peer cannot choose its source address with X-Forwarded-For
// or X-Real-IP: with no proxy configured (the default: a local process
// could otherwise pick its address), or with another network's, the test
// client on loopback is just 127.0.0.1, whatever it writes.
func TestEnrollmentSpoofingFromAnUntrustedPeer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []string
	}{
		{"no proxy configured", nil},
		{"none", []string{"none"}},
		{"another network's proxy", []string{"192.0.2.0/24"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) { c.TrustedProxyCIDRs = tc.trusted }})
			spoofedEnrollmentRefused(t, h)
		})
	}
}

// spoofedEnrollmentRefused checks that h takes the test client for
// 127.0.0.1 whatever forwarding headers it writes.
func spoofedEnrollmentRefused(t *testing.T, h *coordinatortest.Harness) {
	t.Helper()
	admin := h.Client(t, h.AdminToken)
	allowlist(t, admin, "mixed", []string{"127.0.0.0/8", "203.0.113.0/24"}, map[string]string{"far": "203.0.113.5", "near": "127.0.0.1"})
	for name, hdr := range map[string]map[string]string{
		"X-Forwarded-For": {"X-Forwarded-For": "203.0.113.5"},
		"X-Real-IP":       {"X-Real-IP": "203.0.113.5"},
		"both":            {"X-Real-IP": "203.0.113.5", "X-Forwarded-For": "203.0.113.5"},
	} {
		wantCode(t, "spoofed "+name, call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "mixed", "far", "far1"), hdr), 403, api.CodeEnrollmentRefused)
	}
	// The connection's own address is what counts.
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "mixed", "near", "near1"), map[string]string{"X-Forwarded-For": "203.0.113.5"}), 201, nil)
	evs, err := admin.Audit(t.Context(), client.AuditQuery{Kinds: []string{"enrollment.accepted"}})
	if err != nil || len(evs.Events) != 1 || evs.Events[0].Source != "127.0.0.1" {
		t.Fatalf("accepted enrollment audited as %+v %v, want source 127.0.0.1", evs.Events, err)
	}
}

// Behind a trusted proxy, the right-most X-Forwarded-For hop that is not a
// trusted proxy is the source, across several headers; what a client wrote
// to the left of its proxy's hop does not count.
func TestEnrollmentBehindTrustedProxies(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.TrustedProxyCIDRs = []string{"127.0.0.0/8", "10.0.0.0/8"}
	}})
	admin := h.Client(t, h.AdminToken)
	allowlist(t, admin, "edge", []string{"203.0.113.0/24"}, map[string]string{"a": "203.0.113.5", "b": "203.0.113.6"})
	post := func(key, id string, xff ...string) rawResp {
		req := enrollBody(t, "edge", key, id)
		return callHeaders(t, h.URL, "POST", "/v1/workers/enroll", req, "X-Forwarded-For", xff)
	}
	wantCode(t, "client-written hop left of the proxy's", post("a", "a1", "203.0.113.5, 198.51.100.9"), 403, api.CodeEnrollmentRefused)
	wantCode(t, "several headers, spoof on the left", post("a", "a1", "203.0.113.5", "198.51.100.9, 10.1.1.1"), 403, api.CodeEnrollmentRefused)
	decodeOK(t, post("a", "a1", "198.51.100.9, 203.0.113.5", "10.2.2.2, 10.1.1.1"), 201, nil)
	// X-Real-IP from a trusted proxy wins over X-Forwarded-For.
	r := call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "edge", "b", "b1"), map[string]string{"X-Real-IP": "203.0.113.6", "X-Forwarded-For": "198.51.100.1"})
	decodeOK(t, r, 201, nil)
}

// Through a follower: the follower forwards to the leader with the client
// address it determined, and the leader, which trusts its peers, uses it.
func TestEnrollmentThroughAFollower(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: behindLoopbackProxy})
	admin := c.Client(c.AdminToken)
	allowlist(t, admin, "remote", []string{"203.0.113.0/24"}, map[string]string{"vm-f": "203.0.113.7", "vm-g": "203.0.113.8"})
	leader := c.WaitLeader(10 * time.Second)
	var follower *coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader {
			follower = n
			break
		}
	}
	c.Converged(10 * time.Second)
	wantCode(t, "another address through a follower", call(t, follower.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "remote", "vm-g", "g1"), from("203.0.113.99")), 403, api.CodeEnrollmentRefused)
	var reg api.RegisterResponse
	decodeOK(t, call(t, follower.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "remote", "vm-f", "f1"), from("203.0.113.7")), 201, &reg)
	evs, err := admin.Audit(t.Context(), client.AuditQuery{Kinds: []string{"enrollment.accepted"}})
	if err != nil || len(evs.Events) != 1 || evs.Events[0].Source != "203.0.113.7" || evs.Events[0].WorkerID != "f1" {
		t.Fatalf("audit through the follower: %+v %v", evs.Events, err)
	}
}

// --require-ip-binding: a worker enrolled through the allowlist must keep
// calling from inside its cluster's networks.
func TestRequireIPBinding(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		behindLoopbackProxy(c)
		c.RequireIPBinding = true
	}})
	admin := h.Client(t, h.AdminToken)
	allowlist(t, admin, "dc", []string{"203.0.113.0/24"}, map[string]string{"vm-b": "203.0.113.5"})
	var reg api.RegisterResponse
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "dc", "vm-b", "bound"), from("203.0.113.5")), 201, &reg)
	hb := []byte(`{}`)
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/self/heartbeat", reg.WorkerToken, hb, from("203.0.113.5")), 200, nil)
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/self/heartbeat", reg.WorkerToken, hb, from("203.0.113.200")), 200, nil)
	wantCode(t, "outside the cluster", call(t, h.URL, "POST", "/v1/workers/self/heartbeat", reg.WorkerToken, hb, from("198.51.100.1")), 403, api.CodeEnrollmentRefused)
	wantCode(t, "from loopback", call(t, h.URL, "GET", "/v1/workers/self", reg.WorkerToken, nil, nil), 403, api.CodeEnrollmentRefused)
	// A worker that registered with a join token is not bound.
	tok, _ := enroll(t, h, "joined")
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/self/heartbeat", tok, hb, from("198.51.100.1")), 200, nil)
}
