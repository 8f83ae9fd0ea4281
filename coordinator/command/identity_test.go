package command

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func TestIdentityRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 2, 13, 0, 0, 123000000, time.UTC)
	w := GroupMember{Kind: api.MemberWorker, ID: "w1"}
	cases := []Command{
		ReissueWorker{WorkerID: "w1", Credential: CredentialRecord{ID: "c2", Kind: "worker", Hash: "h", CreatedAt: now}, By: "admin", Now: now},
		RevokeWorker{WorkerID: "w1", By: "admin", Now: now},
		CreateGroup{GroupID: "g", Members: []GroupMember{w, {Kind: api.MemberGroup, ID: "sub"}}, By: "admin", Now: now},
		AddGroupMember{GroupID: "g", Member: w, By: "admin", Now: now},
		RemoveGroupMember{GroupID: "g", Member: w, By: "admin", Now: now},
		DeleteGroup{GroupID: "g", By: "admin", Now: now},
	}
	assertRoundTrip(t, cases)
}
