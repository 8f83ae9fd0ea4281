package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/translate"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Group renders a group with the workers that belong to it.
func Group(r groups.Record) api.Group {
	g := r.Group
	return api.Group{
		GroupID:   g.ID,
		Members:   translate.GroupMembersToAPI(g.Members),
		Workers:   r.Workers,
		CreatedAt: api.FormatTime(g.CreatedAt),
		CreatedBy: g.CreatedBy,
		UpdatedAt: api.FormatTime(g.UpdatedAt),
	}
}

// Groups renders a list of groups, in its order.
func Groups(rs []groups.Record) []api.Group {
	return each(rs, Group)
}
