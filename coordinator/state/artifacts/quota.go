package artifacts

// A team's artifact quota (TeamSettings.ArtifactQuotaBytes) counts the
// bytes of the recorded artifacts charged to it (Artifact.ChargedTeam),
// each once:
//
//   - a client's upload is charged to the client token's team when it is
//     first recorded;
//   - a worker's upload is charged to the team of the tasks it holds that
//     may upload (RecordArtifact.ChargeTeam, chosen at the HTTP edge); a
//     finish naming it as an output, or a report naming it as a
//     checkpoint, charges it to that task's job's team, if the reporting
//     worker uploaded it (Grant);
//   - a task's checkpoint that a newer one replaces is no longer charged
//     (Release): only the latest per task counts;
//   - collected artifacts stop counting.
//
// The credential quota (BytesBy) holds besides.

// Grant lets team read digest, which workerID reported as an output or a
// checkpoint of one of team's tasks, and charges it to team when workerID
// uploaded it: a worker's upload belongs to the job whose task it ran.
// A digest without a record changes nothing.
func (t *Table) Grant(digest, team, workerID string) {
	a, ok := t.m[digest]
	if !ok {
		return
	}
	a.grantTeam(team)
	if a.UploadedBy == workerID && workerID != "" {
		a.ChargedTeam = team
	}
}

// Release stops charging team for digest, a checkpoint a newer one
// replaced, unless stillKept says another of the team's tasks keeps it as
// its latest.
func (t *Table) Release(digest, team string, stillKept func() bool) {
	a, ok := t.m[digest]
	if !ok || a.ChargedTeam != team || stillKept() {
		return
	}
	a.ChargedTeam = ""
}

// BytesOfTeam is how many bytes of recorded artifacts are charged to
// team.
func (t *Table) BytesOfTeam(team string) int64 {
	return t.bytesWhere(func(a *Artifact) bool { return a.ChargedTeam == team })
}

// BytesByTeam is BytesOfTeam for every team charged.
func (t *Table) BytesByTeam() map[string]int64 {
	out := map[string]int64{}
	for _, a := range t.m {
		if a.ChargedTeam != "" {
			out[a.ChargedTeam] += a.Size
		}
	}
	return out
}

// BytesBy is how many bytes of recorded artifacts were first uploaded
// under the credential name by: what its artifact quota counts. An
// artifact counts once, for whoever uploaded it first; uploading a digest
// that is already recorded adds nothing. Collected artifacts stop
// counting.
func (t *Table) BytesBy(by string) int64 {
	return t.bytesWhere(func(a *Artifact) bool { return a.UploadedBy == by })
}

// bytesWhere sums the sizes of the records keep accepts.
func (t *Table) bytesWhere(keep func(*Artifact) bool) int64 {
	var n int64
	for _, a := range t.m {
		if keep(a) {
			n += a.Size
		}
	}
	return n
}
