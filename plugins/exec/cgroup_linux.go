package exec

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// cgroupRoot is where the host mounts its cgroup file systems.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupParent is the directory, in each hierarchy, under which every
// task gets a cgroup of its own, named after its attempt.
const cgroupParent = "gpulayer"

// cpuPeriodMicros is the CFS period a CPU limit is expressed in.
const cpuPeriodMicros = 100_000

// cgroupRemoveTimeout bounds how long remove waits for a task's cgroup to
// empty.
const cgroupRemoveTimeout = 5 * time.Second

// taskCgroup is one task's cgroup: a directory in each cgroup v1
// hierarchy it limits, or the one directory of the unified (v2)
// hierarchy.
//
// On cgroup v2 (cgroupRoot/cgroup.controllers exists) it is
// cgroupRoot/gpulayer/<attempt>, with the controllers it needs enabled on
// the way down. On v1 it is gpulayer/<attempt> below the plugin's own
// cgroup in each of the memory, pids and cpu hierarchies it needs, so a
// limit the agent itself runs under still holds its tasks.
type taskCgroup struct {
	dirs  []string
	v2    bool
	ctrls []string    // v1: the controller of each of dirs
	files []limitFile // the limits, in the order they are written
	live  bool        // dirs are in liveCgroups
}

// limitFile is one value written to a controller's file.
type limitFile struct {
	ctrl, file, value string
}

// limitFiles are the files that set lim, in the order they are written.
func limitFiles(lim cgroupLimits, v2 bool) []limitFile {
	var out []limitFile
	if lim.MemoryBytes > 0 {
		file := "memory.limit_in_bytes"
		if v2 {
			file = "memory.max"
		}
		out = append(out, limitFile{"memory", file, strconv.FormatInt(lim.MemoryBytes, 10)})
	}
	if lim.Pids > 0 {
		out = append(out, limitFile{"pids", "pids.max", strconv.FormatInt(lim.Pids, 10)})
	}
	if lim.CPUMillis > 0 {
		quota := strconv.FormatInt(lim.CPUMillis*cpuPeriodMicros/1000, 10)
		if v2 {
			out = append(out, limitFile{"cpu", "cpu.max", quota + " " + strconv.Itoa(cpuPeriodMicros)})
		} else {
			out = append(out,
				limitFile{"cpu", "cpu.cfs_period_us", strconv.Itoa(cpuPeriodMicros)},
				limitFile{"cpu", "cpu.cfs_quota_us", quota})
		}
	}
	return out
}

// newTaskCgroup makes the cgroup of the task called name and sets lim in
// it; nil when lim limits nothing. Errors say which step failed. name is
// already the owner's (ownedName).
func newTaskCgroup(name string, lim cgroupLimits) (*taskCgroup, error) {
	return newTaskCgroupAt(cgroupRoot, name, lim)
}

// newTaskCgroupAt is newTaskCgroup with the cgroup file systems mounted
// at root: a unified (v2) hierarchy when root/cgroup.controllers exists,
// else v1 hierarchies (found from /proc/self/mountinfo, wherever they
// are). Tests give it a cgroup2 mount of their own.
func newTaskCgroupAt(root, name string, lim cgroupLimits) (*taskCgroup, error) {
	if lim == (cgroupLimits{}) {
		return nil, nil
	}
	name = cgroupName(name)
	_, err := os.Stat(filepath.Join(root, "cgroup.controllers"))
	cg := &taskCgroup{v2: err == nil, files: limitFiles(lim, err == nil)}
	var ctrls []string
	for _, f := range cg.files {
		if !slices.Contains(ctrls, f.ctrl) {
			ctrls = append(ctrls, f.ctrl)
		}
	}
	if cg.v2 {
		parent, err := makeV2Parent(root, ctrls)
		if err != nil {
			return nil, err
		}
		cg.dirs = []string{filepath.Join(parent, name)}
	} else {
		for _, ctrl := range ctrls {
			base, err := v1Hierarchy(ctrl)
			if err != nil {
				return nil, fmt.Errorf("cgroup %s: %w", ctrl, err)
			}
			cg.dirs = append(cg.dirs, filepath.Join(base, cgroupParent, name))
		}
		cg.ctrls = ctrls
	}
	liveCgroups.add(cg.dirs)
	cg.live = true
	for i := range cg.dirs {
		if err := cg.setUp(i); err != nil {
			_ = cg.remove()
			return nil, err
		}
	}
	return cg, nil
}

// setUp makes the cgroup's i-th directory (replacing one left by a plugin
// that died before it could remove it) and sets the limits that belong
// there. A directory that goes before its limits are written (another
// executor's sweepStaleCgroups found it empty) is made again.
func (cg *taskCgroup) setUp(i int) error {
	dir := cg.dirs[i]
	var err error
	for range 3 {
		if err = makeCgroupDir(dir, cg.v2); err != nil {
			if cg.v2 {
				return fmt.Errorf("cgroup: %w", err)
			}
			return fmt.Errorf("cgroup %s: %w", cg.ctrls[i], err)
		}
		for _, f := range cg.files {
			if !cg.v2 && f.ctrl != cg.ctrls[i] {
				continue
			}
			if err = writeFile(filepath.Join(dir, f.file), f.value); err != nil {
				err = fmt.Errorf("cgroup: set %s to %s: %w", f.file, f.value, unwrapPath(err))
				break
			}
		}
		if !errors.Is(err, fs.ErrNotExist) || cgroupExists(dir) {
			return err // nil, or a failure other than the directory gone
		}
	}
	return err
}

// cgroupExists reports whether the cgroup directory dir is there.
func cgroupExists(dir string) bool {
	_, err := os.Stat(dir)
	return err == nil
}

// makeV2Parent enables ctrls from root, where the unified hierarchy is
// mounted, down to cgroupParent, and returns cgroupParent's directory.
func makeV2Parent(root string, ctrls []string) (string, error) {
	parent := filepath.Join(root, cgroupParent)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	for _, dir := range []string{root, parent} {
		for _, c := range ctrls {
			if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+"+c); err != nil {
				return "", fmt.Errorf("cgroup: enable %s in %s: %w", c, dir, unwrapPath(err))
			}
		}
	}
	return parent, nil
}

// makeCgroupDir makes a task's cgroup directory. One left by a plugin
// that died before it could remove it is emptied and made again.
func makeCgroupDir(dir string, v2 bool) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		if err := removeCgroupDir(dir, v2); err != nil {
			return err
		}
		err = os.Mkdir(dir, 0o755)
	}
	return err
}

// add moves process pid (and, as it forks, all it starts) into the
// cgroup.
func (cg *taskCgroup) add(pid int) error {
	if cg == nil {
		return nil
	}
	for i, dir := range cg.dirs {
		procs := filepath.Join(dir, "cgroup.procs")
		err := writeFile(procs, strconv.Itoa(pid))
		if errors.Is(err, fs.ErrNotExist) && !cgroupExists(dir) {
			// Another executor's sweep found it empty and removed it:
			// make it again, with its limits.
			if err = cg.setUp(i); err == nil {
				err = writeFile(procs, strconv.Itoa(pid))
			}
		}
		if err != nil {
			return fmt.Errorf("cgroup: add the task to %s: %w", dir, unwrapPath(err))
		}
	}
	return nil
}

// remove kills whatever still runs in the cgroup (with the task's PID
// namespace gone, nothing should) and removes its directories.
func (cg *taskCgroup) remove() error {
	if cg == nil {
		return nil
	}
	var errs []error
	for _, dir := range cg.dirs {
		errs = append(errs, removeCgroupDir(dir, cg.v2))
	}
	if cg.live {
		liveCgroups.remove(cg.dirs)
		cg.live = false
	}
	return errors.Join(errs...)
}

// liveCgroups are the task cgroup directories this process made and has
// not removed yet: sweepStaleCgroups leaves them alone, even empty (a
// task's cgroup is empty until its init is added).
var liveCgroups = cgroupSet{dirs: make(map[string]int)}

// cgroupSet counts directories, under a lock.
type cgroupSet struct {
	mu   sync.Mutex
	dirs map[string]int
}

func (s *cgroupSet) add(dirs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range dirs {
		s.dirs[d]++
	}
}

func (s *cgroupSet) remove(dirs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range dirs {
		if s.dirs[d]--; s.dirs[d] <= 0 {
			delete(s.dirs, d)
		}
	}
}

// sweepStaleCgroups removes the empty task cgroups of owner's tasks that
// a plugin killed with SIGKILL (before it could remove them) left under
// this process's own gpulayer parents (cgroupParents). The executor runs
// it once per owner, before it makes that owner's first task's cgroup.
// Another agent's cgroups on the same host are left alone, even empty:
// that agent may have made one and not yet put its task in it.
func sweepStaleCgroups(log *slog.Logger, owner string) {
	for _, parent := range cgroupParents() {
		removed, err := sweepCgroupDir(parent, &liveCgroups, owner)
		for _, dir := range removed {
			log.Info("removed a task cgroup left behind", "cgroup", dir)
		}
		if err != nil {
			log.Warn("sweeping task cgroups left behind", "error", err)
		}
	}
}

// cgroupParents are the directories this process makes its tasks'
// cgroups in: cgroupRoot/gpulayer on v2; on v1 gpulayer below the
// process's own cgroup in each hierarchy it limits tasks in.
func cgroupParents() []string {
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		return []string{filepath.Join(cgroupRoot, cgroupParent)}
	}
	var out []string
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		base, err := v1Hierarchy(ctrl)
		if err != nil {
			continue
		}
		if p := filepath.Join(base, cgroupParent); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// sweepCgroupDir removes each directory in parent named for owner
// (ownedBy) that live does not hold, and returns those it removed. It
// only calls rmdir, which the kernel refuses for a cgroup with a process
// or a child cgroup in it: it never kills anything, nor takes a cgroup in
// use, whoever's it is. A parent that is not there has nothing to sweep.
// The one race left, with another executor of the same owner (a plugin
// process of the same agent) that made a task cgroup and has not yet put
// the task in it, is that one's to survive (setUp, add).
func sweepCgroupDir(parent string, live *cgroupSet, owner string) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	var removed []string
	var errs []error
	for _, e := range entries {
		dir := filepath.Join(parent, e.Name())
		if !e.IsDir() || live.dirs[dir] > 0 || !ownedBy(e.Name(), owner) {
			continue
		}
		switch err := syscall.Rmdir(dir); {
		case err == nil:
			removed = append(removed, dir)
		case errors.Is(err, syscall.EBUSY), errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.ENOENT):
			// in use (processes, child cgroups), or gone already
		default:
			errs = append(errs, fmt.Errorf("cgroup: remove %s: %w", dir, err))
		}
	}
	return removed, errors.Join(errs...)
}

// removeCgroupDir empties dir and removes it, until cgroupRemoveTimeout.
func removeCgroupDir(dir string, v2 bool) error {
	deadline := time.Now().Add(cgroupRemoveTimeout)
	for {
		if v2 {
			_ = writeFile(filepath.Join(dir, "cgroup.kill"), "1") // Linux 5.14 and later
		}
		for _, pid := range cgroupPids(dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("cgroup: remove %s: %w", dir, err)
		}
		time.Sleep(10 * time.Millisecond) // a killed process leaves the cgroup once it is reaped
	}
}

// cgroupPids lists the processes in the cgroup dir.
func cgroupPids(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// v1Hierarchy is the plugin's own cgroup directory in the v1 hierarchy of
// controller ctrl: where the hierarchy is mounted (/proc/self/mountinfo)
// joined with the plugin's path in it (/proc/self/cgroup).
func v1Hierarchy(ctrl string) (string, error) {
	mount, root, err := v1Mount(ctrl)
	if err != nil {
		return "", err
	}
	own, err := ownCgroup(ctrl)
	if err != nil {
		return "", err
	}
	// A hierarchy mounted from one of its cgroups (a container's) shows
	// paths below that cgroup.
	if root != "/" && (own == root || strings.HasPrefix(own, root+"/")) {
		own = strings.TrimPrefix(own, root)
	}
	return filepath.Join(mount, own), nil
}

// errNoController: the host has no hierarchy for a controller a limit
// needs.
var errNoController = errors.New("no cgroup hierarchy has this controller mounted")

// v1Mount finds where the v1 hierarchy of ctrl is mounted, and the path
// in the hierarchy that the mount shows at its top.
func v1Mount(ctrl string) (mount, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != "cgroup" {
			continue
		}
		if slices.Contains(strings.Split(qf[2], ","), ctrl) {
			return pf[4], pf[3], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", err
	}
	return "", "", errNoController
}

// ownCgroup is the plugin's path in the v1 hierarchy of ctrl.
func ownCgroup(ctrl string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), ctrl) {
			return parts[2], nil
		}
	}
	return "", errNoController
}

// cgroupName makes an attempt id safe as a directory name.
func cgroupName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	name := string(b)
	if name == "" || name == "." || name == ".." {
		name = "_" + name
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return name
}

// writeFile writes value to an existing cgroup file.
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
