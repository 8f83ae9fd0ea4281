package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// readBody reads a JSON body under the cap.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > api.MaxJSONBody {
		return nil, newError(api.CodeBodyTooLarge, "body of %d bytes exceeds the %d byte cap", r.ContentLength, api.MaxJSONBody)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, api.MaxJSONBody+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newError(api.CodeBodyTooLarge, "body exceeds the %d byte cap", api.MaxJSONBody)
		}
		return nil, invalidf("reading body: %v", err)
	}
	if len(b) > api.MaxJSONBody {
		return nil, newError(api.CodeBodyTooLarge, "body exceeds the %d byte cap", api.MaxJSONBody)
	}
	return b, nil
}

// decodeStrict parses one JSON object into v. The decoder is the
// reference implementation of encoding/json/v2, whose defaults are the
// rules a request must follow and encoding/json lets pass in silence: a
// key given twice, anywhere, even inside free-form config (the last would
// win); a key that matches a field only when case is ignored; invalid
// UTF-8 and lone surrogate escapes (replaced by U+FFFD). Two parsers that
// read such a body differently (a proxy, an auditor, the coordinator)
// would disagree about what was asked, so it is refused, as are unknown
// fields and trailing data. An empty body is accepted as {} when
// allowEmpty is set.
func decodeStrict(b []byte, v any, allowEmpty bool) error {
	if len(bytes.TrimSpace(b)) == 0 {
		if allowEmpty {
			return nil
		}
		return invalidf("request body is empty; a JSON object is required")
	}
	if err := jsonv2.Unmarshal(b, v, jsonv2.RejectUnknownMembers(true)); err != nil {
		return invalidf("invalid JSON body: %s", describeJSONError(err))
	}
	return nil
}

// describeJSONError says what was wrong and where (a JSON Pointer), in
// terms of JSON rather than Go types, and quotes no part of the body but
// a key name.
func describeJSONError(err error) string {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		p := se.JSONPointer
		switch {
		case errors.Is(err, jsontext.ErrDuplicateName):
			return fmt.Sprintf("%skey %s appears twice", at(p.Parent()), shortQuote(p.LastToken()))
		case strings.HasPrefix(se.Err.Error(), "invalid surrogate"):
			return fmt.Sprintf("%sa string holds a lone surrogate escape", at(p))
		case errors.Is(se.Err, io.ErrUnexpectedEOF):
			return "the body ends before the object does"
		}
		return fmt.Sprintf("%s%s (at byte %d)", at(p), se.Err, se.ByteOffset)
	}
	var me *jsonv2.SemanticError
	if errors.As(err, &me) {
		p := me.JSONPointer
		switch {
		case errors.Is(err, jsonv2.ErrUnknownName):
			return fmt.Sprintf("%sunknown field %s", at(p.Parent()), shortQuote(p.LastToken()))
		case me.Err != nil && strings.Contains(me.Err.Error(), "out of range"):
			return fmt.Sprintf("%snumber out of range", at(p))
		case me.GoType != nil:
			return fmt.Sprintf("%smust be %s, not %s", at(p), jsonKindOf(me.GoType), foundName(me.JSONKind))
		}
	}
	return err.Error()
}

// at renders a JSON Pointer as the start of a message ("" for the root).
func at(p jsontext.Pointer) string {
	if p == "" {
		return ""
	}
	return string(p) + ": "
}

// jsonKindOf names the JSON a Go type is read from.
func jsonKindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON value"
}

// foundName names the JSON that was found.
func foundName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "something else"
}

func decodeRequest(r *http.Request, v any, allowEmpty bool) ([]byte, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return b, decodeStrict(b, v, allowEmpty)
}

// canonicalJSON re-encodes a JSON value with sorted keys and no spacing, so
// that equal values compare equal as bytes.
func canonicalJSON(b []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
