package state

import (
	"fmt"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
)

// The group commands: the room (package groups) keeps the table and its
// rules; the state checks that a worker member is registered, that no
// unfinished task targets a group being deleted, and audits each change.

func (s *Store) workerExists(id string) bool { _, ok := s.workers[id]; return ok }

func (s *Store) createGroup(c command.CreateGroup) (groups.Record, error) {
	rec, err := s.groups.Create(c.GroupID, c.Members, c.By, c.Now, s.workerExists)
	if err != nil {
		return groups.Record{}, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "group.created", Actor: c.By, Subject: c.GroupID, Source: c.Source, Detail: membersDetail(rec.Group.Members)})
	s.markPending()
	return rec, nil
}

func (s *Store) addGroupMember(c command.AddGroupMember) (groups.Record, error) {
	rec, changed, err := s.groups.Add(c.GroupID, c.Member, c.Now, s.workerExists)
	if err != nil || !changed {
		return rec, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "group.member_added", Actor: c.By, Subject: c.GroupID, Source: c.Source, Detail: c.Member.String()})
	s.markPending() // workers may now take tasks they could not before
	return rec, nil
}

func (s *Store) removeGroupMember(c command.RemoveGroupMember) (groups.Record, error) {
	rec, changed, err := s.groups.Remove(c.GroupID, c.Member, c.Now)
	if err != nil || !changed {
		return rec, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "group.member_removed", Actor: c.By, Subject: c.GroupID, Source: c.Source, Detail: c.Member.String()})
	return rec, nil
}

// deleteGroup refuses to delete a group that another group contains (the
// parent would change meaning silently) or that an unfinished task targets
// (the task could never run).
func (s *Store) deleteGroup(c command.DeleteGroup) (groups.Record, error) {
	rec, err := s.groups.Delete(c.GroupID, func() error {
		if n := s.unfinishedTargeting(command.Target{Kind: targetGroup, ID: c.GroupID}); n > 0 {
			return fmt.Errorf("%d unfinished tasks target group %s; cancel them first: %w", n, c.GroupID, ErrConflict)
		}
		return nil
	})
	if err != nil {
		return groups.Record{}, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "group.deleted", Actor: c.By, Subject: c.GroupID, Source: c.Source})
	return rec, nil
}

func membersDetail(ms []command.GroupMember) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return "members " + strings.Join(out, ",")
}

// unfinishedTargeting counts pending and active tasks whose job targets t.
// Pending ones come from the queue index and the jobs that hold tasks out
// of it; active ones from the workers' holds, which are bounded by what
// the cluster runs at once.
func (s *Store) unfinishedTargeting(t command.Target) int {
	n := s.queue.Targeted(pending.TargetKey(&t)) + s.heldTargeting(t) // dependencies.go
	for _, w := range s.workers {
		for id := range w.Held() {
			if spec := s.jobs.Get(s.tasks.Get(id).JobID).Spec; spec.Target != nil && *spec.Target == t {
				n++
			}
		}
	}
	return n
}

// targetExists checks that a job's target names a registered worker or an
// existing group.
func (s *Store) targetExists(t *command.Target) error {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case targetWorker:
		if _, ok := s.workers[t.ID]; !ok {
			return fmt.Errorf("target worker %s: %w", t.ID, ErrNotFound)
		}
	case targetGroup:
		if !s.groups.Has(t.ID) {
			return fmt.Errorf("target group %s: %w", t.ID, ErrNotFound)
		}
	default:
		return fmt.Errorf("%w: target kind %q", ErrInvalid, t.Kind)
	}
	return nil
}

// Group returns a copy of a group with its workers.
func (s *Store) Group(id string) (groups.Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.groups.Record(id)
}

// Groups lists every group with its workers, by id.
func (s *Store) Groups() []groups.Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.groups.Records()
}
