package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

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

// decodeStrict parses one JSON object into v, refusing unknown fields,
// trailing data, duplicate keys, keys that match a field only when case is
// ignored, invalid UTF-8 and lone surrogates (strictjson.go). An empty
// body is accepted as {} when allowEmpty is set.
func decodeStrict(b []byte, v any, allowEmpty bool) error {
	if len(bytes.TrimSpace(b)) == 0 {
		if allowEmpty {
			return nil
		}
		return invalidf("request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidf("invalid JSON body: %s", describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalidf("invalid JSON body: trailing data after the object")
	}
	if err := checkStrictJSON(b, reflect.TypeOf(v)); err != nil {
		return invalidf("invalid JSON body: %v", err)
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q must be %s", te.Field, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return err.Error()
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
