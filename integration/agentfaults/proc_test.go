//go:build linux

package agentfaults

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// proc is one process as /proc shows it. Start (clock ticks since boot)
// tells a process from a later one that reuses its pid.
type proc struct {
	PID, PPID, PGID int
	State           byte
	Start           uint64
	UID             int
	Cmdline         string
	// TaskID and AttemptID are read from the environment of a task's
	// process (GPULAYER_TASK_ID, GPULAYER_ATTEMPT_ID) when it is seen,
	// so that they are known after it died.
	TaskID, AttemptID string
}

func (p proc) String() string {
	cmd := strings.Join(strings.Fields(p.Cmdline), " ")
	if len(cmd) > 60 {
		cmd = cmd[:57] + "..."
	}
	return fmt.Sprintf("pid %d (ppid %d, pgid %d, uid %d, state %c: %s)", p.PID, p.PPID, p.PGID, p.UID, p.State, cmd)
}

// readProc reads /proc/<pid>; ok is false for a process that is gone.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return proc{}, false
	}
	// comm may hold spaces and parentheses: the fields start after the
	// last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return proc{}, false
	}
	p := proc{PID: pid, State: f[0][0]}
	p.PPID, _ = strconv.Atoi(f[1])
	p.PGID, _ = strconv.Atoi(f[2])
	p.Start, _ = strconv.ParseUint(f[19], 10, 64)
	if fi, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			p.UID = int(st.Uid)
		}
	}
	cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	p.Cmdline = strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
	p.TaskID, p.AttemptID = taskEnv(pid)
	return p, true
}

// live reports whether p still runs: the same process (same start time),
// neither a zombie nor dead.
func (p proc) live() bool {
	now, ok := readProc(p.PID)
	return ok && now.Start == p.Start && now.State != 'Z' && now.State != 'X'
}

// children lists the live children of pid, from every thread's
// /proc/<pid>/task/<tid>/children, or by a scan of /proc when the kernel
// has no such file.
func children(pid int) []proc {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil
	}
	var pids []int
	have := false
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", t.Name(), "children"))
		if err != nil {
			continue
		}
		have = true
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				pids = append(pids, n)
			}
		}
	}
	if !have {
		pids = scanChildren(pid)
	}
	var out []proc
	for _, c := range pids {
		if p, ok := readProc(c); ok && p.PPID == pid && p.live() {
			out = append(out, p)
		}
	}
	return out
}

// scanChildren finds pid's children through every process's ppid.
func scanChildren(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(n); ok && p.PPID == pid {
			out = append(out, n)
		}
	}
	return out
}

// descendants lists every live process below pid, parents first.
func descendants(pid int) []proc {
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children(next) {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	return out
}

// killProc sends SIGKILL to p if it is still the process it was.
func killProc(p proc) {
	if p.live() {
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
}

// liveOf filters ps to those still running.
func liveOf(ps []proc) []proc {
	var out []proc
	for _, p := range ps {
		if p.live() {
			out = append(out, p)
		}
	}
	return out
}

// attemptOf returns the task and attempt ids a task's process carries in
// its environment; ok is false for a process that is not a task's.
func attemptOf(p proc) (taskID, attemptID string, ok bool) {
	return p.TaskID, p.AttemptID, p.AttemptID != ""
}

// taskEnv reads GPULAYER_TASK_ID and GPULAYER_ATTEMPT_ID from a process's
// environment ("" for a process that is not a task's or cannot be read).
func taskEnv(pid int) (taskID, attemptID string) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return "", ""
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, found := strings.CutPrefix(kv, "GPULAYER_TASK_ID="); found {
			taskID = v
		}
		if v, found := strings.CutPrefix(kv, "GPULAYER_ATTEMPT_ID="); found {
			attemptID = v
		}
	}
	return taskID, attemptID
}

// allProcs lists every process of the machine.
func allProcs() []proc {
	entries, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(n); ok && p.State != 'Z' && p.State != 'X' {
			out = append(out, p)
		}
	}
	return out
}
