package oidc

import (
	"errors"
	"slices"
	"testing"
)

func TestParseMapping(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mapping
		bad  bool
	}{
		{in: "ml=ml:read", want: Mapping{"ml", "ml", []string{"read"}}},
		{in: "cn=admins,dc=x=ops:admin+read", want: Mapping{"cn=admins,dc=x", "ops", []string{"admin", "read"}}},
		{in: "ml", bad: true},
		{in: "=ml:read", bad: true},
		{in: "ml=ml", bad: true},
		{in: "ml=:read", bad: true},
		{in: "ml=ml:", bad: true},
		{in: "ml=ml:root", bad: true},
		{in: "ml=ml:read+", bad: true},
		{in: "ml=_ml:read", bad: true},
		{in: "ml=m l:read", bad: true},
	} {
		got, err := ParseMapping(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrConfig) {
				t.Errorf("%q: err %v, want ErrConfig", tc.in, err)
			}
			continue
		}
		if err != nil || got.Value != tc.want.Value || got.Team != tc.want.Team || !slices.Equal(got.Roles, tc.want.Roles) {
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	m := []Mapping{{"ml", "ml", []string{"read"}}}
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"off", Config{}, true},
		{"https", Config{Issuer: "https://idp.example", Audience: "gpulayer", Mappings: m}, true},
		{"loopback http", Config{Issuer: "http://127.0.0.1:8080", Audience: "a", Mappings: m}, true},
		{"localhost http", Config{Issuer: "http://localhost:8080/realms/x", Audience: "a", Mappings: m}, true},
		{"remote http", Config{Issuer: "http://idp.example", Audience: "a", Mappings: m}, false},
		{"ftp", Config{Issuer: "ftp://idp.example", Audience: "a", Mappings: m}, false},
		{"query", Config{Issuer: "https://idp.example/?x=1", Audience: "a", Mappings: m}, false},
		{"no audience", Config{Issuer: "https://idp.example", Mappings: m}, false},
		{"no mapping", Config{Issuer: "https://idp.example", Audience: "a"}, false},
		{"no issuer", Config{Audience: "a", Mappings: m}, false},
		{"bad claim", Config{Issuer: "https://idp.example", Audience: "a", Claim: "a b", Mappings: m}, false},
		{"bad role", Config{Issuer: "https://idp.example", Audience: "a", Mappings: []Mapping{{"ml", "ml", []string{"owner"}}}}, false},
	} {
		err := tc.cfg.Validate()
		if tc.ok != (err == nil) {
			t.Errorf("%s: err %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v is not ErrConfig", tc.name, err)
		}
		if tc.ok && tc.cfg.Enabled() && tc.cfg.Claim != DefaultClaim {
			t.Errorf("%s: claim %q, want the default", tc.name, tc.cfg.Claim)
		}
	}
}

func TestMap(t *testing.T) {
	ms := []Mapping{
		{"ml", "ml", []string{"read", "submit"}},
		{"ml-admins", "ml", []string{"admin"}},
		{"ops", "ops", []string{"admin"}},
		{"everyone", "default", []string{"read"}},
	}
	for _, tc := range []struct {
		values []string
		team   string
		roles  []string
	}{
		{[]string{"ml"}, "ml", []string{"read", "submit"}},
		{[]string{"ml-admins", "ml"}, "ml", []string{"read", "submit", "admin"}},
		{[]string{"ops", "ml"}, "ml", []string{"read", "submit"}}, // config order decides, not claim order
		{[]string{"everyone", "ops"}, "ops", []string{"admin"}},
		{[]string{"everyone"}, "default", []string{"read"}},
		{[]string{"ML"}, "", nil},
		{nil, "", nil},
	} {
		g, ok := Map(ms, tc.values)
		if ok != (tc.team != "") || g.Team != tc.team || !slices.Equal(g.Roles, tc.roles) {
			t.Errorf("%v: %+v %v, want %s %v", tc.values, g, ok, tc.team, tc.roles)
		}
	}
}

func TestClaimValues(t *testing.T) {
	big := make([]any, maxClaimValues+1)
	for i := range big {
		big[i] = "x"
	}
	for _, tc := range []struct {
		in   any
		want []string
	}{
		{"ml", []string{"ml"}},
		{[]any{"a", "b"}, []string{"a", "b"}},
		{[]any{"a", 1.0}, nil},
		{1.0, nil},
		{map[string]any{"a": "b"}, nil},
		{nil, nil},
		{big, nil},
	} {
		if got := claimValues(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.in, got, tc.want)
		}
	}
}
