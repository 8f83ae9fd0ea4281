package httpapi

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/blob"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// FuzzDigest checks the sha256 digest check, api.ValidDigest (job inputs,
// finish artifacts, the CLI) and blob.ValidDigest, its name in the blob
// store and the artifact routes, on arbitrary strings. Neither may panic; they must agree
// with each other and with the definition, a string that hex decodes to
// 32 bytes and is its own lowercase encoding; and artifactDigest must
// return an accepted digest unchanged and refuse any other with
// invalid_argument.
func FuzzDigest(f *testing.F) {
	const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	for _, s := range []string{
		empty,
		strings.ToUpper(empty),
		empty[:63],
		empty + "0",
		empty[:63] + "g",
		empty[:63] + "\xff",
		"",
		"ab",
		strings.Repeat("0", 64),
		"../" + empty[3:],
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := hex.DecodeString(s)
		want := err == nil && len(b) == 32 && hex.EncodeToString(b) == s
		if got := api.ValidDigest(s); got != want {
			t.Fatalf("api.ValidDigest(%q) = %v, want %v", s, got, want)
		}
		if got := blob.ValidDigest(s); got != want {
			t.Fatalf("blob.ValidDigest(%q) = %v, want %v", s, got, want)
		}
		r := &http.Request{}
		r.SetPathValue("sha256", s)
		d, err := artifactDigest(r)
		switch {
		case want && (err != nil || d != s):
			t.Fatalf("artifactDigest(%q) = %q, %v; want it unchanged", s, d, err)
		case !want:
			var ae *apiError
			if !errors.As(err, &ae) || ae.code != api.CodeInvalidArgument {
				t.Fatalf("artifactDigest(%q) = %q, %v; want invalid_argument", s, d, err)
			}
		}
	})
}
