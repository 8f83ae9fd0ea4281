package command

import "github.com/gpulayer/gpulayer/sdk/api"

// Values the commands carry as the API received them. The log keeps them
// as they came and so does the state, which names them through these
// aliases: it holds them, it never renders them (coordinator/view does).
type (
	JobSpec     = api.JobSpec
	Resources   = api.Resources
	Target      = api.Target
	Device      = api.Device
	GroupMember = api.GroupMember
)
