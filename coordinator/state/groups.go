package state

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// MaxGroupMembers bounds the direct members of one group.
const MaxGroupMembers = 1024

// Group is a named set of workers and groups. Members are kept sorted and
// unique, so a group's record does not depend on the order of the writes
// that built it.
type Group struct {
	ID        string                `json:"id"`
	Members   []command.GroupMember `json:"members"`
	CreatedAt time.Time             `json:"created_at"`
	CreatedBy string                `json:"created_by,omitempty"`
	UpdatedAt time.Time             `json:"updated_at"`
}

func compareMembers(a, b command.GroupMember) int {
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

func (g *Group) has(m command.GroupMember) bool {
	_, ok := slices.BinarySearchFunc(g.Members, m, compareMembers)
	return ok
}

// memberExists checks that a member names a registered worker or an
// existing group.
func (s *Store) memberExists(m command.GroupMember) error {
	switch m.Kind {
	case memberWorker:
		if _, ok := s.workers[m.ID]; !ok {
			return fmt.Errorf("member worker %s: %w", m.ID, ErrNotFound)
		}
	case memberGroup:
		if _, ok := s.groups[m.ID]; !ok {
			return fmt.Errorf("member group %s: %w", m.ID, ErrNotFound)
		}
	default:
		return fmt.Errorf("%w: member kind %q", ErrInvalid, m.Kind)
	}
	return nil
}

// reaches reports whether group to is from itself or reachable from group
// from through group members. It is the cycle check: adding group m to
// group g makes a cycle exactly when g is reachable from m.
func (s *Store) reaches(from, to string) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id == to {
			return true
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		if g, ok := s.groups[id]; ok {
			for _, m := range g.Members {
				if m.Kind == memberGroup && !seen[m.ID] {
					stack = append(stack, m.ID)
				}
			}
		}
	}
	return false
}

// reindexGroups rebuilds memberOf, the map from each worker to every group
// it belongs to transitively. Group writes are rare and acquires frequent,
// so the closure is computed on write and read in O(1) by matching. The
// result is a set and does not depend on map order.
func (s *Store) reindexGroups() {
	s.memberOf = map[string]map[string]struct{}{}
	for root := range s.groups {
		for _, w := range s.groupWorkers(root) {
			set := s.memberOf[w]
			if set == nil {
				set = map[string]struct{}{}
				s.memberOf[w] = set
			}
			set[root] = struct{}{}
		}
	}
}

// groupWorkers lists, sorted, every worker in group id, directly or
// through member groups. Diamonds are visited once.
func (s *Store) groupWorkers(id string) []string {
	seen := map[string]bool{}
	workers := map[string]bool{}
	var walk func(string)
	walk = func(gid string) {
		if seen[gid] {
			return
		}
		seen[gid] = true
		g, ok := s.groups[gid]
		if !ok {
			return
		}
		for _, m := range g.Members {
			switch m.Kind {
			case memberWorker:
				workers[m.ID] = true
			case memberGroup:
				walk(m.ID)
			}
		}
	}
	walk(id)
	out := make([]string, 0, len(workers))
	for w := range workers {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

func (s *Store) createGroup(c command.CreateGroup) (GroupRecord, error) {
	if _, dup := s.groups[c.GroupID]; dup {
		return GroupRecord{}, fmt.Errorf("group %s exists: %w", c.GroupID, ErrConflict)
	}
	members := slices.Clone(c.Members)
	slices.SortFunc(members, compareMembers)
	members = slices.Compact(members)
	if len(members) > MaxGroupMembers {
		return GroupRecord{}, fmt.Errorf("%w: a group has at most %d members", ErrInvalid, MaxGroupMembers)
	}
	for _, m := range members {
		if m.Kind == memberGroup && m.ID == c.GroupID {
			return GroupRecord{}, fmt.Errorf("group %s cannot contain itself: %w", c.GroupID, ErrCycleDetected)
		}
		if err := s.memberExists(m); err != nil {
			return GroupRecord{}, err
		}
	}
	// A new group is contained by nothing yet, so its members cannot lead
	// back to it: no cycle is possible beyond the self-membership above.
	if members == nil {
		members = []command.GroupMember{}
	}
	g := &Group{ID: c.GroupID, Members: members, CreatedAt: c.Now, CreatedBy: c.By, UpdatedAt: c.Now}
	s.groups[g.ID] = g
	s.reindexGroups()
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "group.created", Actor: c.By, Subject: g.ID, Source: c.Source, Detail: membersDetail(members)})
	s.markPending()
	return s.groupRecord(g), nil
}

func (s *Store) addGroupMember(c command.AddGroupMember) (GroupRecord, error) {
	g, ok := s.groups[c.GroupID]
	if !ok {
		return GroupRecord{}, fmt.Errorf("group %s: %w", c.GroupID, ErrNotFound)
	}
	m := c.Member
	if m.Kind == memberGroup && s.reaches(m.ID, g.ID) {
		return GroupRecord{}, fmt.Errorf("adding group %s to group %s would make a cycle: %w", m.ID, g.ID, ErrCycleDetected)
	}
	if err := s.memberExists(m); err != nil {
		return GroupRecord{}, err
	}
	i, present := slices.BinarySearchFunc(g.Members, m, compareMembers)
	if present {
		return s.groupRecord(g), nil
	}
	if len(g.Members) >= MaxGroupMembers {
		return GroupRecord{}, fmt.Errorf("group %s has %d members, the most allowed: %w", g.ID, MaxGroupMembers, ErrConflict)
	}
	g.Members = slices.Insert(g.Members, i, m)
	g.UpdatedAt = c.Now
	s.reindexGroups()
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "group.member_added", Actor: c.By, Subject: g.ID, Source: c.Source, Detail: m.String()})
	s.markPending() // workers may now take tasks they could not before
	return s.groupRecord(g), nil
}

func (s *Store) removeGroupMember(c command.RemoveGroupMember) (GroupRecord, error) {
	g, ok := s.groups[c.GroupID]
	if !ok {
		return GroupRecord{}, fmt.Errorf("group %s: %w", c.GroupID, ErrNotFound)
	}
	i, present := slices.BinarySearchFunc(g.Members, c.Member, compareMembers)
	if !present {
		return s.groupRecord(g), nil
	}
	g.Members = slices.Delete(g.Members, i, i+1)
	g.UpdatedAt = c.Now
	s.reindexGroups()
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "group.member_removed", Actor: c.By, Subject: g.ID, Source: c.Source, Detail: c.Member.String()})
	return s.groupRecord(g), nil
}

// deleteGroup refuses to delete a group that another group contains (the
// parent would change meaning silently) or that an unfinished task targets
// (the task could never run).
func (s *Store) deleteGroup(c command.DeleteGroup) (GroupRecord, error) {
	g, ok := s.groups[c.GroupID]
	if !ok {
		return GroupRecord{}, fmt.Errorf("group %s: %w", c.GroupID, ErrNotFound)
	}
	if parents := s.parentsOf(g.ID); len(parents) > 0 {
		return GroupRecord{}, fmt.Errorf("group %s is a member of %v; remove it there first: %w", g.ID, parents, ErrConflict)
	}
	if n := s.unfinishedTargeting(command.Target{Kind: targetGroup, ID: g.ID}); n > 0 {
		return GroupRecord{}, fmt.Errorf("%d unfinished tasks target group %s; cancel them first: %w", n, g.ID, ErrConflict)
	}
	rec := s.groupRecord(g)
	delete(s.groups, g.ID)
	s.reindexGroups()
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "group.deleted", Actor: c.By, Subject: g.ID, Source: c.Source})
	return rec, nil
}

func membersDetail(ms []command.GroupMember) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.String()
	}
	return "members " + strings.Join(out, ",")
}

// parentsOf lists, sorted, the groups that contain group id directly.
func (s *Store) parentsOf(id string) []string {
	var out []string
	m := command.GroupMember{Kind: memberGroup, ID: id}
	for gid, g := range s.groups {
		if g.has(m) {
			out = append(out, gid)
		}
	}
	sort.Strings(out)
	return out
}

// unfinishedTargeting counts pending and active tasks whose job targets t.
// Pending ones come from the queue index and the jobs that hold tasks out
// of it; active ones from the workers' holds, which are bounded by what
// the cluster runs at once.
func (s *Store) unfinishedTargeting(t command.Target) int {
	n := s.queue.targeted(targetKey(&t)) + s.heldTargeting(t) // dependencies.go
	for _, w := range s.workers {
		for id := range w.active {
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
		if _, ok := s.groups[t.ID]; !ok {
			return fmt.Errorf("target group %s: %w", t.ID, ErrNotFound)
		}
	default:
		return fmt.Errorf("%w: target kind %q", ErrInvalid, t.Kind)
	}
	return nil
}

// Group returns a copy of a group.
func (s *Store) Group(id string) (GroupRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, ok := s.groups[id]
	if !ok {
		return GroupRecord{}, fmt.Errorf("group %s: %w", id, ErrNotFound)
	}
	return s.groupRecord(g), nil
}

// Groups lists every group, by id.
func (s *Store) Groups() []GroupRecord {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.groups))
	for id := range s.groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]GroupRecord, len(ids))
	for i, id := range ids {
		out[i] = s.groupRecord(s.groups[id])
	}
	return out
}

// InGroup reports whether worker belongs to group, directly or through
// nested groups, in the state as it is now.
func (s *Store) InGroup(workerID, groupID string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.memberOf[workerID][groupID]
	return ok
}

// groupsOf lists, sorted, the groups worker id belongs to transitively.
func (s *Store) groupsOf(id string) []string {
	set := s.memberOf[id]
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}
