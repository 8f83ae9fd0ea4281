package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestMintParseVerify(t *testing.T) {
	for _, prefix := range []string{"glc", "glj", "gli", "glw"} {
		m, err := Mint(prefix)
		if err != nil {
			t.Fatal(err)
		}
		s := m.Token.String()
		if !strings.HasPrefix(s, prefix+"_") {
			t.Fatalf("token %q lacks prefix %q", s, prefix)
		}
		p, err := Parse(s)
		if err != nil {
			t.Fatalf("parse %q: %v", prefix, err)
		}
		if p != m.Token {
			t.Fatalf("parse round trip: got %+v want %+v", p, m.Token)
		}
		if !Verify(p.Secret, m.Hash) {
			t.Fatal("verify failed for the right secret")
		}
		if Verify(p.Secret+"0", m.Hash) || Verify(strings.Repeat("0", 64), m.Hash) {
			t.Fatal("verify accepted a wrong secret")
		}
		if strings.Contains(m.Hash, p.Secret) {
			t.Fatal("hash contains the secret")
		}
	}
}

func TestMintIsRandom(t *testing.T) {
	a, _ := Mint("glc")
	b, _ := Mint("glc")
	if a.Token.ID == b.Token.ID || a.Token.Secret == b.Token.Secret {
		t.Fatal("two mints produced the same id or secret")
	}
	if len(a.Token.Secret) != 64 {
		t.Fatalf("secret has %d hex chars, want 64 (256 bits)", len(a.Token.Secret))
	}
}

func TestParseRejects(t *testing.T) {
	good, _ := Mint("glw")
	cases := map[string]string{
		"empty":          "",
		"no parts":       "glc",
		"unknown prefix": "glx_" + good.Token.ID + "_" + good.Token.Secret,
		"extra part":     good.Token.String() + "_x",
		"short secret":   "glc_" + good.Token.ID + "_abcd",
		"upper hex":      "glc_" + strings.ToUpper(good.Token.ID) + "_" + good.Token.Secret,
		"bad id":         "glc_zzzzzzzzzzzzzzzz_" + good.Token.Secret,
		"bearer word":    "Bearer " + good.Token.String(),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(in); !errors.Is(err, ErrMalformedToken) {
				t.Fatalf("Parse(%q) = %v, want ErrMalformedToken", name, err)
			}
		})
	}
}

func TestRoles(t *testing.T) {
	cases := []struct {
		roles []string
		kind  Kind
		want  map[string]bool
	}{
		{[]string{"admin"}, KindClient, map[string]bool{RoleAdmin: true, RoleSubmit: true, RoleRead: true}},
		{[]string{"submit"}, KindClient, map[string]bool{RoleAdmin: false, RoleSubmit: true, RoleRead: true}},
		{[]string{"read"}, KindClient, map[string]bool{RoleAdmin: false, RoleSubmit: false, RoleRead: true}},
		{[]string{"admin"}, KindWorker, map[string]bool{RoleAdmin: false, RoleSubmit: false, RoleRead: false}},
	}
	for _, c := range cases {
		p := Principal{Kind: c.kind, Roles: c.roles}
		for r, want := range c.want {
			if got := p.HasRole(r); got != want {
				t.Errorf("%v %v HasRole(%s) = %v, want %v", c.kind, c.roles, r, got, want)
			}
		}
	}
}
