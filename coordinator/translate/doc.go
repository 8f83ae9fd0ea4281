// Package translate is the one place where a value crosses between the
// wire (sdk/api) and the replicated state's own types
// (coordinator/command): From* reads what a request carried into the
// state's type, To* renders the state's value for an answer. Each
// resource has its pair in one file, copying field by field; the tests
// fill every field of either side and fail when a round trip loses one,
// so a field added to one side and not the other cannot be dropped
// silently.
package translate
