// Package health keeps the health of each GPU of an agent as a state
// machine, fed by observations (XID errors, double-bit ECC errors, a GPU
// lost from the bus, monitoring that works or fails) and by the passing
// of time:
//
//	healthy ──fault──▶ unhealthy(class, xid, reason) ──cleared──▶ recovering ──hold-down──▶ healthy
//	   │                      ▲                                       │
//	   └──blind──▶ unknown ───┘◀──────────────fault────────────────────┘
//
// Beside faults, a healthy GPU may carry conditions that make it worse
// without making it wrong (degraded.go): clocks held down, a high rate of
// corrected memory errors, memory waiting for a reset to be retired, a
// GPU busy with no process on it. Such a GPU is degraded: still offered,
// but placed last; a condition that goes away keeps it degraded for the
// hold-down window.
//
// It fails closed: a GPU whose health cannot be observed is unknown, and
// an unknown or unhealthy GPU is never offered to work. A fault clears
// only for a reason that repairs it (the node rebooted, for a fault whose
// catalog action is a reboot or a lost GPU; the driver reports that no
// recovery action is pending, or the node rebooted, for one that needs a
// GPU reset), and a cleared GPU is healthy again only after a hold-down
// window with no new fault. A GPU that faults again and again within a
// window is quarantined: it stays unhealthy until an operator clears it.
// The tracker's statuses are meant to be persisted by the caller and
// handed back at the next start (New), so that a restart of the agent
// does not whitewash a fault; the boot id tells a restart of the agent
// from a reboot of the node.
//
// Application-class XIDs (the catalog's action is to restart the
// application) leave the GPU healthy: the caller fails the task that ran
// on it (Effect.FailTasks), nothing more.
//
// The Tracker holds no timers: every call takes the time, so that a test
// (or a Clock) drives it. It is not safe for concurrent use; its owner
// serialises calls.
package health

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// State is a GPU's health.
type State string

// States.
const (
	Healthy    State = "healthy"
	Unhealthy  State = "unhealthy"
	Recovering State = "recovering"
	Unknown    State = "unknown"
	// Degraded: healthy as far as faults go, but with a condition
	// (degraded.go); offered, after the healthy GPUs.
	Degraded State = "degraded"
)

// Offered reports whether a GPU in state s may be given work.
func (s State) Offered() bool { return s == Healthy || s == Degraded }

// Policy tunes a Tracker. The zero value is usable.
type Policy struct {
	// HoldDown is how long a cleared GPU stays recovering, with no new
	// fault, before it is healthy again (default 10 min).
	HoldDown time.Duration
	// FlapFaults faults within FlapWindow quarantine a GPU (defaults 3
	// and 1 h).
	FlapFaults int
	FlapWindow time.Duration
	// Xids overrides the class of XID codes (see Classify).
	Xids map[uint64]Class
}

func (p Policy) holdDown() time.Duration { return or(p.HoldDown, 10*time.Minute) }
func (p Policy) flapWindow() time.Duration {
	return or(p.FlapWindow, time.Hour)
}
func (p Policy) flapFaults() int {
	if p.FlapFaults > 0 {
		return p.FlapFaults
	}
	return 3
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Status is one GPU's health, as reported and persisted.
type Status struct {
	UUID  string    `json:"uuid"`
	State State     `json:"state"`
	Class Class     `json:"class,omitempty"`
	Xid   uint64    `json:"xid,omitempty"`
	Why   string    `json:"reason,omitempty"`
	Since time.Time `json:"since"`
	// Faults are the times of recent faults, for flap detection.
	Faults      []time.Time `json:"faults,omitempty"`
	Quarantined bool        `json:"quarantined,omitempty"`
	// Boot is the boot id of the node when the current fault was seen.
	Boot string `json:"boot,omitempty"`
}

// Reason is the human text of the status: why the GPU is not healthy.
func (s Status) Reason() string {
	switch {
	case s.State == Healthy:
		return ""
	case s.Quarantined:
		return "quarantined after repeated faults; last: " + s.Why
	case s.State == Recovering:
		return "recovering (hold-down) after: " + s.Why
	}
	return s.Why
}

// Kind is the kind of an Observation.
type Kind int

// Observation kinds.
const (
	// XidError: the driver reported XID Xid on the GPU.
	XidError Kind = iota
	// DoubleBitECC: an uncorrectable memory error.
	DoubleBitECC
	// Lost: the GPU answers ERROR_GPU_IS_LOST, or is gone from the bus.
	Lost
	// Blind: the GPU's faults can no longer be observed (event
	// registration or waiting failed, and no fallback works).
	Blind
	// Watched: the GPU's faults are observed (again).
	Watched
	// NoRecoveryPending: the driver says the GPU needs no recovery
	// action: a fault that wanted a GPU reset has been repaired.
	NoRecoveryPending
	// Degrade: condition Condition is present on the GPU (Detail says
	// what); the GPU is degraded while it is (degraded.go).
	Degrade
	// Undegrade: condition Condition is no longer seen.
	Undegrade
	// TooManyRetiredPages: the GPU retired more memory pages than the
	// agent allows (Detail says how many): it should be replaced, and
	// only an operator's clear takes it back.
	TooManyRetiredPages
	// PreflightFailed: a check before a gang's rank started failed on the
	// GPU (Detail has the figures): like too many retired pages, only an
	// operator's clear takes it back.
	PreflightFailed
)

// Observation is one thing seen about a GPU.
type Observation struct {
	UUID string
	Kind Kind
	Xid  uint64
	// Instance is the MIG device (its UUID) an event named, when the GPU
	// is in MIG mode and the driver said which instance faulted. An
	// application-class XID then fails only the tasks on that MIG device;
	// any other fault is the whole GPU's.
	Instance string
	Detail   string // for the reason, e.g. the error NVML returned
	// Condition names the condition of a Degrade or Undegrade.
	Condition string
}

// Effect is what the caller must do after an observation.
type Effect struct {
	// Changed: a status changed (report it, persist it).
	Changed bool
	// FailTasks: fail the tasks running on these GPUs, with Reason. A
	// GPU's UUID means the tasks on its MIG devices too; a MIG device's
	// UUID (an application fault in one instance) that device's alone.
	FailTasks []string
	Reason    string
	// Application: the fault is an application's (an XID of
	// ClassApplication), not the GPU's: only a task holding the device
	// whole is failed for it (shared tasks are not: which of them faulted
	// is not known).
	Application bool
}

// Tracker keeps the GPUs' health.
type Tracker struct {
	policy Policy
	boot   string
	gpus   map[string]*Status
	// watched: a GPU whose faults have been observed once since the start;
	// until then it is unknown, and the first Watched makes it healthy.
	watched map[string]bool
	// conds are each GPU's conditions, by name (degraded.go).
	conds map[string]map[string]*condition
}

// New returns a tracker for the GPUs uuids at time now, on the boot boot
// of the node, starting from the statuses saved by an earlier run. A GPU
// without a saved status starts unknown until it is watched. A saved fault
// whose class a reboot repairs, seen on another boot, is cleared
// (recovering from now).
func New(p Policy, now time.Time, boot string, uuids []string, saved []Status) *Tracker {
	t := &Tracker{policy: p, boot: boot, gpus: map[string]*Status{}, watched: map[string]bool{}, conds: map[string]map[string]*condition{}}
	for _, u := range uuids {
		t.gpus[u] = &Status{UUID: u, State: Unknown, Class: ClassUnmonitored, Why: "not watched yet", Since: now}
	}
	for _, s := range saved {
		g, ok := t.gpus[s.UUID]
		if !ok || s.State == Healthy || s.State == Unknown || s.State == Degraded {
			continue // a GPU gone, or nothing to keep (conditions are seen again)
		}
		*g = s
		g.Faults = slices.Clone(s.Faults)
		t.watched[s.UUID] = true
		rebooted := boot != "" && s.Boot != "" && s.Boot != boot
		if g.State == Unhealthy && !g.Quarantined && rebooted && g.Class.clearedByReboot() {
			g.State, g.Since = Recovering, now
		}
	}
	return t
}

// Observe applies one observation at time now.
func (t *Tracker) Observe(now time.Time, o Observation) Effect {
	g, ok := t.gpus[o.UUID]
	if !ok {
		return Effect{}
	}
	switch o.Kind {
	case XidError:
		class := Classify(o.Xid, t.policy.Xids)
		why := fmt.Sprintf("XID %d (%s)", o.Xid, class.describe())
		if o.Detail != "" {
			why += ": " + o.Detail
		}
		if class == ClassApplication {
			if o.Instance != "" {
				return Effect{FailTasks: []string{o.Instance}, Reason: "MIG device " + o.Instance + " of GPU " + o.UUID + " reported " + why, Application: true}
			}
			return Effect{FailTasks: []string{o.UUID}, Reason: "GPU " + o.UUID + " reported " + why, Application: true}
		}
		return t.fault(now, g, class, o.Xid, why)
	case PreflightFailed:
		return t.fault(now, g, ClassReplace, 0, "preflight failed"+detail(o.Detail))
	case DoubleBitECC:
		return t.fault(now, g, ClassResetGPU, 0, "uncorrectable (double-bit) ECC error"+detail(o.Detail))
	case Lost:
		return t.fault(now, g, ClassGPULost, 0, "GPU lost (fallen off the bus or not answering)"+detail(o.Detail))
	case Blind:
		if g.State == Healthy || g.State == Recovering || (g.State == Unknown && !t.watched[o.UUID]) {
			return t.set(now, g, Unknown, ClassUnmonitored, 0, "health cannot be watched"+detail(o.Detail))
		}
	case Watched:
		if g.State != Unknown {
			return Effect{}
		}
		if !t.watched[o.UUID] {
			t.watched[o.UUID] = true
			return t.set(now, g, Healthy, "", 0, "")
		}
		// Faults may have gone unseen while it was blind.
		return t.set(now, g, Recovering, g.Class, g.Xid, g.Why)
	case NoRecoveryPending:
		if g.State == Unhealthy && !g.Quarantined && g.Class == ClassResetGPU {
			return t.set(now, g, Recovering, g.Class, g.Xid, g.Why)
		}
	case TooManyRetiredPages:
		return t.fault(now, g, ClassReplace, 0, "too many retired memory pages"+detail(o.Detail))
	case Degrade:
		return Effect{Changed: t.degrade(now, o.UUID, o.Condition, o.Detail)}
	case Undegrade:
		return Effect{Changed: t.undegrade(now, o.UUID, o.Condition)}
	}
	return Effect{}
}

func detail(d string) string {
	if d == "" {
		return ""
	}
	return ": " + d
}

// fault records a fault that takes the GPU out of service.
func (t *Tracker) fault(now time.Time, g *Status, class Class, xid uint64, why string) Effect {
	t.watched[g.UUID] = true
	g.Faults = append(recent(g.Faults, now, t.policy.flapWindow()), now)
	g.Boot = t.boot
	if len(g.Faults) >= t.policy.flapFaults() {
		g.Quarantined = true
	}
	eff := t.set(now, g, Unhealthy, class, xid, why)
	eff.Changed = true // a repeated fault refreshes the record
	eff.FailTasks, eff.Reason = []string{g.UUID}, "GPU "+g.UUID+" is unhealthy: "+why
	return eff
}

// recent keeps the times within window before now.
func recent(ts []time.Time, now time.Time, window time.Duration) []time.Time {
	out := ts[:0:0]
	for _, ts := range ts {
		if now.Sub(ts) < window {
			out = append(out, ts)
		}
	}
	return out
}

func (t *Tracker) set(now time.Time, g *Status, s State, class Class, xid uint64, why string) Effect {
	if g.State == s && g.Class == class && g.Xid == xid && g.Why == why {
		return Effect{}
	}
	if g.State != s {
		g.Since = now
	}
	g.State, g.Class, g.Xid, g.Why = s, class, xid, why
	if s == Healthy {
		g.Class, g.Xid, g.Why, g.Boot = "", 0, "", ""
	}
	return Effect{Changed: true}
}

// Tick advances time: a GPU recovering for the hold-down window with no
// new fault is healthy again. It reports whether a status changed.
func (t *Tracker) Tick(now time.Time) bool {
	changed := t.expireConditions(now)
	for _, g := range t.gpus {
		if g.State == Recovering && now.Sub(g.Since) >= t.policy.holdDown() {
			changed = t.set(now, g, Healthy, "", 0, "").Changed || changed
		}
	}
	return changed
}

// Clear takes a quarantined or unhealthy GPU back into service through
// the hold-down window (an operator's decision).
func (t *Tracker) Clear(now time.Time, uuid string) bool {
	g, ok := t.gpus[uuid]
	if !ok || g.State == Healthy {
		return false
	}
	g.Quarantined, g.Faults = false, nil
	return t.set(now, g, Recovering, g.Class, g.Xid, g.Why).Changed
}

// Status returns a GPU's status (State Unknown for a GPU it does not
// know). A healthy GPU with conditions is Degraded, its conditions the
// reason.
func (t *Tracker) Status(uuid string) Status {
	g, ok := t.gpus[uuid]
	if !ok {
		return Status{UUID: uuid, State: Unknown, Class: ClassUnmonitored, Why: "not a GPU of this agent"}
	}
	s := *g
	s.Faults = slices.Clone(g.Faults)
	if s.State == Healthy && len(t.conds[uuid]) > 0 {
		s.State, s.Why, s.Since = Degraded, t.conditionReason(uuid), t.degradedSince(uuid)
	}
	return s
}

// Statuses returns every GPU's status, sorted by UUID, to persist.
func (t *Tracker) Statuses() []Status {
	out := make([]Status, 0, len(t.gpus))
	for u := range t.gpus {
		out = append(out, t.Status(u))
	}
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.UUID, b.UUID) })
	return out
}
