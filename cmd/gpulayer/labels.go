package main

import (
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// parseLabels reads the agent's --label KEY=VALUE flags, within the
// contract's bounds (api.MaxLabels, MaxLabelKeyBytes,
// MaxLabelValueBytes): a key given twice, an empty key or a flag without
// '=' is a usage error, as the coordinator would refuse the registration.
func parseLabels(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	if len(flags) > api.MaxLabels {
		return nil, usagef("--label: %d labels, at most %d", len(flags), api.MaxLabels)
	}
	out := make(map[string]string, len(flags))
	for _, kv := range flags {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok || k == "":
			return nil, usagef("--label %q: give KEY=VALUE", kv)
		case len(k) > api.MaxLabelKeyBytes || len(v) > api.MaxLabelValueBytes:
			return nil, usagef("--label %q: a key is at most %d bytes, a value %d", kv, api.MaxLabelKeyBytes, api.MaxLabelValueBytes)
		}
		if _, dup := out[k]; dup {
			return nil, usagef("--label %s given twice", k)
		}
		out[k] = v
	}
	return out, nil
}
