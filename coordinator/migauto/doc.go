// Package migauto is the coordinator's opt-in MIG auto mode: when tasks
// wait for a MIG profile that no GPU offers, and an idle MIG-capable GPU
// on a worker where one of those tasks could then run could offer it, it
// asks for that GPU's MIG layout (a SetMIGLayout with auto set) as an
// admin would, and the agent repartitions it (state/gpuops/miglayout.go,
// agent/miglayout.go). A GPU it split is given back whole once its
// profiles' demand has been gone a Window (giveback.go).
//
// Hysteresis keeps it from flapping: a profile's demand must have lasted
// a whole Window, without a break, before a GPU is repartitioned for it
// (and a repartition starts the window again, so one burst takes one GPU
// a window); a GPU repartitioned (by anyone) is not repartitioned again
// by the auto mode within MinInterval of that request; a GPU that holds a
// task, on itself or a MIG device, or that is cordoned, unhealthy,
// awaiting approval or awaiting a layout already, is left alone.
//
// The Planner is a pure decision over the state's reads, driven by the
// caller's clock; the coordinator runs it on the leader (Server's
// autoRepartition).
package migauto
