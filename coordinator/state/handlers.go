package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// handler applies one command to the store.
type handler func(*Store, command.Command) Result

// applier is the handler of one command type.
type applier struct {
	typ   command.Type
	apply handler
}

// on adapts a typed apply function to the commands of its parameter's
// type: its outcome, of type O, is what Propose[O] returns to the
// proposer.
func on[C command.Command, O any](apply func(*Store, C) (O, error)) applier {
	var zero C
	return applier{typ: zero.Type(), apply: func(s *Store, c command.Command) Result {
		cmd, ok := c.(C)
		if !ok {
			return Refused(fmt.Errorf("%w: %T applied as %T", ErrInvalid, c, cmd))
		}
		o, err := apply(s, cmd)
		if err != nil {
			return Refused(err)
		}
		return Result{value: o}
	}}
}

// handlers maps every command type but Batch (command.Types lists them)
// to its apply function, each named once: the command type is that of
// the function's parameter, the outcome type that of its result.
var handlers = index(
	on((*Store).importBootstrap),
	on((*Store).registerWorker),
	on((*Store).updateWorker),
	on((*Store).setWorkerStatus),
	on((*Store).submitJob),
	on((*Store).assignTask),
	on((*Store).startTask),
	on((*Store).appendLogs),
	on((*Store).finishTask),
	on((*Store).failTask),
	on((*Store).loseAttempt),
	on((*Store).cancelJob),
	on((*Store).registerNode),
	on((*Store).reissueWorker),
	on((*Store).revokeWorker),
	on((*Store).createGroup),
	on((*Store).addGroupMember),
	on((*Store).removeGroupMember),
	on((*Store).deleteGroup),
	on((*Store).createTeam),
	on((*Store).updateTeam),
	on((*Store).deleteTeam),
	on((*Store).createToken),
	on((*Store).revokeToken),
	on((*Store).approveWorker),
	on((*Store).putCluster),
	on((*Store).createEnrollment),
	on((*Store).revokeEnrollment),
	on((*Store).enrollWorker),
	on((*Store).appendAudit),
	on((*Store).recordArtifact),
	on((*Store).collectGarbage),
	on((*Store).controlWorker),
	on((*Store).expireDrains),
	on((*Store).clearGPU),
	on((*Store).assignGang),
	on((*Store).joinRendezvous),
	on((*Store).approveDevices),
	on((*Store).setArtifactHolder),
	on((*Store).forgetWorker),
	on((*Store).cordonDevice),
	on((*Store).preemptTasks),
	on((*Store).setMIGLayout),
)

func index(as ...applier) map[command.Type]handler {
	m := make(map[command.Type]handler, len(as))
	for _, a := range as {
		if _, dup := m[a.typ]; dup {
			panic(fmt.Sprintf("state: two handlers for command type %d", a.typ))
		}
		m[a.typ] = a.apply
	}
	return m
}

func (s *Store) applyOne(c command.Command) (res Result) {
	h, ok := handlers[c.Type()]
	if !ok {
		return Refused(fmt.Errorf("%w: unhandled command %T", ErrInvalid, c))
	}
	defer refusePanic(c, &res) // applyguard.go
	s.touched = s.touched[:0]
	if safe := viewSafe[c.Type()]; !safe { // workerview.go
		s.derived.DropAll(true)
		defer s.derived.DropAll(false)
	}
	res = h(s, c)
	if res.Err() == nil {
		s.deps.Settle(depTables{s}) // dependencies.go
	}
	return res
}

func (s *Store) registerNode(c command.RegisterNode) (struct{}, error) {
	s.nodes[c.NodeID] = c.HTTPAddr
	return struct{}{}, nil
}
