package creds

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

var now = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func rec(id, kind string) command.CredentialRecord {
	return command.CredentialRecord{ID: id, Kind: kind, Name: id, Hash: "h-" + id, CreatedAt: now}
}

// A join token redeems until used up or expired, never for a provider's
// worker; an instance token only for its own instance.
func TestRedeem(t *testing.T) {
	tb := New()
	join := rec("join", KindJoin)
	join.MaxUses = 1
	tb.Put(join)
	inst := rec("inst", KindInstance)
	inst.InstanceID = "i-1"
	inst.ExpiresAt = now.Add(time.Hour)
	tb.Put(inst)
	tb.Put(rec("cl", KindClient))
	for _, c := range []struct {
		id       string
		provider bool
		instance string
		at       time.Time
		want     error
	}{
		{"cl", false, "", now, stateerr.ErrCredentialUnusable},
		{"nope", false, "", now, stateerr.ErrCredentialUnusable},
		{"join", true, "", now, stateerr.ErrForbidden},
		{"inst", false, "i-1", now, stateerr.ErrForbidden},
		{"inst", true, "i-2", now, stateerr.ErrForbidden},
		{"inst", true, "i-1", now.Add(2 * time.Hour), stateerr.ErrCredentialUnusable},
		{"inst", true, "i-1", now, nil},
		{"join", false, "", now, nil},
		{"join", false, "", now, stateerr.ErrCredentialUnusable}, // used up
	} {
		if _, err := tb.Redeem(c.id, c.provider, c.instance, c.at); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if j, _ := tb.Get("join"); j.Uses != 1 || !j.LastUsedAt.Equal(now) {
		t.Fatalf("a redemption is counted: %+v", j)
	}
}

// Rotation revokes every live client, join and instance token, never a
// worker's; a team's clients and a token are revoked once.
func TestRevocations(t *testing.T) {
	tb := New()
	for _, r := range []command.CredentialRecord{rec("a", KindClient), rec("b", KindJoin), rec("w", KindWorker)} {
		tb.Put(r)
	}
	vision := rec("v", KindClient)
	vision.Team = "vision"
	tb.Put(vision)
	if id, ok := tb.LiveClientNamed("a", now); !ok || id != "a" {
		t.Fatalf("live client a: %q %v", id, ok)
	}
	if got := tb.RevokeClientsOf("vision", "admin", now); fmt.Sprint(got) != "[v]" {
		t.Fatalf("team's clients revoked: %v", got)
	}
	if n := tb.Rotate(now); n != 2 {
		t.Fatalf("rotation revoked %d, want a and b", n)
	}
	if w, _ := tb.Get("w"); w.Revoked {
		t.Fatal("rotation revoked a worker credential")
	}
	if _, ok := tb.LiveClientNamed("a", now); ok {
		t.Fatal("a revoked client is live")
	}
	if _, changed, err := tb.RevokeToken("a", "admin", now); err != nil || changed {
		t.Fatalf("revoking a revoked token: %v %v", changed, err)
	}
	if _, _, err := tb.RevokeToken("w", "admin", now); !errors.Is(err, stateerr.ErrNotFound) {
		t.Fatalf("revoking a worker credential as a token: %v", err)
	}
	if toks := tb.Tokens(); len(toks) != 3 {
		t.Fatalf("tokens %+v, want a, b and v", toks)
	}
	if _, err := Restore([]*Credential{{CredentialRecord: rec("x", KindClient)}, {CredentialRecord: rec("x", KindJoin)}}); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a credential twice: %v", err)
	}
}
