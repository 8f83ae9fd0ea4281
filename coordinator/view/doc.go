// Package view renders the coordinator's domain records (package state)
// as the API's wire views (package sdk/api). It is the one place that
// knows both: state holds and returns domain records, httpapi and sched
// call here to answer in the protocol's shapes.
//
// Every function is pure: the same record renders the same view, so an
// answer stored as a record (a finish's replay) renders byte for byte as
// it first did.
package view
