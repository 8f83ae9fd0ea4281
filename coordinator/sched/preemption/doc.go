// Package preemption decides which running tasks a waiting task may take
// GPUs back from (docs/preemption.md), as pure functions of a View of
// the replicated state: the leader's plan (Plan, over the candidates
// Candidates picks) and the state machine's check of the command that
// plan becomes (Check, over VictimErr, Round, GangFits, FitsBeside,
// PlaceableNow) read the same rules, so a plan that was
// right when made is refused only when the state moved on since.
//
// The policy. A pending task P that cannot be placed may take GPUs back:
//   - from a task of another team that runs on borrowed GPUs (its team
//     holds more than its quota), when P's team holds less than its own;
//   - from a task of its own team whose priority is below P's.
//
// Never from a job with preemptible: false, a task already told to
// stop, or an attempt that has run less than the minimum runtime (the
// storm guard). A running gang is a victim whole: taking one member
// stops every member, so each must be a victim by these rules. Victims
// are taken lowest priority first, then youngest, on the one worker
// where the fewest of them make P fit (for a gang P, on as many workers
// as it needs: gang.go); a preemption happens only if P then fits.
//
// Nothing here writes: the state applies the command and keeps the
// holds; nothing here reads a clock (now is the command's) or a random
// source, so every replica decides alike.
package preemption
