// Package place holds placement's plans that span workers, as pure
// functions of a View of the replicated state: a gang's placement
// (Gang: every member or none, the asking worker first, then the others
// nearest it in the fleet's topology, ByTopology) and the bookkeeping a
// plan and the state machine's check of it share (Tentative: what a plan
// being made or checked has given each worker so far).
//
// The store gives the view under its read lock to plan, and checks an
// AssignGang as it applies with the same Tentative, so a placement that
// was right when planned is refused only when the state moved on since.
// Nothing here reads a clock or a random source.
package place
