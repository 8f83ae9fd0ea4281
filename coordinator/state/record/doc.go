// Package record holds the records of the state's large tables: jobs,
// their tasks and each task's attempts, and workers. They are the
// replicated domain: what a snapshot carries of each and what every
// replica holds alike. The state (coordinator/state) keeps the tables,
// applies commands to the records and indexes them; this package knows
// no table, no command and no wire type.
//
// Beside its replicated fields a record carries a little bookkeeping the
// tables derive and a snapshot never holds: a worker's held tasks and
// its topology numbers, a task's write stamp (the capture generation it
// was last written in, and whether a remembered finish froze it), a
// job's parsed affinity rules. They are unexported, reached through
// methods, and left out of a record's copies where a copy must not
// share them (Worker.Clone, Worker.DropHeld, Task.Clone).
package record
