package command

import (
	"time"
)

// ReissueWorker replaces a worker's credential. The leader mints the new
// credential before proposing; only its hash travels. The old credential
// is dead once this applies; the worker's tasks stay its own.
type ReissueWorker struct {
	WorkerID   string           `json:"worker_id"`
	Credential CredentialRecord `json:"credential"`
	By         string           `json:"by"`
	Now        time.Time        `json:"now"`
	Source     string           `json:"source,omitempty"`
}

// RevokeWorker revokes a worker for good: its credential dies, and every
// task it holds loses its attempt and is requeued while attempts remain.
type RevokeWorker struct {
	WorkerID string    `json:"worker_id"`
	By       string    `json:"by"`
	Now      time.Time `json:"now"`
	Source   string    `json:"source,omitempty"`
}

// CreateGroup creates a group with its first members.
type CreateGroup struct {
	GroupID string        `json:"group_id"`
	Members []GroupMember `json:"members,omitempty"`
	By      string        `json:"by"`
	Now     time.Time     `json:"now"`
	Source  string        `json:"source,omitempty"`
}

// AddGroupMember adds one member to a group (idempotent).
type AddGroupMember struct {
	GroupID string      `json:"group_id"`
	Member  GroupMember `json:"member"`
	By      string      `json:"by"`
	Now     time.Time   `json:"now"`
	Source  string      `json:"source,omitempty"`
}

// RemoveGroupMember removes one member from a group (idempotent).
type RemoveGroupMember struct {
	GroupID string      `json:"group_id"`
	Member  GroupMember `json:"member"`
	By      string      `json:"by"`
	Now     time.Time   `json:"now"`
	Source  string      `json:"source,omitempty"`
}

// DeleteGroup deletes a group that no group contains and no unfinished
// task targets.
type DeleteGroup struct {
	GroupID string    `json:"group_id"`
	By      string    `json:"by"`
	Now     time.Time `json:"now"`
	Source  string    `json:"source,omitempty"`
}

func (ReissueWorker) Type() Type     { return TypeReissueWorker }
func (RevokeWorker) Type() Type      { return TypeRevokeWorker }
func (CreateGroup) Type() Type       { return TypeCreateGroup }
func (AddGroupMember) Type() Type    { return TypeAddGroupMember }
func (RemoveGroupMember) Type() Type { return TypeRemoveGroupMember }
func (DeleteGroup) Type() Type       { return TypeDeleteGroup }
