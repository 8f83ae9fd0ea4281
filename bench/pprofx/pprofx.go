// Package pprofx reads CPU profiles written by runtime/pprof (gzipped
// profile.proto) far enough to rank functions by flat and cumulative time
// and to measure the share of samples that pass through given functions.
// It uses only protowire, which the module already depends on, so the
// benchmark needs no profile library and no toolchain at run time.
package pprofx

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// Sample is one stack with its weight (CPU nanoseconds for CPU profiles).
type Sample struct {
	Value int64
	// Funcs are the stack's function names, leaf first, inlined frames
	// included.
	Funcs []string
}

// Profile is the part of a profile the benchmark uses.
type Profile struct {
	Samples []Sample
	Total   int64
}

// Func is one function's share of a profile, in percent of all samples.
type Func struct {
	Name    string  `json:"name"`
	FlatPct float64 `json:"flat_pct"`
	CumPct  float64 `json:"cum_pct"`
}

type rawSample struct {
	locs   []uint64
	values []int64
}

type rawProfile struct {
	sampleTypes []int64 // string index of each value type
	samples     []rawSample
	locs        map[uint64][]uint64 // location id -> function ids, innermost first
	funcs       map[uint64]int64    // function id -> name string index
	strs        []string
}

// Parse reads a gzipped (or plain) profile.proto.
func Parse(r io.Reader) (*Profile, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		if b, err = io.ReadAll(zr); err != nil {
			return nil, err
		}
	}
	rp := &rawProfile{locs: map[uint64][]uint64{}, funcs: map[uint64]int64{}}
	if err := rp.decode(b); err != nil {
		return nil, fmt.Errorf("pprofx: %w", err)
	}
	return rp.resolve(), nil
}

// valueIndex picks the CPU time column ("cpu"/nanoseconds) when present.
func (rp *rawProfile) valueIndex() int {
	for i, s := range rp.sampleTypes {
		if int(s) < len(rp.strs) && rp.strs[s] == "cpu" {
			return i
		}
	}
	return max(len(rp.sampleTypes)-1, 0)
}

func (rp *rawProfile) resolve() *Profile {
	vi := rp.valueIndex()
	p := &Profile{}
	for _, s := range rp.samples {
		if vi >= len(s.values) {
			continue
		}
		var names []string
		for _, l := range s.locs {
			for _, f := range rp.locs[l] {
				if si, ok := rp.funcs[f]; ok && int(si) < len(rp.strs) {
					names = append(names, rp.strs[si])
				}
			}
		}
		p.Samples = append(p.Samples, Sample{Value: s.values[vi], Funcs: names})
		p.Total += s.values[vi]
	}
	return p
}

// Share returns the percentage of all samples whose stack contains a
// function whose name contains any of subs.
func (p *Profile) Share(subs ...string) float64 {
	if p.Total == 0 {
		return 0
	}
	var v int64
	for _, s := range p.Samples {
		if hasAny(s.Funcs, subs) {
			v += s.Value
		}
	}
	return pct(v, p.Total)
}

func hasAny(funcs, subs []string) bool {
	for _, f := range funcs {
		for _, sub := range subs {
			if strings.Contains(f, sub) {
				return true
			}
		}
	}
	return false
}

// Top ranks functions by cumulative share (ties by flat share) and returns
// the first n.
func (p *Profile) Top(n int) []Func {
	flat := map[string]int64{}
	cum := map[string]int64{}
	for _, s := range p.Samples {
		if len(s.Funcs) == 0 {
			continue
		}
		flat[s.Funcs[0]] += s.Value
		seen := map[string]bool{}
		for _, f := range s.Funcs {
			if !seen[f] {
				seen[f] = true
				cum[f] += s.Value
			}
		}
	}
	out := make([]Func, 0, len(cum))
	for name, c := range cum {
		out = append(out, Func{Name: name, FlatPct: pct(flat[name], p.Total), CumPct: pct(c, p.Total)})
	}
	slices.SortFunc(out, func(a, b Func) int {
		switch {
		case a.CumPct != b.CumPct:
			if a.CumPct > b.CumPct {
				return -1
			}
			return 1
		case a.FlatPct != b.FlatPct:
			if a.FlatPct > b.FlatPct {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out[:min(n, len(out))]
}

// TopFlat ranks functions by flat (self) share and returns the first n.
func (p *Profile) TopFlat(n int) []Func {
	all := p.Top(1 << 30)
	slices.SortStableFunc(all, func(a, b Func) int {
		switch {
		case a.FlatPct > b.FlatPct:
			return -1
		case a.FlatPct < b.FlatPct:
			return 1
		}
		return 0
	})
	return all[:min(n, len(all))]
}

func pct(v, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(int64(float64(v)*10000/float64(total))) / 100
}

var errTruncated = errors.New("truncated profile")

// fields calls fn for every field of a message.
func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errTruncated
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errTruncated
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// uints reads a repeated integer field, packed or not.
func uints(typ protowire.Type, v []byte, x uint64) ([]uint64, error) {
	if typ == protowire.VarintType {
		return []uint64{x}, nil
	}
	var out []uint64
	for len(v) > 0 {
		u, n := protowire.ConsumeVarint(v)
		if n < 0 {
			return nil, errTruncated
		}
		out = append(out, u)
		v = v[n:]
	}
	return out, nil
}
