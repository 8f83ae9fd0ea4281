// Package agentfaults is a randomized fault test of real agent processes
// (`gpulayer agent run`, the binary built once for the package) and their
// real executor plugin processes (`gpulayer plugin exec`, go-plugin over
// gRPC), under a three-node coordinator cluster (coordinatortest.
// StartCluster, each coordinator a process of its own, real Raft on
// loopback).
//
// TestRealAgentFaults runs GPULAYER_AGENT_FAULT_SCHEDULES schedules
// (default 3), schedule i from seed GPULAYER_AGENT_FAULT_SEED+i (default
// 1+i). A seed decides the plan: two or three agents (each with eight fake
// H100s, three task slots, its own data and work dir; as root some run
// every task as one --task-user, the others a uid per slot), a stream of
// 12 to 18 exec jobs (none, one, two or four GPUs; 100 to 800 ms; some
// exiting non-zero on purpose; two-second leases, four attempts), and
// four or five faults, one after another while the jobs stream in:
//
//   - kill-agent: SIGKILL of an agent while it runs a job pinned to it
//     (3 to 4.5 s, longer than a lease), then a restart on the same data
//     dir after up to a second;
//   - crash-plugin: SIGKILL of an agent's plugin process (a child of the
//     agent, found in /proc) while it runs such a job;
//   - pause-agent: SIGSTOP of an agent while it runs such a job, until
//     the coordinator counts the attempt lost, then SIGCONT (the plugin and
//     the task run on meanwhile, as on a node whose agent hangs);
//   - restart-leader: SIGKILL of the leading coordinator, then a restart
//     on its data dir once another leads;
//   - quorum-loss: SIGKILL of the leader and a follower while a job
//     pinned to an agent runs, down past the task's end and its lease,
//     with the coordinators' clocks moved on 30 to 300 s; in half the
//     schedules the agent is killed and restarted during the outage once
//     the report is in its spool.
//
// Every schedule kills an agent, crashes a plugin and loses its quorum,
// and pauses an agent (odd seeds; in half of them until the retries of
// its lost attempts have ended elsewhere) or restarts the leader (even
// seeds).
//
// Each task is a shell script (lockScript) that takes flock(2) locks, one
// per job and one per GPU of its agent, and records its start and end in
// a shared directory; a lock it cannot take means another live process
// holds it, and it records an overlap. A flock lasts as long as a process
// holding it lives, SIGKILL or not, so locks never go stale.
//
// Then everything is healed and every acknowledged job waited for (60 s at
// most, polling), and the checks (check) require: every acknowledged job
// ended; no task succeeded twice; never two processes of one task at once
// and never two on one GPU (no overlap); every run on the worker and the
// GPUs the coordinator assigned; a succeeded attempt has a completed run
// (start and end 0) in the events, a finished exit code the end its task
// wrote; no task whose process ended 0 is started anew by a later
// attempt, unless a fault struck the attempt that ran it; a job ends as its plan says (succeeded, or failed with its exit
// code) unless faults used up its attempts; an attempt running on an agent
// killed with SIGKILL finished, or its task was retried; an attempt whose
// plugin crashed under it failed with a reason naming the crash (or was
// lost), never succeeded without its run ending, never hung; a failed or
// lost attempt has a reason. Problems seen while the faults ran fail the
// schedule too: a killed agent's plugin or task processes alive 1.5 s
// later, a crashed plugin's task processes alive 10 s later, processes of
// any attempt alive 10 s after every job ended, an agent that exited by
// itself, an agent that did not resume its worker credential after a
// restart or whose credential file changed, a worker registered anew.
//
// A failing schedule prints its seed, the command that replays it and
// where the agents' logs, the events and the final job views were kept.
// The seed fixes the plan, not the timing, so a replay reproduces most
// failures, not every one.
//
// TestAgentSIGKILLLeavesNoOrphans and TestPluginCrashFailsTheAttempt are
// the two faults alone, deterministic. The checks themselves are tested
// on planted anomalies (TestCheckFlagsPlantedAnomalies).
//
// The tests need Linux (/proc), sh and flock(1); as root the agents run
// tasks under uids from 62000 (62000 to 62600 must be free), otherwise
// with --allow-shared-user-tasks.
package agentfaults
