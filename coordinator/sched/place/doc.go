// Package place is placement, as pure functions of a view of the
// replicated state (View, MatchView, WhyView, Fleet):
//
//   - the match (Match): the teams in fair-share order (ByShare), the
//     sub-queues a worker could take from and has room for, the
//     backfill hold, a team's room and ceiling, affinity and spread,
//     and what one match learns and need not try again (misses.go);
//   - a worker's view (NewWorkerView: what its tasks hold whole or by a
//     share and until when, what is free) and the rules over it:
//     CanRun, the device and share choice (PickDevices), an
//     assignment's check (DevicesFreeFor), backfill's slots (HoldSlots);
//   - a gang's placement (Gang: every member or none, the asking worker
//     first, then the others nearest it, ByTopology), with the
//     Tentative a plan and the state machine's check of an AssignGang
//     share (MemberFits, DevicesFit);
//   - the backfill hold: the head of the order (Head), the GPUs it holds
//     as they free up (Hold), and the bases that let a choice read only
//     the workers that changed since the last (Bases); a team's room
//     (TeamRoom), which the state machine checks every assignment by;
//   - why a task waits (Why), which a job's read and the queue's give
//     (package report tells the queue, the MIG demand and the GPUs'
//     holders in these words).
//
// The store gives the view under its read lock to plan and match, and
// checks each assignment as it applies with the same functions, so a
// placement that was right when made is refused only when the state
// moved on since. Nothing here reads a clock (now is the caller's) or a
// random source, so every leader decides alike.
package place
