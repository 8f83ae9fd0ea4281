package api

// Member kinds of a group. They are the target kinds: a member, like a
// target, names a worker or a group.
const (
	MemberWorker = TargetWorker
	MemberGroup  = TargetGroup
)

// GroupMember is one direct member of a group: a worker or another group.
type GroupMember struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// String renders the member as "kind:id", the form the CLI takes.
func (m GroupMember) String() string { return m.Kind + ":" + m.ID }

// Group is a named set of workers and groups. Membership is transitive:
// Workers lists every worker in the group, directly or through a member
// group, sorted.
type Group struct {
	GroupID   string        `json:"group_id"`
	Members   []GroupMember `json:"members"`
	Workers   []string      `json:"workers"`
	CreatedAt string        `json:"created_at"`
	CreatedBy string        `json:"created_by,omitempty"`
	UpdatedAt string        `json:"updated_at"`
}

// CreateGroupRequest is the body of POST /v1/groups.
type CreateGroupRequest struct {
	GroupID string        `json:"group_id"`
	Members []GroupMember `json:"members,omitempty"`
}

// GroupResponse wraps a group in answers to the group routes.
type GroupResponse struct {
	Group Group `json:"group"`
}

// GroupList answers GET /v1/groups.
type GroupList struct {
	Groups []Group `json:"groups"`
}
