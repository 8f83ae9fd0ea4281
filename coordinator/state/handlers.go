package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// handler applies one command to the store.
type handler func(*Store, command.Command) Result

// on adapts a typed apply function: its outcome, of type O, is what
// Propose[O] returns to the proposer.
func on[C command.Command, O any](apply func(*Store, C) (O, error)) handler {
	return func(s *Store, c command.Command) Result {
		cmd, ok := c.(C)
		if !ok {
			return Refused(fmt.Errorf("%w: %T applied as %T", ErrInvalid, c, cmd))
		}
		o, err := apply(s, cmd)
		if err != nil {
			return Refused(err)
		}
		return Result{value: o}
	}
}

// handlers maps every command type but Batch to its apply function; the
// outcome types are read off the functions' signatures.
var handlers = map[command.Type]handler{
	command.TypeImportBootstrap:   on((*Store).importBootstrap),
	command.TypeRegisterWorker:    on((*Store).registerWorker),
	command.TypeUpdateWorker:      on((*Store).updateWorker),
	command.TypeSetWorkerStatus:   on((*Store).setWorkerStatus),
	command.TypeSubmitJob:         on((*Store).submitJob),
	command.TypeAssignTask:        on((*Store).assignTask),
	command.TypeStartTask:         on((*Store).startTask),
	command.TypeAppendLogs:        on((*Store).appendLogs),
	command.TypeFinishTask:        on((*Store).finishTask),
	command.TypeFailTask:          on((*Store).failTask),
	command.TypeLoseAttempt:       on((*Store).loseAttempt),
	command.TypeCancelJob:         on((*Store).cancelJob),
	command.TypeRegisterNode:      on((*Store).registerNode),
	command.TypeReissueWorker:     on((*Store).reissueWorker),
	command.TypeRevokeWorker:      on((*Store).revokeWorker),
	command.TypeCreateGroup:       on((*Store).createGroup),
	command.TypeAddGroupMember:    on((*Store).addGroupMember),
	command.TypeRemoveGroupMember: on((*Store).removeGroupMember),
	command.TypeDeleteGroup:       on((*Store).deleteGroup),
	command.TypeCreateToken:       on((*Store).createToken),
	command.TypeRevokeToken:       on((*Store).revokeToken),
	command.TypeApproveWorker:     on((*Store).approveWorker),
	command.TypePutCluster:        on((*Store).putCluster),
	command.TypeCreateEnrollment:  on((*Store).createEnrollment),
	command.TypeRevokeEnrollment:  on((*Store).revokeEnrollment),
	command.TypeEnrollWorker:      on((*Store).enrollWorker),
	command.TypeAppendAudit:       on((*Store).appendAudit),
	command.TypeRecordArtifact:    on((*Store).recordArtifact),
}

func (s *Store) applyOne(c command.Command) Result {
	h, ok := handlers[c.Type()]
	if !ok {
		return Refused(fmt.Errorf("%w: unhandled command %T", ErrInvalid, c))
	}
	return h(s, c)
}

func (s *Store) registerNode(c command.RegisterNode) (struct{}, error) {
	s.nodes[c.NodeID] = c.HTTPAddr
	return struct{}{}, nil
}
