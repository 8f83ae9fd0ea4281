// Package execsession keeps the exec sessions of one coordinator (the
// leader, which every client and agent request reaches): a client opens
// one for a running task, the task's agent learns of it from its heartbeat
// answer and dials in, and the coordinator splices the two streams of
// frames (api.ExecFrame). Sessions live in memory only: a session whose
// ends do not both attach within its deadline expires, and a leader that
// loses office takes its sessions with it (the client sees its attach
// fail and opens another).
package execsession
