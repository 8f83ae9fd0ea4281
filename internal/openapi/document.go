// Package openapi writes OpenAPI 3.1 documents: the few objects of the
// specification a JSON HTTP API needs, and JSON Schemas reflected from the
// Go types that travel on the wire (Reflector), so that the description
// and the handlers share one definition of every body.
//
// Every map is written by encoding/json with its keys sorted and nothing
// depends on map order, so one description always renders to the same
// bytes.
package openapi

import (
	"encoding/json"
	"sort"
	"strings"
)

// Version is the OpenAPI version the documents declare.
const Version = "3.1.0"

// Document is an OpenAPI 3.1 document.
type Document struct {
	OpenAPI    string                `json:"openapi"`
	Info       Info                  `json:"info"`
	Servers    []Server              `json:"servers,omitempty"`
	Tags       []Tag                 `json:"tags,omitempty"`
	Paths      map[string]PathItem   `json:"paths"`
	Components Components            `json:"components"`
	Security   []SecurityRequirement `json:"security,omitempty"`
}

// Info describes the API.
type Info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Summary     string `json:"summary,omitempty"`
	Description string `json:"description,omitempty"`
}

// Server is a base URL; a relative one is resolved against the
// document's own address.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// Tag groups operations.
type Tag struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// PathItem holds a path's operations by lowercase method.
type PathItem map[string]*Operation

// Operation is one method on one path.
type Operation struct {
	OperationID string                `json:"operationId"`
	Summary     string                `json:"summary,omitempty"`
	Description string                `json:"description,omitempty"`
	Tags        []string              `json:"tags,omitempty"`
	Parameters  []Parameter           `json:"parameters,omitempty"`
	RequestBody *RequestBody          `json:"requestBody,omitempty"`
	Responses   map[string]Response   `json:"responses"`
	Security    []SecurityRequirement `json:"security"`
}

// Parameter is a path, query or header parameter, or a $ref to one.
type Parameter struct {
	Ref         string `json:"$ref,omitempty"`
	Name        string `json:"name,omitempty"`
	In          string `json:"in,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Schema      Schema `json:"schema,omitempty"`
}

// RequestBody is what an operation takes.
type RequestBody struct {
	Description string               `json:"description,omitempty"`
	Required    bool                 `json:"required,omitempty"`
	Content     map[string]MediaType `json:"content"`
}

// Response is one answer of an operation, or a $ref to one.
type Response struct {
	Ref         string               `json:"$ref,omitempty"`
	Description string               `json:"description,omitempty"`
	Headers     map[string]Header    `json:"headers,omitempty"`
	Content     map[string]MediaType `json:"content,omitempty"`
}

// Header is a response header.
type Header struct {
	Description string `json:"description,omitempty"`
	Schema      Schema `json:"schema"`
}

// MediaType is a body in one content type.
type MediaType struct {
	Schema Schema `json:"schema"`
}

// Components are the reusable parts a document refers to.
type Components struct {
	Schemas         map[string]Schema         `json:"schemas,omitempty"`
	Responses       map[string]Response       `json:"responses,omitempty"`
	Parameters      map[string]Parameter      `json:"parameters,omitempty"`
	SecuritySchemes map[string]SecurityScheme `json:"securitySchemes,omitempty"`
}

// SecurityScheme is a way to authenticate: http bearer, or mutualTLS.
type SecurityScheme struct {
	Type         string `json:"type"`
	Scheme       string `json:"scheme,omitempty"`
	BearerFormat string `json:"bearerFormat,omitempty"`
	Description  string `json:"description,omitempty"`
}

// SecurityRequirement names schemes that together authenticate a call,
// each with the roles it must hold (OpenAPI 3.1 lets a non-OAuth scheme
// list role names). An operation's requirements are alternatives; an
// empty list means no credential.
type SecurityRequirement map[string][]string

// Route is how a path is written for Go's http.ServeMux: "{name...}"
// becomes "{name}", which is all OpenAPI can say of a trailing wildcard.
func Route(pattern string) string {
	return strings.ReplaceAll(pattern, "...}", "}")
}

// Operations lists the document's operations as "METHOD path" (uppercase
// method), sorted.
func (d *Document) Operations() []string {
	var out []string
	for path, item := range d.Paths {
		for method := range item {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// Marshal renders d as indented JSON. Equal documents render to equal
// bytes.
func (d *Document) Marshal() ([]byte, error) {
	return json.MarshalIndent(d, "", "  ")
}
