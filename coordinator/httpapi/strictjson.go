package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// Strict JSON. encoding/json accepts, without a word, four things a
// request must not carry: a key given twice (the last one wins), a key
// that matches a field only when case is ignored ("EXECUTOR" for
// "executor"), invalid UTF-8 (replaced by U+FFFD) and lone surrogate
// escapes ("\ud800", also replaced). Two parsers that read such a body
// differently (a proxy, an auditor, the coordinator) would disagree about
// what was asked, so they are refused.
//
// checkStrictJSON makes one pass over a body that encoding/json has
// already accepted (so its syntax is known to be good), walking the Go
// type it was decoded into alongside, so that field names are compared
// with the struct's own, exactly. The keys of the object being read sit on
// one shared stack; duplicates are found by a scan of the current object's
// keys, or a map once an object is large, so the pass stays linear.

// strictError is what the pass found wrong, with where.
type strictError struct {
	path string
	msg  string
}

func (e *strictError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return e.path + ": " + e.msg
}

// checkStrictJSON checks b, a JSON value, against the rules above; t is
// the type it is decoded into (nil: any JSON).
func checkStrictJSON(b []byte, t reflect.Type) error {
	sc := strictScanner{b: b}
	sc.skipSpace()
	if err := sc.value(infoFor(t)); err != nil {
		return err
	}
	return nil
}

type strictScanner struct {
	b    []byte
	i    int
	keys [][]byte   // keys of the objects being read, innermost last
	path []pathStep // where the value being read sits, rendered on failure
}

// pathStep is one step down: a struct field, a map or free-form key, or
// an array index.
type pathStep struct {
	key   []byte
	field bool
	index int
}

func (sc *strictScanner) fail(format string, args ...any) error {
	var b strings.Builder
	for _, p := range sc.path {
		switch {
		case p.key == nil:
			fmt.Fprintf(&b, "[%d]", p.index)
		case p.field:
			b.WriteString("." + string(p.key))
		default:
			b.WriteString("[" + shortQuote(string(p.key)) + "]")
		}
	}
	return &strictError{path: b.String(), msg: fmt.Sprintf(format, args...)}
}

func (sc *strictScanner) skipSpace() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

func (sc *strictScanner) value(ti *typeInfo) error {
	if sc.i >= len(sc.b) {
		return sc.fail("unexpected end of JSON")
	}
	switch sc.b[sc.i] {
	case '{':
		return sc.object(ti)
	case '[':
		return sc.array(ti)
	case '"':
		_, _, err := sc.str()
		return err
	default:
		for sc.i < len(sc.b) && !isDelimiter(sc.b[sc.i]) {
			sc.i++
		}
		return nil
	}
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ':', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// bigObject is the number of keys past which duplicates are looked up in
// a map rather than by scanning.
const bigObject = 32

func (sc *strictScanner) object(ti *typeInfo) error {
	sc.i++ // {
	base := len(sc.keys)
	var seen map[string]struct{}
	defer func() { sc.keys = sc.keys[:base] }()
	for {
		sc.skipSpace()
		if sc.i < len(sc.b) && sc.b[sc.i] == '}' {
			sc.i++
			return nil
		}
		if sc.i >= len(sc.b) || sc.b[sc.i] != '"' {
			return sc.fail("expected an object key")
		}
		key, _, err := sc.str()
		if err != nil {
			return err
		}
		if dupKey(sc.keys[base:], seen, key) {
			return sc.fail("key %s appears twice in one object", shortQuote(string(key)))
		}
		sc.keys = append(sc.keys, key)
		if n := len(sc.keys) - base; n == bigObject {
			seen = make(map[string]struct{}, 2*bigObject)
			for _, k := range sc.keys[base:] {
				seen[string(k)] = struct{}{}
			}
		} else if seen != nil {
			seen[string(key)] = struct{}{}
		}
		child, err := ti.child(key)
		if err != nil {
			return sc.fail("%v", err)
		}
		sc.skipSpace()
		if sc.i >= len(sc.b) || sc.b[sc.i] != ':' {
			return sc.fail("expected ':' after an object key")
		}
		sc.i++
		sc.skipSpace()
		sc.path = append(sc.path, pathStep{key: key, field: ti != nil && ti.fields != nil})
		err = sc.value(child)
		sc.path = sc.path[:len(sc.path)-1]
		if err != nil {
			return err
		}
		sc.skipSpace()
		if sc.i < len(sc.b) && sc.b[sc.i] == ',' {
			sc.i++
		}
	}
}

func dupKey(keys [][]byte, seen map[string]struct{}, key []byte) bool {
	if seen != nil {
		_, dup := seen[string(key)]
		return dup
	}
	for _, k := range keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	return false
}

func (sc *strictScanner) array(ti *typeInfo) error {
	sc.i++ // [
	var elem *typeInfo
	if ti != nil {
		elem = ti.elem
	}
	for n := 0; ; n++ {
		sc.skipSpace()
		if sc.i < len(sc.b) && sc.b[sc.i] == ']' {
			sc.i++
			return nil
		}
		sc.path = append(sc.path, pathStep{index: n})
		err := sc.value(elem)
		sc.path = sc.path[:len(sc.path)-1]
		if err != nil {
			return err
		}
		sc.skipSpace()
		if sc.i < len(sc.b) && sc.b[sc.i] == ',' {
			sc.i++
		}
	}
}

// str reads a string at sc.i and returns its decoded bytes (the raw ones,
// when it holds no escape) and whether it had an escape. It refuses
// invalid UTF-8 and surrogate escapes that do not form a pair.
func (sc *strictScanner) str() ([]byte, bool, error) {
	start := sc.i
	sc.i++ // "
	escaped := false
	for sc.i < len(sc.b) {
		c := sc.b[sc.i]
		switch {
		case c == '"':
			sc.i++
			if !escaped {
				return sc.b[start+1 : sc.i-1], false, nil
			}
			var s string
			if err := json.Unmarshal(sc.b[start:sc.i], &s); err != nil {
				return nil, true, sc.fail("bad string")
			}
			return []byte(s), true, nil
		case c == '\\':
			escaped = true
			if err := sc.escape(); err != nil {
				return nil, true, err
			}
		case c < utf8.RuneSelf:
			sc.i++
		default:
			r, size := utf8.DecodeRune(sc.b[sc.i:])
			if r == utf8.RuneError && size <= 1 {
				return nil, escaped, sc.fail("invalid UTF-8 at byte %d", sc.i)
			}
			sc.i += size
		}
	}
	return nil, escaped, sc.fail("unterminated string")
}

// escape reads one escape sequence at sc.i (the backslash).
func (sc *strictScanner) escape() error {
	at := sc.i
	if sc.i+1 >= len(sc.b) {
		return sc.fail("unterminated escape")
	}
	if sc.b[sc.i+1] != 'u' {
		sc.i += 2
		return nil
	}
	r, ok := sc.hex4(sc.i + 2)
	if !ok {
		return sc.fail("bad \\u escape at byte %d", at)
	}
	sc.i += 6
	switch {
	case r >= 0xDC00 && r <= 0xDFFF:
		return sc.fail("lone low surrogate \\u%04x at byte %d", r, at)
	case r >= 0xD800 && r <= 0xDBFF:
		if sc.i+1 < len(sc.b) && sc.b[sc.i] == '\\' && sc.b[sc.i+1] == 'u' {
			if lo, ok := sc.hex4(sc.i + 2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				sc.i += 6
				return nil
			}
		}
		return sc.fail("lone high surrogate \\u%04x at byte %d", r, at)
	}
	return nil
}

func (sc *strictScanner) hex4(at int) (rune, bool) {
	if at+4 > len(sc.b) {
		return 0, false
	}
	var r rune
	for _, c := range sc.b[at : at+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// typeInfo is what the pass needs of a Go type: a struct's exact field
// names and their types, or a map's or slice's element. nil stands for
// any JSON (interface{}, json.RawMessage, custom unmarshalers, scalars).
type typeInfo struct {
	fields map[string]*typeInfo
	elem   *typeInfo
}

// child is the type of the value under key in an object of this type.
func (ti *typeInfo) child(key []byte) (*typeInfo, error) {
	if ti == nil {
		return nil, nil
	}
	if ti.fields == nil {
		return ti.elem, nil
	}
	if c, ok := ti.fields[string(key)]; ok {
		return c, nil
	}
	for name := range ti.fields {
		if strings.EqualFold(name, string(key)) {
			return nil, fmt.Errorf("key %s matches field %q only if case is ignored; field names are case-sensitive", shortQuote(string(key)), name)
		}
	}
	return nil, fmt.Errorf("unknown field %s", shortQuote(string(key)))
}

var (
	typeInfos     sync.Map   // reflect.Type → *typeInfo, complete ones only
	typeBuild     sync.Mutex // held while describing new types
	rawMessage    = reflect.TypeFor[json.RawMessage]()
	unmarshalerIf = reflect.TypeFor[json.Unmarshaler]()
)

// plainType strips pointers and reports whether t needs describing:
// structs, maps, slices and arrays that decode the ordinary way.
func plainType(t reflect.Type) (reflect.Type, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == rawMessage || reflect.PointerTo(t).Implements(unmarshalerIf) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return t, true
	}
	return nil, false
}

// infoFor describes t, once per type.
func infoFor(t reflect.Type) *typeInfo {
	t, ok := plainType(t)
	if !ok {
		return nil
	}
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	typeBuild.Lock()
	defer typeBuild.Unlock()
	building := map[reflect.Type]*typeInfo{}
	ti := describe(t, building)
	for k, v := range building {
		typeInfos.Store(k, v)
	}
	return ti
}

// describe builds the typeInfo of t; building holds the types being
// described, so that a recursive type ends.
func describe(t reflect.Type, building map[reflect.Type]*typeInfo) *typeInfo {
	t, ok := plainType(t)
	if !ok {
		return nil
	}
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	if ti, ok := building[t]; ok {
		return ti
	}
	ti := &typeInfo{}
	building[t] = ti
	if t.Kind() == reflect.Struct {
		ti.fields = map[string]*typeInfo{}
		addFields(ti.fields, t, building)
	} else {
		ti.elem = describe(t.Elem(), building)
	}
	return ti
}

// addFields adds t's JSON field names, flattening embedded structs the
// way encoding/json does for the simple cases the protocol uses.
func addFields(into map[string]*typeInfo, t reflect.Type, building map[reflect.Type]*typeInfo) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(into, ft, building)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		into[name] = describe(f.Type, building)
	}
}
