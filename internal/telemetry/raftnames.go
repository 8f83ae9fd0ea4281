package telemetry

import (
	"fmt"
	"strings"
	"unicode"
)

// kind is the Prometheus type a Raft measurement is served as.
type kind int

const (
	kindCounter kind = iota
	kindGauge
	kindSummary
)

func (k kind) String() string {
	switch k {
	case kindCounter:
		return "counter"
	case kindGauge:
		return "gauge"
	default:
		return "summary"
	}
}

// fromMillis converts a value Raft reports in milliseconds to seconds.
const fromMillis = 1e-3

// raftName is how one go-metrics key of Raft (or of its BoltDB log store)
// is served: the family's name, type, help text and the factor that turns
// the reported value into the family's unit. label, when set, is a label
// the key adds to its family with a fixed value, so that several keys
// (raft.state.leader, raft.state.candidate…) share one family.
type raftName struct {
	name  string
	kind  kind
	help  string
	scale float64 // 0 means 1
	label [2]string
}

// raftNames maps each go-metrics key Raft v1.7 and raft-boltdb v2 emit
// (parts joined with dots) to its family. Timings arrive in milliseconds
// (the go-metrics timer granularity Shared sets, or Raft's own
// conversion) and are served in seconds. A key missing here is served
// under a name derived from it (fallbackName).
var raftNames = map[string]raftName{
	// Counters.
	"raft.apply":                           {name: "gpulayer_raft_apply_total", kind: kindCounter, help: "Entries the leader was asked to apply to the log (a batch of commands counts once)."},
	"raft.barrier":                         {name: "gpulayer_raft_barriers_total", kind: kindCounter, help: "Barriers the leader was asked to commit."},
	"raft.restore":                         {name: "gpulayer_raft_user_restores_total", kind: kindCounter, help: "Snapshots restored on an operator's request."},
	"raft.verify_leader":                   {name: "gpulayer_raft_verify_leader_total", kind: kindCounter, help: "Checks by the leader that it still leads (linearizable reads)."},
	"raft.state.follower":                  {name: "gpulayer_raft_state_changes_total", kind: kindCounter, help: "Times this node entered each Raft state; a rising candidate count means elections.", label: [2]string{"state", "follower"}},
	"raft.state.candidate":                 {name: "gpulayer_raft_state_changes_total", kind: kindCounter, help: "Times this node entered each Raft state; a rising candidate count means elections.", label: [2]string{"state", "candidate"}},
	"raft.state.leader":                    {name: "gpulayer_raft_state_changes_total", kind: kindCounter, help: "Times this node entered each Raft state; a rising candidate count means elections.", label: [2]string{"state", "leader"}},
	"raft.transition.heartbeat_timeout":    {name: "gpulayer_raft_heartbeat_timeouts_total", kind: kindCounter, help: "Times this follower heard from no leader within the heartbeat timeout and stood for election."},
	"raft.transition.leader_lease_timeout": {name: "gpulayer_raft_leader_lease_timeouts_total", kind: kindCounter, help: "Times this leader lost contact with a quorum for a lease and stepped down."},
	"raft.replication.appendEntries.logs":  {name: "gpulayer_raft_replication_entries_total", kind: kindCounter, help: "Log entries the leader sent to each follower."},
	"raft.boltdb.totalReadTxn":             {name: "gpulayer_raft_boltdb_read_transactions_total", kind: kindCounter, help: "Read transactions started on the Raft log store."},
	"raft.boltdb.txstats.cursorCount":      {name: "gpulayer_raft_boltdb_cursors_total", kind: kindCounter, help: "Cursors created on the Raft log store."},
	"raft.boltdb.txstats.nodeCount":        {name: "gpulayer_raft_boltdb_node_allocations_total", kind: kindCounter, help: "B+tree node allocations in the Raft log store."},
	"raft.boltdb.txstats.nodeDeref":        {name: "gpulayer_raft_boltdb_node_dereferences_total", kind: kindCounter, help: "B+tree node dereferences in the Raft log store."},
	"raft.boltdb.txstats.rebalance":        {name: "gpulayer_raft_boltdb_rebalances_total", kind: kindCounter, help: "B+tree node rebalances in the Raft log store."},
	"raft.boltdb.txstats.split":            {name: "gpulayer_raft_boltdb_splits_total", kind: kindCounter, help: "B+tree node splits in the Raft log store."},
	"raft.boltdb.txstats.spill":            {name: "gpulayer_raft_boltdb_spills_total", kind: kindCounter, help: "B+tree node spills in the Raft log store."},
	"raft.boltdb.txstats.write":            {name: "gpulayer_raft_boltdb_page_writes_total", kind: kindCounter, help: "Page writes to the Raft log store."},
	"raft.boltdb.txstats.pageCount":        {name: "gpulayer_raft_boltdb_page_allocations", kind: kindGauge, help: "Page allocations of the Raft log store's transactions, as BoltDB last reported."},
	"raft.boltdb.txstats.pageAlloc":        {name: "gpulayer_raft_boltdb_page_allocated_bytes", kind: kindGauge, help: "Bytes allocated for pages by the Raft log store's transactions, as BoltDB last reported."},
	"raft.boltdb.numFreePages":             {name: "gpulayer_raft_boltdb_free_pages", kind: kindGauge, help: "Free pages in the Raft log store's file."},
	"raft.boltdb.numPendingPages":          {name: "gpulayer_raft_boltdb_pending_pages", kind: kindGauge, help: "Pages of the Raft log store freed but still held by open read transactions."},
	"raft.boltdb.freePageBytes":            {name: "gpulayer_raft_boltdb_free_page_bytes", kind: kindGauge, help: "Bytes in free pages of the Raft log store's file."},
	"raft.boltdb.freelistBytes":            {name: "gpulayer_raft_boltdb_freelist_bytes", kind: kindGauge, help: "Bytes the Raft log store's freelist takes."},
	"raft.boltdb.openReadTxn":              {name: "gpulayer_raft_boltdb_open_read_transactions", kind: kindGauge, help: "Read transactions open on the Raft log store."},
	"raft.peers":                           {name: "gpulayer_raft_peers", kind: kindGauge, help: "Servers in the latest Raft configuration, as the leader last saw it."},
	"raft.commitNumLogs":                   {name: "gpulayer_raft_commit_batch_entries", kind: kindGauge, help: "Entries in the leader's last commit batch."},
	"raft.leader.dispatchNumLogs":          {name: "gpulayer_raft_leader_dispatch_batch_entries", kind: kindGauge, help: "Entries in the leader's last write to its own log."},
	"raft.leader.oldestLogAge":             {name: "gpulayer_raft_leader_oldest_log_age_seconds", kind: kindGauge, help: "Age of the oldest entry in this node's log; short means snapshots compact it often.", scale: fromMillis},
	"raft.fsm.lastRestoreDuration":         {name: "gpulayer_raft_fsm_last_restore_duration_seconds", kind: kindGauge, help: "Time the last snapshot restore into the state took.", scale: fromMillis},
	"raft.commitTime":                      {name: "gpulayer_raft_commit_duration_seconds", kind: kindSummary, help: "Leader: time from appending an entry to its commit by a quorum.", scale: fromMillis},
	"raft.leader.lastContact":              {name: "gpulayer_raft_leader_last_contact_seconds", kind: kindSummary, help: "Leader: time since it last heard from a quorum of followers; near the leader lease is trouble.", scale: fromMillis},
	"raft.leader.dispatchLog":              {name: "gpulayer_raft_leader_dispatch_duration_seconds", kind: kindSummary, help: "Leader: time to write a batch of entries to its own log.", scale: fromMillis},
	"raft.fsm.apply":                       {name: "gpulayer_raft_fsm_apply_duration_seconds", kind: kindSummary, help: "Time to apply one entry to the replicated state.", scale: fromMillis},
	"raft.fsm.applyBatch":                  {name: "gpulayer_raft_fsm_apply_batch_duration_seconds", kind: kindSummary, help: "Time to apply one batch of entries to the replicated state.", scale: fromMillis},
	"raft.fsm.applyBatchNum":               {name: "gpulayer_raft_fsm_apply_batch_entries", kind: kindSummary, help: "Entries in each batch applied to the replicated state."},
	"raft.fsm.enqueue":                     {name: "gpulayer_raft_fsm_enqueue_duration_seconds", kind: kindSummary, help: "Time committed entries wait to be handed to the state machine.", scale: fromMillis},
	"raft.fsm.restore":                     {name: "gpulayer_raft_fsm_restore_duration_seconds", kind: kindSummary, help: "Time to restore the replicated state from a snapshot.", scale: fromMillis},
	"raft.fsm.snapshot":                    {name: "gpulayer_raft_fsm_snapshot_duration_seconds", kind: kindSummary, help: "Time for the state to hand Raft a snapshot of itself.", scale: fromMillis},
	"raft.fsm.store_config":                {name: "gpulayer_raft_fsm_store_config_duration_seconds", kind: kindSummary, help: "Time to hand a configuration change to the state machine.", scale: fromMillis},
	"raft.snapshot.create":                 {name: "gpulayer_raft_snapshot_create_duration_seconds", kind: kindSummary, help: "Time to create a snapshot file.", scale: fromMillis},
	"raft.snapshot.persist":                {name: "gpulayer_raft_snapshot_persist_duration_seconds", kind: kindSummary, help: "Time to write a snapshot to disk.", scale: fromMillis},
	"raft.snapshot.takeSnapshot":           {name: "gpulayer_raft_snapshot_duration_seconds", kind: kindSummary, help: "Time to take a snapshot, from asking the state to compacting the log.", scale: fromMillis},
	"raft.compactLogs":                     {name: "gpulayer_raft_compact_logs_duration_seconds", kind: kindSummary, help: "Time to remove log entries a snapshot covers.", scale: fromMillis},
	"raft.removeOldLogs":                   {name: "gpulayer_raft_remove_old_logs_duration_seconds", kind: kindSummary, help: "Time to remove old log entries after restoring a snapshot.", scale: fromMillis},
	"raft.restoreUserSnapshot":             {name: "gpulayer_raft_user_restore_duration_seconds", kind: kindSummary, help: "Time to restore a snapshot on an operator's request.", scale: fromMillis},
	"raft.candidate.electSelf":             {name: "gpulayer_raft_candidate_elect_self_duration_seconds", kind: kindSummary, help: "Candidate: time to vote for itself and ask its peers for votes.", scale: fromMillis},
	"raft.candidate.preElectSelf":          {name: "gpulayer_raft_candidate_pre_elect_self_duration_seconds", kind: kindSummary, help: "Candidate: time to run a pre-vote before an election.", scale: fromMillis},
	"raft.replication.appendEntries.rpc":   {name: "gpulayer_raft_replication_append_entries_duration_seconds", kind: kindSummary, help: "Leader: one AppendEntries round trip to each follower.", scale: fromMillis},
	"raft.replication.heartbeat":           {name: "gpulayer_raft_replication_heartbeat_duration_seconds", kind: kindSummary, help: "Leader: one heartbeat round trip to each follower.", scale: fromMillis},
	"raft.replication.installSnapshot":     {name: "gpulayer_raft_replication_install_snapshot_duration_seconds", kind: kindSummary, help: "Leader: time to send a snapshot to a follower that fell behind the log.", scale: fromMillis},
	"raft.rpc.appendEntries":               {name: "gpulayer_raft_rpc_append_entries_duration_seconds", kind: kindSummary, help: "Follower: time to handle one AppendEntries request.", scale: fromMillis},
	"raft.rpc.appendEntries.storeLogs":     {name: "gpulayer_raft_rpc_append_entries_store_duration_seconds", kind: kindSummary, help: "Follower: time to write the entries of one AppendEntries request to its log.", scale: fromMillis},
	"raft.rpc.appendEntries.processLogs":   {name: "gpulayer_raft_rpc_append_entries_process_duration_seconds", kind: kindSummary, help: "Follower: time to process the entries of one AppendEntries request.", scale: fromMillis},
	"raft.rpc.installSnapshot":             {name: "gpulayer_raft_rpc_install_snapshot_duration_seconds", kind: kindSummary, help: "Follower: time to receive and install a snapshot from the leader.", scale: fromMillis},
	"raft.rpc.processHeartbeat":            {name: "gpulayer_raft_rpc_heartbeat_duration_seconds", kind: kindSummary, help: "Follower: time to handle one heartbeat.", scale: fromMillis},
	"raft.rpc.requestVote":                 {name: "gpulayer_raft_rpc_request_vote_duration_seconds", kind: kindSummary, help: "Time to handle one vote request.", scale: fromMillis},
	"raft.net.getRPCType":                  {name: "gpulayer_raft_net_rpc_type_read_duration_seconds", kind: kindSummary, help: "Transport: time to read the type of an incoming RPC.", scale: fromMillis},
	"raft.net.rpcDecode":                   {name: "gpulayer_raft_net_rpc_decode_duration_seconds", kind: kindSummary, help: "Transport: time to decode an incoming RPC, by type.", scale: fromMillis},
	"raft.net.rpcEnqueue":                  {name: "gpulayer_raft_net_rpc_enqueue_duration_seconds", kind: kindSummary, help: "Transport: time an incoming RPC waits to be handed to Raft, by type.", scale: fromMillis},
	"raft.net.rpcRespond":                  {name: "gpulayer_raft_net_rpc_respond_duration_seconds", kind: kindSummary, help: "Transport: time from handing an RPC to Raft to sending its answer, by type.", scale: fromMillis},
	"raft.thread.main.saturation":          {name: "gpulayer_raft_thread_saturation_ratio", kind: kindSummary, help: "Share of time Raft's goroutines spend working rather than waiting (0 to 1); near 1 means Raft cannot keep up.", label: [2]string{"thread", "main"}},
	"raft.thread.fsm.saturation":           {name: "gpulayer_raft_thread_saturation_ratio", kind: kindSummary, help: "Share of time Raft's goroutines spend working rather than waiting (0 to 1); near 1 means Raft cannot keep up.", label: [2]string{"thread", "fsm"}},
	"raft.boltdb.getLog":                   {name: "gpulayer_raft_boltdb_get_log_duration_seconds", kind: kindSummary, help: "Time to read one entry from the Raft log store.", scale: fromMillis},
	"raft.boltdb.storeLogs":                {name: "gpulayer_raft_boltdb_store_logs_duration_seconds", kind: kindSummary, help: "Time to write a batch of entries to the Raft log store.", scale: fromMillis},
	"raft.boltdb.logSize":                  {name: "gpulayer_raft_boltdb_entry_size_bytes", kind: kindSummary, help: "Size of each entry written to the Raft log store."},
	"raft.boltdb.logsPerBatch":             {name: "gpulayer_raft_boltdb_batch_entries", kind: kindSummary, help: "Entries in each batch written to the Raft log store."},
	"raft.boltdb.logBatchSize":             {name: "gpulayer_raft_boltdb_batch_size_bytes", kind: kindSummary, help: "Size of each batch written to the Raft log store."},
	"raft.boltdb.writeCapacity":            {name: "gpulayer_raft_boltdb_write_capacity_entries_per_second", kind: kindSummary, help: "Entries per second the Raft log store could take at the speed of each batch write."},
	"raft.boltdb.txstats.rebalanceTime":    {name: "gpulayer_raft_boltdb_rebalance_duration_seconds", kind: kindSummary, help: "Time the Raft log store spent rebalancing B+tree nodes since its last report.", scale: fromMillis},
	"raft.boltdb.txstats.spillTime":        {name: "gpulayer_raft_boltdb_spill_duration_seconds", kind: kindSummary, help: "Time the Raft log store spent spilling B+tree nodes since its last report.", scale: fromMillis},
	"raft.boltdb.txstats.writeTime":        {name: "gpulayer_raft_boltdb_write_duration_seconds", kind: kindSummary, help: "Time the Raft log store spent writing pages since its last report.", scale: fromMillis},
}

// UntranslatedHelp ends the help text of a family served for a Raft key
// raftNames does not know, so that a test of a real scrape can tell one
// (after a Raft upgrade) and ask for a table entry.
const UntranslatedHelp = "not translated by gpulayer"

// translate is the family a go-metrics key and type are served as: the
// table's entry when the key is known as that type, else fallbackName's.
func translate(key []string, k kind) raftName {
	joined := strings.Join(key, ".")
	if n, ok := raftNames[joined]; ok && n.kind == k {
		return n
	}
	return raftName{name: fallbackName(key, k), kind: k, help: fmt.Sprintf("Raft's go-metrics %s %q, in Raft's own unit (%s).", k, joined, UntranslatedHelp)}
}

// fallbackName derives a family name from a key no table entry knows:
// gpulayer_ and the key's parts in snake_case joined by underscores,
// with _total for a counter.
func fallbackName(key []string, k kind) string {
	parts := make([]string, 0, len(key)+2)
	parts = append(parts, "gpulayer")
	for _, p := range key {
		if s := snakeCase(p); s != "" {
			parts = append(parts, s)
		}
	}
	if k == kindCounter {
		parts = append(parts, "total")
	}
	return strings.Join(parts, "_")
}

// snakeCase turns "appendEntries" into "append_entries" and "getRPCType"
// into "get_rpc_type"; any character outside [a-z0-9_] becomes "_".
func snakeCase(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
}
