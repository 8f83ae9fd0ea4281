// Package groups is the worker groups' room: named sets of workers and
// other groups, kept acyclic, and the closure from each worker to every
// group it belongs to, directly or through nested groups, rebuilt on
// every write (writes are rare, placement reads it on every match). The
// state applies the group commands through it, checks what only it
// knows (a worker is registered, no unfinished task targets a group
// being deleted) and audits them. It knows no other room but the
// state's value types and sentinel errors.
package groups

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// MaxMembers bounds the direct members of one group.
const MaxMembers = 1024

// Member kinds: the words of a job's target (package command).
const (
	KindWorker = command.TargetWorker
	KindGroup  = command.TargetGroup
)

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

// Record is a group with the workers that belong to it, directly or
// through nested groups.
type Record struct {
	Group   Group
	Workers []string
}

func compareMembers(a, b command.GroupMember) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID))
}

// Table is every group and the membership closure. It follows its
// owner's locking: writes under the write lock (inside Apply), reads
// under the read lock.
type Table struct {
	groups map[string]*Group
	// memberOf maps a worker id to every group it belongs to, directly
	// or through nested groups.
	memberOf map[string]map[string]struct{}
}

// New returns an empty table.
func New() *Table {
	return &Table{groups: map[string]*Group{}, memberOf: map[string]map[string]struct{}{}}
}

// Restore returns a table of gs, as a snapshot lists them.
func Restore(gs []*Group) (*Table, error) {
	t := New()
	for _, g := range gs {
		if g == nil || t.groups[g.ID] != nil {
			return nil, fmt.Errorf("group listed twice or empty: %w", stateerr.ErrInvalid)
		}
		if g.Members == nil {
			g.Members = []command.GroupMember{}
		}
		t.groups[g.ID] = g
	}
	t.reindex()
	return t, nil
}

// Has reports whether group id exists.
func (t *Table) Has(id string) bool { _, ok := t.groups[id]; return ok }

// IDs lists the groups' ids, sorted.
func (t *Table) IDs() []string { return slices.Sorted(maps.Keys(t.groups)) }

// Record returns a copy of group id with its workers.
func (t *Table) Record(id string) (Record, error) {
	g, ok := t.groups[id]
	if !ok {
		return Record{}, fmt.Errorf("group %s: %w", id, stateerr.ErrNotFound)
	}
	return t.record(g), nil
}

// Records lists every group with its workers, by id.
func (t *Table) Records() []Record {
	out := make([]Record, 0, len(t.groups))
	for _, id := range t.IDs() {
		out = append(out, t.record(t.groups[id]))
	}
	return out
}

// Copies lists a copy of every group, in no set order (a snapshot's
// capture sorts them).
func (t *Table) Copies() []Group {
	out := make([]Group, 0, len(t.groups))
	for _, g := range t.groups {
		v := *g
		v.Members = slices.Clone(g.Members)
		out = append(out, v)
	}
	return out
}

func (t *Table) record(g *Group) Record {
	c := *g
	c.Members = slices.Clone(g.Members)
	return Record{Group: c, Workers: t.workers(g.ID)}
}

// Contains reports whether worker belongs to group, directly or through
// nested groups.
func (t *Table) Contains(workerID, groupID string) bool {
	_, ok := t.memberOf[workerID][groupID]
	return ok
}

// Of lists, sorted, the groups worker id belongs to transitively.
func (t *Table) Of(workerID string) []string {
	set := t.memberOf[workerID]
	if len(set) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(set))
}

// Create adds group id with members; workerExists says whether a worker
// member is registered.
func (t *Table) Create(id string, members []command.GroupMember, by string, now time.Time, workerExists func(string) bool) (Record, error) {
	if _, dup := t.groups[id]; dup {
		return Record{}, fmt.Errorf("group %s exists: %w", id, stateerr.ErrConflict)
	}
	members = slices.Clone(members)
	slices.SortFunc(members, compareMembers)
	members = slices.Compact(members)
	if len(members) > MaxMembers {
		return Record{}, fmt.Errorf("%w: a group has at most %d members", stateerr.ErrInvalid, MaxMembers)
	}
	for _, m := range members {
		if m.Kind == KindGroup && m.ID == id {
			return Record{}, fmt.Errorf("group %s cannot contain itself: %w", id, stateerr.ErrCycleDetected)
		}
		if err := t.memberExists(m, workerExists); err != nil {
			return Record{}, err
		}
	}
	// A new group is contained by nothing yet, so its members cannot lead
	// back to it: no cycle is possible beyond the self-membership above.
	if members == nil {
		members = []command.GroupMember{}
	}
	g := &Group{ID: id, Members: members, CreatedAt: now, CreatedBy: by, UpdatedAt: now}
	t.groups[id] = g
	t.reindex()
	return t.record(g), nil
}

// Add puts m in group id; changed is false when it was a member already.
func (t *Table) Add(id string, m command.GroupMember, now time.Time, workerExists func(string) bool) (rec Record, changed bool, err error) {
	g, ok := t.groups[id]
	if !ok {
		return Record{}, false, fmt.Errorf("group %s: %w", id, stateerr.ErrNotFound)
	}
	if m.Kind == KindGroup && t.reaches(m.ID, id) {
		return Record{}, false, fmt.Errorf("adding group %s to group %s would make a cycle: %w", m.ID, id, stateerr.ErrCycleDetected)
	}
	if err := t.memberExists(m, workerExists); err != nil {
		return Record{}, false, err
	}
	i, present := slices.BinarySearchFunc(g.Members, m, compareMembers)
	if present {
		return t.record(g), false, nil
	}
	if len(g.Members) >= MaxMembers {
		return Record{}, false, fmt.Errorf("group %s has %d members, the most allowed: %w", id, MaxMembers, stateerr.ErrConflict)
	}
	g.Members = slices.Insert(g.Members, i, m)
	g.UpdatedAt = now
	t.reindex()
	return t.record(g), true, nil
}

// Remove takes m out of group id; changed is false when it was not a
// member.
func (t *Table) Remove(id string, m command.GroupMember, now time.Time) (rec Record, changed bool, err error) {
	g, ok := t.groups[id]
	if !ok {
		return Record{}, false, fmt.Errorf("group %s: %w", id, stateerr.ErrNotFound)
	}
	i, present := slices.BinarySearchFunc(g.Members, m, compareMembers)
	if !present {
		return t.record(g), false, nil
	}
	g.Members = slices.Delete(g.Members, i, i+1)
	g.UpdatedAt = now
	t.reindex()
	return t.record(g), true, nil
}

// Delete removes group id, refusing while another group contains it (the
// parent would change meaning silently), then whatever inUse refuses.
func (t *Table) Delete(id string, inUse func() error) (Record, error) {
	g, ok := t.groups[id]
	if !ok {
		return Record{}, fmt.Errorf("group %s: %w", id, stateerr.ErrNotFound)
	}
	if parents := t.parentsOf(id); len(parents) > 0 {
		return Record{}, fmt.Errorf("group %s is a member of %v; remove it there first: %w", id, parents, stateerr.ErrConflict)
	}
	if err := inUse(); err != nil {
		return Record{}, err
	}
	rec := t.record(g)
	delete(t.groups, id)
	t.reindex()
	return rec, nil
}

// Join adds worker to each of ids that exists and has room; a group that
// does not exist is reported missing.
func (t *Table) Join(workerID string, ids []string, now time.Time) (joined, missing []string) {
	m := command.GroupMember{Kind: KindWorker, ID: workerID}
	for _, id := range ids {
		g, ok := t.groups[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		if i, present := slices.BinarySearchFunc(g.Members, m, compareMembers); !present && len(g.Members) < MaxMembers {
			g.Members = slices.Insert(g.Members, i, m)
			g.UpdatedAt = now
			joined = append(joined, id)
		}
	}
	if len(joined) > 0 {
		t.reindex()
	}
	return joined, missing
}

// DropWorker takes worker out of every group it is a direct member of.
func (t *Table) DropWorker(workerID string, now time.Time) {
	m := command.GroupMember{Kind: KindWorker, ID: workerID}
	changed := false
	for _, g := range t.groups {
		if i, present := slices.BinarySearchFunc(g.Members, m, compareMembers); present {
			g.Members = slices.Delete(g.Members, i, i+1)
			g.UpdatedAt = now
			changed = true
		}
	}
	if changed {
		t.reindex()
	}
}

// memberExists checks that a member names a registered worker or an
// existing group.
func (t *Table) memberExists(m command.GroupMember, workerExists func(string) bool) error {
	switch m.Kind {
	case KindWorker:
		if !workerExists(m.ID) {
			return fmt.Errorf("member worker %s: %w", m.ID, stateerr.ErrNotFound)
		}
	case KindGroup:
		if _, ok := t.groups[m.ID]; !ok {
			return fmt.Errorf("member group %s: %w", m.ID, stateerr.ErrNotFound)
		}
	default:
		return fmt.Errorf("%w: member kind %q", stateerr.ErrInvalid, m.Kind)
	}
	return nil
}

// reaches reports whether group to is from itself or reachable from group
// from through group members. It is the cycle check: adding group m to
// group g makes a cycle exactly when g is reachable from m.
func (t *Table) reaches(from, to string) bool {
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
		if g, ok := t.groups[id]; ok {
			for _, m := range g.Members {
				if m.Kind == KindGroup && !seen[m.ID] {
					stack = append(stack, m.ID)
				}
			}
		}
	}
	return false
}

// reindex rebuilds memberOf. The result is a set and does not depend on
// map order.
func (t *Table) reindex() {
	t.memberOf = map[string]map[string]struct{}{}
	for root := range t.groups {
		for _, w := range t.workers(root) {
			set := t.memberOf[w]
			if set == nil {
				set = map[string]struct{}{}
				t.memberOf[w] = set
			}
			set[root] = struct{}{}
		}
	}
}

// workers lists, sorted, every worker in group id, directly or through
// member groups. Diamonds are visited once.
func (t *Table) workers(id string) []string {
	seen := map[string]bool{}
	workers := map[string]bool{}
	var walk func(string)
	walk = func(gid string) {
		if seen[gid] {
			return
		}
		seen[gid] = true
		g, ok := t.groups[gid]
		if !ok {
			return
		}
		for _, m := range g.Members {
			switch m.Kind {
			case KindWorker:
				workers[m.ID] = true
			case KindGroup:
				walk(m.ID)
			}
		}
	}
	walk(id)
	out := make([]string, 0, len(workers)) // an empty group answers [], not null
	for w := range workers {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// parentsOf lists, sorted, the groups that contain group id directly.
func (t *Table) parentsOf(id string) []string {
	var out []string
	m := command.GroupMember{Kind: KindGroup, ID: id}
	for gid, g := range t.groups {
		if _, ok := slices.BinarySearchFunc(g.Members, m, compareMembers); ok {
			out = append(out, gid)
		}
	}
	slices.Sort(out)
	return out
}
