package agent

import (
	"slices"
	"strings"
	"testing"
)

// The rules a killed agent left are found in iptables' listing by their
// comment, quoted as iptables prints it, and only those of the agent's
// own uid range.
func TestStaleRaftRulesAreFoundByTheirTag(t *testing.T) {
	listing := strings.Join([]string{
		"-P OUTPUT ACCEPT",
		`-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 28198 -m owner --uid-owner 63100 -m comment --comment "gpulayer-raftguard:63100-63100" -j REJECT --reject-with tcp-reset`,
		`-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 28199 -m owner --uid-owner 63100 -m comment --comment gpulayer-raftguard:63100-63100 -j REJECT --reject-with tcp-reset`,
		`-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 25424 -m owner --uid-owner 63100-63103 -m comment --comment "gpulayer-raftguard:63100-63103" -j REJECT --reject-with tcp-reset`,
		`-A OUTPUT -p tcp -m comment --comment "someone else's gpulayer-raftguard:63100-63100 note" -j ACCEPT`,
		"",
	}, "\n")
	got := staleRules([]byte(listing), "gpulayer-raftguard:63100-63100")
	if len(got) != 2 {
		t.Fatalf("found %d rules, want the two tagged for 63100-63100: %q", len(got), got)
	}
	want := []string{"-D", "OUTPUT", "-d", "127.0.0.1/32", "-p", "tcp", "-m", "tcp", "--dport", "28198", "-m", "owner", "--uid-owner", "63100",
		"-m", "comment", "--comment", "gpulayer-raftguard:63100-63100", "-j", "REJECT", "--reject-with", "tcp-reset"}
	if !slices.Equal(got[0], want) {
		t.Fatalf("delete args\n %q\nwant\n %q", got[0], want)
	}
	if got[1][9] != "28199" {
		t.Fatalf("second rule %q", got[1])
	}
}
