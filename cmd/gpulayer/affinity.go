package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// affinityFlags collect `job submit`'s placement preferences into the
// job's affinity rules:
//
//	--prefer KIND:NAME[:WEIGHT]   soft: attract (weight 1..100, default 50) or repel (-100..-1)
//	--require KIND:NAME           hard: only matching workers
//	--avoid KIND:NAME             hard: no matching worker
//
// KIND is worker, group or label; a label's NAME is KEY or KEY=VALUE.
type affinityFlags struct {
	prefer, require, avoid []string
}

// defaultPreferWeight is a --prefer rule's weight when none is given.
const defaultPreferWeight = 50

// rules builds the affinity JSON, or nil when no flag was given.
func (f affinityFlags) rules() (json.RawMessage, error) {
	var rules []api.AffinityRule
	add := func(flag string, specs []string, required bool, sign int) error {
		for _, s := range specs {
			r, err := parseAffinityRule(flag, s, required, sign)
			if err != nil {
				return err
			}
			rules = append(rules, r)
		}
		return nil
	}
	if err := add("--prefer", f.prefer, false, 1); err != nil {
		return nil, err
	}
	if err := add("--require", f.require, true, 1); err != nil {
		return nil, err
	}
	if err := add("--avoid", f.avoid, true, -1); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(rules)
	if err != nil {
		return nil, err
	}
	if _, err := api.ParseAffinity(raw); err != nil {
		return nil, usagef("%s", err)
	}
	return raw, nil
}

// parseAffinityRule reads KIND:NAME[:WEIGHT]; only --prefer takes a
// weight, and hard rules get sign (1 or -1) as theirs.
func parseAffinityRule(flag, s string, required bool, sign int) (api.AffinityRule, error) {
	kind, rest, ok := strings.Cut(s, ":")
	if !ok || rest == "" {
		return api.AffinityRule{}, usagef("%s %q: want worker:ID, group:ID or label:KEY[=VALUE]", flag, s)
	}
	weight := defaultPreferWeight
	if !required {
		if i := strings.LastIndex(rest, ":"); i >= 0 {
			w, err := strconv.Atoi(rest[i+1:])
			if err != nil {
				return api.AffinityRule{}, usagef("%s %q: weight %q is not a number", flag, s, rest[i+1:])
			}
			weight, rest = w, rest[:i]
		}
	} else {
		weight = sign
	}
	r := api.AffinityRule{Weight: weight, Required: required}
	switch kind {
	case "worker":
		r.Worker = rest
	case "group":
		r.Group = rest
	case "label":
		r.Label, r.Value, _ = strings.Cut(rest, "=")
	default:
		return api.AffinityRule{}, usagef("%s %q: kind %q is not worker, group or label", flag, s, kind)
	}
	return r, nil
}

// describeAffinity renders a job's rules for job status, one line each.
func describeAffinity(raw json.RawMessage) []string {
	rules, err := api.ParseAffinity(raw)
	if err != nil {
		return nil
	}
	out := make([]string, len(rules))
	for i, r := range rules {
		sel := "worker:" + r.Worker
		switch {
		case r.Group != "":
			sel = "group:" + r.Group
		case r.Label != "" && r.Value != "":
			sel = "label:" + r.Label + "=" + r.Value
		case r.Label != "":
			sel = "label:" + r.Label
		}
		switch {
		case r.Required && r.Repels():
			out[i] = "avoid " + sel
		case r.Required:
			out[i] = "require " + sel
		default:
			out[i] = fmt.Sprintf("prefer %s (weight %d)", sel, r.Weight)
		}
	}
	return out
}
