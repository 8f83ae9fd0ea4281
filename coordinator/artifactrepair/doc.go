// Package artifactrepair keeps the promise an artifact's record makes:
// the holders it lists have the bytes on their disks (issue 27). Two
// things keep it, neither of which speaks HTTP (httpapi carries the calls
// between coordinators, through the Peers it gives this package):
//
//   - Each coordinator checks the copies the state says it holds
//     (Checker): a file that is missing, of the wrong size, or that no
//     longer hashes to its name is first dropped from the record (a
//     SetArtifactHolder the leader proposes), then fetched again from
//     another holder, verified as it is stored, and only then recorded
//     again. A node never stays listed for bytes it found it lacks.
//   - The leader finds the artifacts that have fewer live holders
//     (holders that are coordinators of the Raft configuration) than
//     min(2, cluster size) and has another coordinator take a copy
//     (Repair.Replicate, planned by Plan, a pure function); it records
//     that coordinator only once it answered that it verified the bytes
//     on its disk.
package artifactrepair
