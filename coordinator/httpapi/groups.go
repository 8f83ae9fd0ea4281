package httpapi

import (
	"fmt"
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/translate"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The group routes validate shape and ids here; whether members exist,
// whether a change would make a cycle, and whether a group may be deleted
// are decided by the state machine, atomically with the write.

func validateMember(field string, m api.GroupMember) error {
	if m.Kind != api.MemberWorker && m.Kind != api.MemberGroup {
		return invalidf("%s.kind must be %q or %q", field, api.MemberWorker, api.MemberGroup)
	}
	return validateID(field+".id", m.ID)
}

func (s *Server) createGroup(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.CreateGroupRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if req.GroupID == "" {
		return invalidf("group_id is required")
	}
	if err := validateID("group_id", req.GroupID); err != nil {
		return err
	}
	if len(req.Members) > groups.MaxMembers {
		return invalidf("members: at most %d", groups.MaxMembers)
	}
	for i, m := range req.Members {
		if err := validateMember(fmt.Sprintf("members[%d]", i), m); err != nil {
			return err
		}
	}
	g, err := state.Propose[groups.Record](r.Context(), s.propose, command.CreateGroup{GroupID: req.GroupID, Members: translate.GroupMembersFromAPI(req.Members), By: p.Name, Now: s.now(), Source: sourceString(r)})
	if err != nil {
		return err
	}
	s.log.Info("group created", "group_id", req.GroupID, "by", p.Name)
	writeJSON(w, http.StatusCreated, api.GroupResponse{Group: view.Group(g)})
	return nil
}

func (s *Server) listGroups(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	writeJSON(w, http.StatusOK, api.GroupList{Groups: view.Groups(s.store.Groups())})
	return nil
}

func (s *Server) getGroup(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	id := r.PathValue("id")
	if err := validateID("group id", id); err != nil {
		return err
	}
	g, err := s.store.Group(id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.GroupResponse{Group: view.Group(g)})
	return nil
}

func (s *Server) addGroupMember(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	if err := validateID("group id", id); err != nil {
		return err
	}
	var m api.GroupMember
	if _, err := decodeRequest(r, &m, false); err != nil {
		return err
	}
	if err := validateMember("member", m); err != nil {
		return err
	}
	g, err := state.Propose[groups.Record](r.Context(), s.propose, command.AddGroupMember{GroupID: id, Member: translate.GroupMemberFromAPI(m), By: p.Name, Now: s.now(), Source: sourceString(r)})
	if err != nil {
		return err
	}
	s.log.Info("group member added", "group_id", id, "member", m.String(), "by", p.Name)
	writeJSON(w, http.StatusOK, api.GroupResponse{Group: view.Group(g)})
	return nil
}

func (s *Server) removeGroupMember(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	if err := validateID("group id", id); err != nil {
		return err
	}
	m := api.GroupMember{Kind: r.PathValue("kind"), ID: r.PathValue("member")}
	if err := validateMember("member", m); err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	g, err := state.Propose[groups.Record](r.Context(), s.propose, command.RemoveGroupMember{GroupID: id, Member: translate.GroupMemberFromAPI(m), By: p.Name, Now: s.now(), Source: sourceString(r)})
	if err != nil {
		return err
	}
	s.log.Info("group member removed", "group_id", id, "member", m.String(), "by", p.Name)
	writeJSON(w, http.StatusOK, api.GroupResponse{Group: view.Group(g)})
	return nil
}

func (s *Server) deleteGroup(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	if err := validateID("group id", id); err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	g, err := state.Propose[groups.Record](r.Context(), s.propose, command.DeleteGroup{GroupID: id, By: p.Name, Now: s.now(), Source: sourceString(r)})
	if err != nil {
		return err
	}
	s.log.Info("group deleted", "group_id", id, "by", p.Name)
	writeJSON(w, http.StatusOK, api.GroupResponse{Group: view.Group(g)})
	return nil
}
