package agent

import "testing"

// A worker id made of the host's name: lowercased, cut at the first dot,
// and none when the id grammar refuses it or it is reserved.
func TestHostWorkerID(t *testing.T) {
	tests := []struct{ host, want string }{
		{"gpu-7", "gpu-7"},
		{"GPU-7.example.com", "gpu-7"},
		{"node_01", "node_01"},
		{" dgx1 \n", "dgx1"},
		{"", ""},
		{".example.com", ""},
		{"-leading-dash", ""},
		{"_hidden", ""},
		{"admin", ""},
		{"Self.cluster", ""},
		{"héllo", ""},
		{"a b", ""},
		{"x1234567890123456789012345678901234567890123456789012345678901234", ""}, // 65 characters
	}
	for _, tc := range tests {
		if got := hostWorkerID(tc.host); got != tc.want {
			t.Errorf("hostWorkerID(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}
