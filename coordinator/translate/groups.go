package translate

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// GroupMemberFromAPI reads a group member named in a request.
func GroupMemberFromAPI(m api.GroupMember) command.GroupMember { return command.GroupMember(m) }

// GroupMembersFromAPI reads a group's members.
func GroupMembersFromAPI(in []api.GroupMember) []command.GroupMember {
	return convertEach(in, GroupMemberFromAPI)
}

// GroupMembersToAPI renders a group's members.
func GroupMembersToAPI(in []command.GroupMember) []api.GroupMember {
	return convertEach(in, func(m command.GroupMember) api.GroupMember { return api.GroupMember(m) })
}
