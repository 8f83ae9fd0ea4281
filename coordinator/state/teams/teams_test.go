package teams

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

var at = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func ptr(v int64) *int64 { return &v }

// Default exists before it is written and is never deleted; settings out
// of bounds, or set and cleared at once, change nothing.
func TestTeamsKeepTheirRules(t *testing.T) {
	tb := New()
	if d, ok := tb.Get(command.DefaultTeam); !ok || d.Settings.WeightCenti != DefaultWeightCenti {
		t.Fatalf("default before it was written: %+v %v", d, ok)
	}
	if _, err := tb.Create(command.DefaultTeam, command.TeamSettings{WeightCenti: 100}, "admin", at); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("creating default: %v", err)
	}
	if _, err := tb.Create("vision", command.TeamSettings{WeightCenti: 0}, "admin", at); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("weight 0: %v", err)
	}
	if _, err := tb.Create("vision", command.TeamSettings{WeightCenti: 200, QuotaCentiGPUs: 800}, "admin", at); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Update(command.UpdateTeam{Name: "vision", BorrowLimitCenti: ptr(100), ClearBorrowLimit: true, Now: at}); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("set and cleared: %v", err)
	}
	if _, err := tb.Update(command.UpdateTeam{Name: "vision", ArtifactQuotaBytes: ptr(MaxArtifactBytes + 1), Now: at}); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("an artifact quota past its bound: %v", err)
	}
	if v, _ := tb.Get("vision"); v.Settings.ArtifactQuotaBytes != nil || v.Settings.QuotaCentiGPUs != 800 {
		t.Fatalf("a refused update changed the team: %+v", v.Settings)
	}
	u, err := tb.Update(command.UpdateTeam{Name: "vision", BorrowLimitCenti: ptr(150), By: "ops", Now: at.Add(time.Hour)})
	if err != nil || *u.Settings.BorrowLimitCenti != 150 || u.UpdatedBy != "ops" || Describe(u.Settings) != "weight 2, quota 8 GPUs, borrow limit 1.5 GPUs" {
		t.Fatalf("update: %+v %v", u, err)
	}
	if fmt.Sprint(tb.Names()) != "[default vision]" {
		t.Fatalf("names %v", tb.Names())
	}
	if err := tb.Delete(command.DefaultTeam, func() error { return nil }); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("deleting default: %v", err)
	}
	busy := errors.New("busy")
	if err := tb.Delete("vision", func() error { return busy }); !errors.Is(err, busy) {
		t.Fatalf("deleting a busy team: %v", err)
	}
	if err := tb.Delete("vision", func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, ok := tb.Get("vision"); ok {
		t.Fatal("a deleted team is still there")
	}
}

func TestCenti(t *testing.T) {
	for v, want := range map[int64]string{100: "1", 50: "0.5", 225: "2.25", 0: "0", 1010: "10.1"} {
		if got := Centi(v); got != want {
			t.Errorf("Centi(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestRestoreChecksSettings(t *testing.T) {
	if _, err := Restore([]*Team{{Name: "a", Settings: command.TeamSettings{WeightCenti: -1}}}); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("bad settings: %v", err)
	}
	a := &Team{Name: "a", Settings: command.TeamSettings{WeightCenti: 100}}
	if _, err := Restore([]*Team{a, a}); !errors.Is(err, stateerr.ErrInvalid) {
		t.Fatalf("a team twice: %v", err)
	}
}
