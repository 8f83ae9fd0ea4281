package command

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// decoders is the one list of the commands a log entry may hold, each
// known by the number its Type method gives. A new command is its number
// (types.go), its struct with that Type method, and a line here; the
// state machine checks that it applies every command listed.
var decoders = register(
	decoder{typ: TypeBatch, decode: decodeBatch}, // batchframe.go
	as[ImportBootstrap](),
	as[RegisterWorker](),
	as[UpdateWorker](),
	as[SetWorkerStatus](),
	as[SubmitJob](),
	as[AssignTask](),
	as[StartTask](),
	as[AppendLogs](),
	as[FinishTask](),
	as[FailTask](),
	as[LoseAttempt](),
	as[CancelJob](),
	as[RegisterNode](),
	as[ReissueWorker](),
	as[RevokeWorker](),
	as[CreateGroup](),
	as[AddGroupMember](),
	as[RemoveGroupMember](),
	as[DeleteGroup](),
	as[CreateToken](),
	as[RevokeToken](),
	as[ApproveWorker](),
	as[PutCluster](),
	as[CreateEnrollment](),
	as[RevokeEnrollment](),
	as[EnrollWorker](),
	as[AppendAudit](),
	as[RecordArtifact](),
	as[CollectGarbage](),
	as[ControlWorker](),
	as[ExpireDrains](),
	as[ClearGPU](),
	as[AssignGang](),
	as[JoinRendezvous](),
	as[ApproveDevices](),
	as[SetArtifactHolder](),
	as[ForgetWorker](),
	as[CordonDevice](),
	as[CreateTeam](),
	as[UpdateTeam](),
	as[DeleteTeam](),
	as[PreemptTasks](),
	as[SetMIGLayout](),
)

// decoder decodes the JSON body of one command type.
type decoder struct {
	typ    Type
	decode func(body []byte) (Command, error)
}

// as is the decoder of commands of type C.
func as[C Command]() decoder {
	var zero C
	return decoder{typ: zero.Type(), decode: func(body []byte) (Command, error) {
		var c C
		if err := json.Unmarshal(body, &c); err != nil {
			return nil, err
		}
		return c, nil
	}}
}

func register(ds ...decoder) map[Type]decoder {
	m := make(map[Type]decoder, len(ds))
	for _, d := range ds {
		if _, dup := m[d.typ]; dup || d.typ == TypeInvalid {
			panic(fmt.Sprintf("command: type %d listed twice or invalid", d.typ))
		}
		m[d.typ] = d
	}
	return m
}

// Types lists, in order, every command type a log entry may hold.
func Types() []Type { return slices.Sorted(maps.Keys(decoders)) }
