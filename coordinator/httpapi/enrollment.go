package httpapi

import (
	"errors"
	"net/http"
	"net/netip"
	"regexp"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/translate"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Allowlist enrollment (seed 003): an admin declares clusters (the source
// networks their machines call from) and allowlist rows (an external
// worker key and the public address it will call from); a machine then
// enrolls with no bearer token at all, and its source address decides.

const maxClusterCIDRs = 64

var externalKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$`)

func validateExternalKey(k string) error {
	if !externalKeyPattern.MatchString(k) {
		return invalidf("external_worker_key %q must match %s", k, externalKeyPattern.String())
	}
	return nil
}

// canonicalCIDRs parses CIDRs (a bare address is its /32 or /128) and
// returns them canonical, sorted and unique. A prefix with host bits set
// is refused as a likely typo.
func canonicalCIDRs(in []string) ([]string, error) {
	if len(in) == 0 || len(in) > maxClusterCIDRs {
		return nil, invalidf("allowed_source_cidrs needs 1 to %d networks", maxClusterCIDRs)
	}
	out := make([]string, 0, len(in))
	for _, c := range in {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			a, aerr := netip.ParseAddr(c)
			if aerr != nil {
				return nil, invalidf("allowed_source_cidrs: %q is not a CIDR or an address", c)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		if p.Masked() != p {
			return nil, invalidf("allowed_source_cidrs: %q has host bits set; did you mean %s?", c, p.Masked())
		}
		out = append(out, p.String())
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parsePublicIP takes one address, or an address with a /32 or /128.
func parsePublicIP(s string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), nil
	}
	if p, err := netip.ParsePrefix(s); err == nil && p.IsSingleIP() {
		return p.Addr().Unmap(), nil
	}
	return netip.Addr{}, invalidf("public_ip %q must be one IP address", s)
}

func (s *Server) putCluster(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.ClusterRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := validateID("cluster_key", req.ClusterKey); err != nil {
		return err
	}
	cidrs, err := canonicalCIDRs(req.AllowedSourceCIDRs)
	if err != nil {
		return err
	}
	out, err := state.Propose[enroll.ClusterOutcome](r.Context(), s.propose, command.PutCluster{ClusterKey: req.ClusterKey, CIDRs: cidrs, By: p.Name, Source: sourceString(r), Now: s.now()})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if out.Created {
		status = http.StatusCreated
	}
	s.log.Info("enrollment cluster set", "cluster_key", req.ClusterKey, "by", p.Name)
	writeJSON(w, status, api.ClusterResponse{Cluster: view.Cluster(out.Cluster)})
	return nil
}

func (s *Server) listClusters(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	writeJSON(w, http.StatusOK, api.ClusterList{Clusters: view.Clusters(s.store.Clusters())})
	return nil
}

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	key := r.PathValue("key")
	if err := validateID("cluster_key", key); err != nil {
		return err
	}
	c, err := s.store.Cluster(key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.ClusterResponse{Cluster: view.Cluster(c)})
	return nil
}

func (s *Server) createEnrollment(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.EnrollmentRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := validateID("cluster_key", req.ClusterKey); err != nil {
		return err
	}
	if err := validateExternalKey(req.ExternalWorkerKey); err != nil {
		return err
	}
	ip, err := parsePublicIP(req.PublicIP)
	if err != nil {
		return err
	}
	row, err := state.Propose[enroll.Enrollment](r.Context(), s.propose, command.CreateEnrollment{ClusterKey: req.ClusterKey, ExternalWorkerKey: req.ExternalWorkerKey, PublicIP: ip.String(), By: p.Name, Source: sourceString(r), Now: s.now()})
	if err != nil {
		return err
	}
	s.log.Info("allowlist row created", "external_worker_key", req.ExternalWorkerKey, "cluster_key", req.ClusterKey, "by", p.Name)
	writeJSON(w, http.StatusCreated, api.EnrollmentResponse{Enrollment: view.Enrollment(row)})
	return nil
}

func (s *Server) listEnrollments(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	writeJSON(w, http.StatusOK, api.EnrollmentList{Enrollments: view.Enrollments(s.store.Enrollments())})
	return nil
}

func (s *Server) getEnrollment(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	key := r.PathValue("key")
	if err := validateExternalKey(key); err != nil {
		return err
	}
	e, err := s.store.Enrollment(key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.EnrollmentResponse{Enrollment: view.Enrollment(e)})
	return nil
}

func (s *Server) revokeEnrollment(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	key := r.PathValue("key")
	if err := validateExternalKey(key); err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	row, err := state.Propose[enroll.Enrollment](r.Context(), s.propose, command.RevokeEnrollment{ExternalWorkerKey: key, By: p.Name, Source: sourceString(r), Now: s.now()})
	if err != nil {
		return err
	}
	s.log.Info("allowlist row revoked", "external_worker_key", key, "by", p.Name)
	writeJSON(w, http.StatusOK, api.EnrollmentResponse{Enrollment: view.Enrollment(row)})
	return nil
}

// enroll redeems an allowlist row. It takes no credential: the cluster
// key, the external worker key and the request's source address (never
// an address in the body) must match an active row. The handler checks
// first, so that refusals, which anyone can cause, are audited through the
// coalescing sink and cost no Raft write; the state machine checks again
// when the enrollment applies, so a row is enrolled at most once.
func (s *Server) enroll(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	var req api.EnrollRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if req.ClusterKey == "" || req.ExternalWorkerKey == "" {
		return invalidf("cluster_key and external_worker_key are required")
	}
	if err := validateID("cluster_key", req.ClusterKey); err != nil {
		return err
	}
	if err := validateExternalKey(req.ExternalWorkerKey); err != nil {
		return err
	}
	reg := api.RegisterRequest{WorkerID: req.WorkerID, Labels: req.Labels, Capabilities: req.Capabilities, Executors: req.Executors, Devices: req.Devices}
	if err := validateRegister(&reg); err != nil {
		return err
	}
	req.Devices = verifyDevices(req.Devices)
	src := source(r)
	if !src.IsValid() {
		return invalidf("the source address of this request could not be determined (a trusted proxy sent an empty or malformed X-Real-IP or X-Forwarded-For)")
	}
	if reason, err := s.store.EnrollCheck(req.ClusterKey, req.ExternalWorkerKey, src); err != nil {
		code := api.CodeEnrollmentRefused
		msg := "enrollment refused: no allowlist entry matches this cluster key, external worker key and source address"
		if errors.Is(err, state.ErrConflict) {
			code, msg = api.CodeConflict, "allowlist row "+req.ExternalWorkerKey+" is already enrolled; it hands out no second credential"
		}
		s.audit.add(command.AuditEvent{Time: s.now(), Kind: "enrollment.refused", Subject: req.ExternalWorkerKey, Source: src.String(),
			Route: "POST /v1/workers/enroll", Code: string(code), Detail: "cluster " + req.ClusterKey + ": " + reason})
		s.log.Info("enrollment refused", "request_id", requestID(r), "external_worker_key", req.ExternalWorkerKey, "cluster_key", req.ClusterKey, "source", src.String(), "reason", reason)
		return newError(code, "%s", msg)
	}
	id := req.WorkerID
	if id == "" {
		id = "w" + auth.NewID(8)
	}
	minted, err := auth.Mint(api.PrefixWorker)
	if err != nil {
		return err
	}
	now := s.now()
	out, err := state.Propose[state.RegisterOutcome](r.Context(), s.propose, command.EnrollWorker{
		ClusterKey:        req.ClusterKey,
		ExternalWorkerKey: req.ExternalWorkerKey,
		SourceIP:          src.String(),
		WorkerID:          id,
		Credential:        command.CredentialRecord{ID: minted.Token.ID, Kind: string(auth.KindWorker), Name: id, Hash: minted.Hash, CreatedAt: now},
		Labels:            req.Labels,
		Capabilities:      req.Capabilities,
		Executors:         req.Executors,
		Devices:           translate.DevicesFromAPI(req.Devices),
		Now:               now,
	})
	if err != nil {
		return err
	}
	s.log.Info("worker enrolled", "worker_id", id, "external_worker_key", req.ExternalWorkerKey, "cluster_key", req.ClusterKey, "source", src.String())
	wk := view.Worker(out.Worker)
	writeJSON(w, http.StatusCreated, api.RegisterResponse{WorkerID: id, WorkerToken: minted.Token.String(), Status: wk.Status, Worker: &wk,
		ExternalWorkerKey: req.ExternalWorkerKey, ClusterKey: req.ClusterKey})
	return nil
}
