package command

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The numbers are on disk in every Raft log: they must never change.
func TestIdentityTypeNumbersArePinned(t *testing.T) {
	pinned := map[Type]byte{
		TypeRegisterNode:      14,
		TypeReissueWorker:     15,
		TypeRevokeWorker:      16,
		TypeCreateGroup:       17,
		TypeAddGroupMember:    18,
		TypeRemoveGroupMember: 19,
		TypeDeleteGroup:       20,
	}
	for typ, want := range pinned {
		if byte(typ) != want {
			t.Errorf("type %d, want %d", typ, want)
		}
	}
}

func TestIdentityRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 2, 13, 0, 0, 123000000, time.UTC)
	w := api.GroupMember{Kind: api.MemberWorker, ID: "w1"}
	cases := []Command{
		ReissueWorker{WorkerID: "w1", Credential: CredentialRecord{ID: "c2", Kind: "worker", Hash: "h", CreatedAt: now}, By: "admin", Now: now},
		RevokeWorker{WorkerID: "w1", By: "admin", Now: now},
		CreateGroup{GroupID: "g", Members: []api.GroupMember{w, {Kind: api.MemberGroup, ID: "sub"}}, By: "admin", Now: now},
		AddGroupMember{GroupID: "g", Member: w, By: "admin", Now: now},
		RemoveGroupMember{GroupID: "g", Member: w, By: "admin", Now: now},
		DeleteGroup{GroupID: "g", By: "admin", Now: now},
	}
	for _, c := range cases {
		b, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%T: %v", c, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("%T round trip:\n got %#v\nwant %#v", c, got, c)
		}
	}
}
