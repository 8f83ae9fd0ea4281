package command

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrUnknownType is returned when decoding an entry with an unknown tag.
var ErrUnknownType = errors.New("command: unknown type")

// Encode renders c as a log entry: its type byte, then its JSON body.
func Encode(c Command) ([]byte, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode command %d: %w", c.Type(), err)
	}
	out := make([]byte, 0, len(body)+1)
	out = append(out, byte(c.Type()))
	return append(out, body...), nil
}

// Decode parses a log entry produced by Encode.
func Decode(b []byte) (Command, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("decode command: empty entry: %w", ErrUnknownType)
	}
	c, err := newOf(Type(b[0]))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b[1:], c); err != nil {
		return nil, fmt.Errorf("decode command %d: %w", b[0], err)
	}
	return deref(c), nil
}

func newOf(t Type) (any, error) {
	switch t {
	case TypeBatch:
		return &Batch{}, nil
	case TypeImportBootstrap:
		return &ImportBootstrap{}, nil
	case TypeRegisterWorker:
		return &RegisterWorker{}, nil
	case TypeUpdateWorker:
		return &UpdateWorker{}, nil
	case TypeSetWorkerStatus:
		return &SetWorkerStatus{}, nil
	case TypeSubmitJob:
		return &SubmitJob{}, nil
	case TypeAssignTask:
		return &AssignTask{}, nil
	case TypeStartTask:
		return &StartTask{}, nil
	case TypeAppendLogs:
		return &AppendLogs{}, nil
	case TypeFinishTask:
		return &FinishTask{}, nil
	case TypeFailTask:
		return &FailTask{}, nil
	case TypeLoseAttempt:
		return &LoseAttempt{}, nil
	case TypeCancelJob:
		return &CancelJob{}, nil
	case TypeRegisterNode:
		return &RegisterNode{}, nil
	case TypeReissueWorker:
		return &ReissueWorker{}, nil
	case TypeRevokeWorker:
		return &RevokeWorker{}, nil
	case TypeCreateGroup:
		return &CreateGroup{}, nil
	case TypeAddGroupMember:
		return &AddGroupMember{}, nil
	case TypeRemoveGroupMember:
		return &RemoveGroupMember{}, nil
	case TypeDeleteGroup:
		return &DeleteGroup{}, nil
	case TypeCreateToken:
		return &CreateToken{}, nil
	case TypeRevokeToken:
		return &RevokeToken{}, nil
	case TypeApproveWorker:
		return &ApproveWorker{}, nil
	case TypePutCluster:
		return &PutCluster{}, nil
	case TypeCreateEnrollment:
		return &CreateEnrollment{}, nil
	case TypeRevokeEnrollment:
		return &RevokeEnrollment{}, nil
	case TypeEnrollWorker:
		return &EnrollWorker{}, nil
	case TypeAppendAudit:
		return &AppendAudit{}, nil
	case TypeRecordArtifact:
		return &RecordArtifact{}, nil
	}
	return nil, fmt.Errorf("decode command: type %d: %w", t, ErrUnknownType)
}

func deref(c any) Command {
	switch v := c.(type) {
	case *Batch:
		return *v
	case *ImportBootstrap:
		return *v
	case *RegisterWorker:
		return *v
	case *UpdateWorker:
		return *v
	case *SetWorkerStatus:
		return *v
	case *SubmitJob:
		return *v
	case *AssignTask:
		return *v
	case *StartTask:
		return *v
	case *AppendLogs:
		return *v
	case *FinishTask:
		return *v
	case *FailTask:
		return *v
	case *LoseAttempt:
		return *v
	case *CancelJob:
		return *v
	case *RegisterNode:
		return *v
	case *ReissueWorker:
		return *v
	case *RevokeWorker:
		return *v
	case *CreateGroup:
		return *v
	case *AddGroupMember:
		return *v
	case *RemoveGroupMember:
		return *v
	case *DeleteGroup:
		return *v
	case *CreateToken:
		return *v
	case *RevokeToken:
		return *v
	case *ApproveWorker:
		return *v
	case *PutCluster:
		return *v
	case *CreateEnrollment:
		return *v
	case *RevokeEnrollment:
		return *v
	case *EnrollWorker:
		return *v
	case *AppendAudit:
		return *v
	case *RecordArtifact:
		return *v
	}
	panic(fmt.Sprintf("command: no deref for %T", c))
}
