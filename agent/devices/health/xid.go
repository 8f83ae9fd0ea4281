package health

// Class is what a fault needs before the GPU may work again, after the
// "immediate action" column of NVIDIA's XID catalog.
type Class string

// Classes.
const (
	// ClassApplication: restart the application. The task on the GPU
	// failed; the GPU itself is fine and stays in service.
	ClassApplication Class = "application"
	// ClassResetGPU: the GPU needs a reset (or the node a reboot).
	ClassResetGPU Class = "reset-gpu"
	// ClassRebootNode: the node needs a reboot.
	ClassRebootNode Class = "reboot-node"
	// ClassGPULost: the GPU fell off the bus or stopped answering; a
	// reboot (or a reseat) brings it back.
	ClassGPULost Class = "gpu-lost"
	// ClassUnmonitored: the GPU's faults cannot be observed.
	ClassUnmonitored Class = "unmonitored"
	// ClassReplace: the GPU wore out (it retired too many memory pages);
	// neither a reset nor a reboot repairs it, only an operator's clear
	// takes it back.
	ClassReplace Class = "replace"
)

// clearedByReboot reports whether a reboot of the node repairs a fault of
// class c.
func (c Class) clearedByReboot() bool {
	return c == ClassResetGPU || c == ClassRebootNode || c == ClassGPULost
}

func (c Class) describe() string {
	switch c {
	case ClassApplication:
		return "the application must restart; the GPU is fine"
	case ClassResetGPU:
		return "the GPU needs a reset"
	case ClassRebootNode:
		return "the node needs a reboot"
	case ClassGPULost:
		return "the GPU is lost"
	case ClassReplace:
		return "the GPU should be replaced"
	}
	return string(c)
}

// xidClasses is the built-in table: the XIDs whose catalog action is known
// here. An XID not in it (nor in the agent's overrides) takes the GPU out
// of service until a reset: failing closed costs a GPU for a while, failing
// open costs every job placed on a broken one.
var xidClasses = map[uint64]Class{
	13:  ClassApplication, // graphics engine exception
	31:  ClassApplication, // GPU memory page fault
	32:  ClassApplication, // invalid or corrupted push buffer stream
	43:  ClassApplication, // GPU stopped processing (the channel was reset)
	45:  ClassApplication, // preemptive cleanup after an earlier error
	68:  ClassApplication, // video decoder exception
	69:  ClassApplication, // graphics engine class error
	94:  ClassApplication, // contained ECC error: only the application was hit
	109: ClassApplication, // context switch timeout
	38:  ClassResetGPU,    // driver firmware error
	48:  ClassResetGPU,    // double-bit ECC error
	61:  ClassResetGPU,    // internal micro-controller breakpoint
	62:  ClassResetGPU,    // internal micro-controller halt
	63:  ClassResetGPU,    // row remapping recorded: takes effect at the next reset
	64:  ClassResetGPU,    // row remapping or page retirement failed
	74:  ClassResetGPU,    // NVLink error
	92:  ClassResetGPU,    // high single-bit ECC error rate
	95:  ClassResetGPU,    // uncontained ECC error
	119: ClassResetGPU,    // GSP RPC timeout
	120: ClassResetGPU,    // GSP error
	140: ClassResetGPU,    // unrecovered ECC error
	79:  ClassGPULost,     // the GPU has fallen off the bus
	143: ClassRebootNode,  // GPU initialisation failure
}

// Classify returns the class of an XID: overrides first, then the built-in
// table, else ClassResetGPU.
func Classify(xid uint64, overrides map[uint64]Class) Class {
	if c, ok := overrides[xid]; ok {
		return c
	}
	if c, ok := xidClasses[xid]; ok {
		return c
	}
	return ClassResetGPU
}
