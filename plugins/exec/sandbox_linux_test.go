package exec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// sandboxOnly skips a test of the sandbox where the executor cannot make
// one: not root, or a host that refuses namespaces or mounts to root.
func sandboxOnly(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a task sandbox needs root (namespaces, mounts, cgroups); CI runs this as root")
	}
	e := exec.New(exec.Options{})
	task := executortest.NewTask(t, shell("true"))
	if err := e.Start(t.Context(), task); err != nil {
		if errors.Is(err, exec.ErrSandbox) {
			t.Skipf("this host refuses the sandbox even to root: %v", err)
		}
		t.Fatal(err)
	}
	if _, err := e.Wait(t.Context(), task.ID); err != nil {
		t.Fatal(err)
	}
}

// userTask is a task running script as uid (and gid uid), with sb as the
// agent's sandbox request (nil: none).
func userTask(t *testing.T, uid int, sb *executor.Sandbox, script string, args ...string) executor.Task {
	t.Helper()
	task := executortest.NewTask(t, shell(script, args...))
	// The task user must reach its work dir: t.TempDir's root is 0700.
	if err := os.Chmod(filepath.Dir(task.WorkDir), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(task.WorkDir, uid, uid); err != nil {
		t.Fatal(err)
	}
	id := strconv.Itoa(uid)
	task.Env = map[string]string{executor.EnvTaskUID: id, executor.EnvTaskGID: id}
	if sb != nil {
		task.Env[executor.EnvSandbox] = sb.Encode()
	}
	return task
}

// processesOf lists the processes of the host (zombies included) that
// have uid among their uids.
func processesOf(t *testing.T, uid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if ids, ok := strings.CutPrefix(line, "Uid:"); ok && slices.Contains(strings.Fields(ids), strconv.Itoa(uid)) {
				out = append(out, e.Name()+" "+strings.Fields(string(b))[1])
			}
		}
	}
	return out
}

// The attack: a task's static fork chain outlived it, on its uid, and
// read the next task's environment. Whatever the task leaves running, in
// whatever process group or session, is gone once Wait returns: no
// process of its uid is left, with no scan to find and kill it.
func TestSandboxEndsEveryDescendant(t *testing.T) {
	sandboxOnly(t)
	e := exec.New(exec.Options{})
	// Each script makes sure its leftover runs before the main process
	// exits: the ready file appears once the leftover has started.
	for i, tc := range []struct{ name, script string }{
		{"background of a subshell", `(sleep 1000 & echo $! > ready); while [ ! -s ready ]; do :; done; exit 0`},
		{"setsid grandchild", `setsid sh -c 'sleep 1000 & echo $! > ready; wait' & while [ ! -s ready ]; do :; done; exit 0`},
		{"double-forked daemon", `sh -c 'sh -c "echo \$\$ > ready; exec sleep 1000" </dev/null >/dev/null 2>&1 &' ; while [ ! -s ready ]; do :; done; exit 0`},
		{"ignores SIGTERM and SIGHUP", `trap '' TERM HUP; (trap '' TERM HUP; setsid sleep 1000 & echo $! > ready); while [ ! -s ready ]; do :; done; exit 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uid := 61400 + i
			stdout, stderr, res := run(t, e, userTask(t, uid, nil, tc.script))
			if left := processesOf(t, uid); len(left) != 0 {
				t.Fatalf("processes of uid %d outlived the task: %v", uid, left)
			}
			if res.ExitCode != 0 {
				t.Errorf("%+v, stdout %q, stderr %q", res, stdout, stderr)
			}
		})
	}
}

// Stop and KillAll end the whole sandbox too: a leftover that ignores
// SIGTERM goes with the kill after the grace period.
func TestSandboxKillAllEndsEveryDescendant(t *testing.T) {
	sandboxOnly(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	e := exec.New(exec.Options{})
	script := `trap '' TERM; setsid sh -c "trap '' TERM; sleep 1000" & echo ready; wait`
	stopped := userTask(t, 61410, nil, script)
	killed := userTask(t, 61411, nil, script)
	for _, task := range []executor.Task{stopped, killed} {
		if err := e.Start(ctx, task); err != nil {
			t.Fatal(err)
		}
		waitOutput(ctx, t, e, task.ID, "ready\n")
	}
	if err := e.Stop(ctx, stopped.ID, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if left := processesOf(t, 61410); len(left) != 0 {
		t.Errorf("processes of the stopped task left: %v", left)
	}
	if res, _ := e.Wait(ctx, stopped.ID); res.ExitCode != 137 || res.Reason != "stopped: killed by signal SIGKILL" {
		t.Errorf("stopped task: %+v, want 137 stopped by SIGKILL", res)
	}
	e.KillAll()
	if res, err := e.Wait(ctx, killed.ID); err != nil || res.ExitCode != 137 {
		t.Errorf("task after KillAll: %+v, %v; want killed by SIGKILL", res, err)
	}
	if left := processesOf(t, 61411); len(left) != 0 {
		t.Errorf("processes of the task ended by KillAll left: %v", left)
	}
}

// A task that SIGTERM ends reports it as before: the init passes Stop's
// SIGTERM on and tells how the task's process ended.
func TestSandboxForwardsSIGTERM(t *testing.T) {
	sandboxOnly(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	e := exec.New(exec.Options{})
	task := userTask(t, 61412, nil, `trap 'echo got TERM; exit 3' TERM; echo ready; while :; do sleep 0.05; done`)
	if err := e.Start(ctx, task); err != nil {
		t.Fatal(err)
	}
	waitOutput(ctx, t, e, task.ID, "ready\n")
	if err := e.Stop(ctx, task.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	res, _ := e.Wait(ctx, task.ID)
	out, _ := executortest.Collect(ctx, e, task.ID)
	if res.ExitCode != 3 || res.Reason != "stopped" || !strings.Contains(out.Stdout(), "got TERM") {
		t.Errorf("%+v, stdout %q: want exit 3 after the task's own TERM handler", res, out.Stdout())
	}
}

// The attack: files left in /tmp and /dev/shm crossed tenants. Each task
// has /tmp, /var/tmp, /dev/shm and /run/lock of its own, empty at its
// start; the
// next task given the same uid finds nothing, and nothing reaches the
// host's.
func TestSandboxPrivateTmp(t *testing.T) {
	sandboxOnly(t)
	e := exec.New(exec.Options{})
	canary := "gpulayer-canary-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	dirs := []string{"/tmp", "/var/tmp", "/dev/shm", "/run/lock"}
	write := userTask(t, 61420, nil, `for d in /tmp /var/tmp /dev/shm /run/lock; do [ -d $d ] || continue; echo secret > $d/$1 || exit 1; ls -A $d; done`, canary)
	stdout, stderr, res := run(t, e, write)
	if res.ExitCode != 0 || !strings.Contains(stdout, canary) {
		t.Fatalf("writing: %+v, stdout %q, stderr %q", res, stdout, stderr)
	}
	read := userTask(t, 61420, nil, `for d in /tmp /var/tmp /dev/shm /run/lock; do [ -d $d ] || continue; ls -A $d; cat $d/$1 2>/dev/null; done; echo end`, canary)
	// The one thing in the task's /tmp is the way to its own directory,
	// when that lies in the host's /tmp (as t.TempDir's do).
	want := "end\n"
	if rel, ok := strings.CutPrefix(read.WorkDir, "/tmp/"); ok {
		want = strings.Split(rel, "/")[0] + "\n" + want
	}
	stdout, stderr, res = run(t, e, read)
	if res.ExitCode != 0 || stdout != want {
		t.Errorf("the next task found %q (stderr %q, %+v), want %q", stdout, stderr, res, want)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, canary)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the task's file reached the host's %s: %v", d, err)
		}
	}
}

// The attack: a task filled the host's memory through its /tmp or
// /dev/shm (a tmpfs without a size may take half the host's RAM, each).
// Each fresh tmpfs is bounded: by the executor's TmpfsBytes and the
// task's memory limit, the smaller where both are set, else by an eighth
// of the host's RAM; writing past the bound fails with ENOSPC.
func TestSandboxTmpfsBounded(t *testing.T) {
	sandboxOnly(t)
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	byDefault := int64(si.Totalram) * int64(si.Unit) / 8 &^ (1<<20 - 1)
	// The task prints the size and inode bound of each fresh tmpfs (the
	// last mount on the directory: the one on top), then, with "fill",
	// tries to write 2 MiB to it.
	script := `fill=$1; shift
for d; do
	echo "$d$(awk -v d="$d" '$2 == d { top = $4 } END { n = split(top, o, ","); for (i = 1; i <= n; i++) if (o[i] ~ /^(size|nr_inodes)=/) printf " %s", o[i] }' /proc/self/mounts)"
	[ "$fill" = fill ] || continue
	if out=$(dd if=/dev/zero of="$d/fill" bs=64k count=32 2>&1); then
		echo "$d: wrote 2 MiB"
	else
		case $out in *"No space left on device"*) echo "$d: ENOSPC" ;; *) echo "$d: $out" ;; esac
	fi
	rm -f "$d/fill"
done`
	var dirs []string // the fresh directories this host has, as mounted
	for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm", "/run/lock"} {
		if real, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(dirs, real) {
			if fi, err := os.Stat(real); err == nil && fi.IsDir() {
				dirs = append(dirs, real)
			}
		}
	}
	for i, tc := range []struct {
		name       string
		tmpfsBytes int64
		memory     int64
		fill       bool
		wantSize   int64
	}{
		{"configured bound", 1 << 20, 0, true, 1 << 20},
		{"configured bound below the memory limit", 1 << 20, 256 << 20, true, 1 << 20},
		{"memory limit", 0, 64 << 20, false, 64 << 20},
		{"memory limit below the configured bound", 512 << 20, 64 << 20, false, 64 << 20},
		{"default: an eighth of the host's RAM", 0, 0, false, byDefault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fill := "no"
			if tc.fill {
				fill = "fill"
			}
			task := userTask(t, 61490+i, &executor.Sandbox{MemoryBytes: tc.memory}, script, append([]string{fill}, dirs...)...)
			stdout, stderr, res := run(t, exec.New(exec.Options{TmpfsBytes: tc.tmpfsBytes}), task)
			var want strings.Builder
			for _, d := range dirs {
				fmt.Fprintf(&want, "%s size=%dk nr_inodes=%d\n", d, tc.wantSize>>10, max(tc.wantSize/4096, 4096))
				if tc.fill {
					fmt.Fprintf(&want, "%s: ENOSPC\n", d)
				}
			}
			if res.ExitCode != 0 || stdout != want.String() {
				t.Errorf("%+v, stderr %q, stdout:\n%s\nwant:\n%s", res, stderr, stdout, want.String())
			}
		})
	}
}

// System V shared memory a task made is its own and goes with it: the
// next task given the same uid finds none, nor does the host.
func TestSandboxPrivateIPC(t *testing.T) {
	sandboxOnly(t)
	e := exec.New(exec.Options{})
	stdout, stderr, res := run(t, e, userTask(t, 61425, nil, `ipcmk -M 4096 && tail -n +2 /proc/sysvipc/shm | wc -l`))
	if res.ExitCode != 0 || !strings.HasSuffix(stdout, "\n1\n") {
		t.Fatalf("making a segment: %+v, stdout %q, stderr %q", res, stdout, stderr)
	}
	stdout, stderr, res = run(t, e, userTask(t, 61425, nil, `tail -n +2 /proc/sysvipc/shm | wc -l`))
	if res.ExitCode != 0 || strings.TrimSpace(stdout) != "0" {
		t.Errorf("the next task sees %q segments (stderr %q, %+v), want 0", stdout, stderr, res)
	}
	host, err := os.ReadFile("/proc/sysvipc/shm")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(host), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 7 && f[7] == "61425" {
			t.Errorf("the task's segment is in the host's IPC namespace: %s", line)
		}
	}
}

// hostDir makes a directory outside /tmp, /var/tmp and /dev/shm (which a
// sandbox covers anyway), removed when the test ends.
func hostDir(t *testing.T) string {
	t.Helper()
	for _, parent := range []string{"/var/lib", "/run", "/srv"} {
		if d, err := os.MkdirTemp(parent, "gpulayer-test-"); err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(d) })
			return d
		}
	}
	t.Skip("no writable directory outside /tmp")
	return ""
}

// The attack: a task read the agent's files. What the agent names to hide
// (its data dir, its config, the root of the task directories) is an
// empty directory the task is refused (EACCES), a file is refused too,
// and of the task directories only its own is there, writable as before.
func TestSandboxHidesHostPaths(t *testing.T) {
	sandboxOnly(t)
	root := hostDir(t)
	data := filepath.Join(root, "data")
	config := filepath.Join(root, "agent.toml")
	work := filepath.Join(root, "work")
	own, other := filepath.Join(work, "own"), filepath.Join(work, "other")
	for _, d := range []string{data, work, own, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(data, "worker-credential.json"), config, filepath.Join(other, "secret")} {
		if err := os.WriteFile(f, []byte("glw_canary\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb := &executor.Sandbox{Hide: []string{data, config, work}}
	task := userTask(t, 61430, sb, `cat "$1/worker-credential.json"; ls "$1"; cat "$2"; cat "$3/other/secret"; ls "$3"; echo mine > "$HOME/out" && pwd`, data, config, work)
	if err := os.Chown(own, 61430, 61430); err != nil {
		t.Fatal(err)
	}
	task.WorkDir = own
	stdout, stderr, res := run(t, sandboxed(), task)
	if strings.Contains(stdout+stderr, "glw_canary") {
		t.Fatalf("a hidden file was read: stdout %q stderr %q", stdout, stderr)
	}
	if res.ExitCode != 0 || stdout != own+"\n" {
		t.Errorf("%+v, stdout %q: want the task to work in %s", res, stdout, own)
	}
	// The data dir (twice), the config file and the work root refuse;
	// the other task's directory is not there at all.
	if n := strings.Count(stderr, "Permission denied"); n != 4 || !strings.Contains(stderr, "other/secret: No such file or directory") {
		t.Errorf("stderr %q: want 4 refusals and the other task's directory missing", stderr)
	}
	if b, err := os.ReadFile(filepath.Join(own, "out")); err != nil || string(b) != "mine\n" {
		t.Errorf("the task's own file on the host: %q, %v", b, err)
	}
}

// The attack: a task opened the device file of a GPU it was not given
// (CUDA_VISIBLE_DEVICES only steers CUDA). A device file the agent names
// to hide is refused (EACCES: /dev/null over it on a nodev mount), the
// task's own opens as before, and the host's file is untouched; also
// where the file lies in a kept directory below the task's own /tmp. The
// files here have /dev/zero's numbers, so that they open without a GPU.
func TestSandboxHidesDeviceFiles(t *testing.T) {
	sandboxOnly(t)
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		keep bool
	}{
		{"outside /tmp", hostDir, false},
		{"kept below /tmp", func(t *testing.T) string {
			d, err := os.MkdirTemp("/tmp", "gpulayer-kept-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(d) })
			return d
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tc.dir(t)
			if err := os.Chmod(root, 0o755); err != nil {
				t.Fatal(err)
			}
			mine, other := filepath.Join(root, "nvidia0"), filepath.Join(root, "nvidia1")
			for _, n := range []string{mine, other} {
				if err := unix.Mknod(n, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
					t.Skipf("no device files here: %v", err)
				}
				if err := os.Chmod(n, 0o666); err != nil {
					t.Fatal(err)
				}
			}
			sb := &executor.Sandbox{Hide: []string{other}}
			if tc.keep {
				sb.Keep = []string{root}
			}
			task := userTask(t, 61500, sb, `head -c 4 "$1" | wc -c; head -c 4 "$2" | wc -c`, mine, other)
			stdout, stderr, res := run(t, sandboxed(), task)
			f := strings.Fields(stdout)
			if res.ExitCode != 0 || len(f) != 2 || f[0] != "4" {
				t.Fatalf("%+v, stdout %q stderr %q: want the task's own device file read", res, stdout, stderr)
			}
			if f[1] != "0" || !strings.Contains(stderr, "nvidia1") || !strings.Contains(stderr, "Permission denied") {
				t.Fatalf("stdout %q stderr %q: want the hidden device file refused", stdout, stderr)
			}
			fi, err := os.Stat(other)
			if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
				t.Fatalf("the host's device file after the task: %v, %v", fi, err)
			}
		})
	}
}

// The host's files outside what the sandbox hides are guarded by their
// permissions alone, as for any user of the host: a task reads a
// world-readable file, and is refused one readable by its owner only and
// writes to a file it does not own.
func TestSandboxHostFilesByPermission(t *testing.T) {
	sandboxOnly(t)
	root := hostDir(t)
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	public, private := filepath.Join(root, "public"), filepath.Join(root, "private")
	if err := os.WriteFile(public, []byte("public\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(private, []byte("glw_canary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	task := userTask(t, 61510, nil, `cat "$1"; cat "$2"; echo changed >> "$1"`, public, private)
	stdout, stderr, _ := run(t, sandboxed(), task)
	if stdout != "public\n" || strings.Count(stderr, "Permission denied") != 2 {
		t.Fatalf("stdout %q stderr %q: want the public file read, the private one and the write refused", stdout, stderr)
	}
	if b, err := os.ReadFile(public); err != nil || string(b) != "public\n" {
		t.Fatalf("the public file after the task: %q, %v", b, err)
	}
}

// sandboxed is an executor with its defaults: a sandbox for every task.
func sandboxed() *exec.Executor { return exec.New(exec.Options{}) }

// The attack: a descriptor the shell that started the agent left open
// (not close-on-exec) reached every task. In a sandbox a task gets fds 0,
// 1 and 2 and nothing else, whatever the plugin holds.
func TestSandboxInheritsNoDescriptors(t *testing.T) {
	sandboxOnly(t)
	leak := filepath.Join(t.TempDir(), "leaked")
	f, err := os.Create(leak)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const fd = 100 // dup2 leaves it without close-on-exec, as inherited
	if err := unix.Dup2(int(f.Fd()), fd); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	// ls opens /proc/self/fd itself: that one is 3.
	stdout, stderr, res := run(t, sandboxed(), userTask(t, 61440, nil, `ls /proc/self/fd; ls -l /proc/self/fd`))
	if res.ExitCode != 0 {
		t.Fatalf("%+v, stderr %q", res, stderr)
	}
	fds := strings.Fields(strings.SplitN(stdout, "total", 2)[0])
	if !slices.Equal(fds, []string{"0", "1", "2", "3"}) || strings.Contains(stdout, "leaked") {
		t.Errorf("task's descriptors %v, want 0 1 2 and ls's own 3:\n%s", fds, stdout)
	}
}

// The attack: a setuid program escalates. A sandboxed task runs with
// no_new_privs (setuid and file capabilities grant nothing) and its fresh
// tmpfs mounts are nosuid.
func TestSandboxNoNewPrivs(t *testing.T) {
	sandboxOnly(t)
	stdout, stderr, res := run(t, sandboxed(), userTask(t, 61450, nil, `grep NoNewPrivs /proc/self/status; grep ' /tmp ' /proc/self/mounts`))
	if res.ExitCode != 0 || !strings.Contains(stdout, "NoNewPrivs:\t1") || !strings.Contains(stdout, "nosuid") {
		t.Errorf("%+v, stdout %q, stderr %q: want NoNewPrivs 1 and a nosuid /tmp", res, stdout, stderr)
	}
}

// A task sees only its own processes in /proc: its init (pid 1, the
// sandbox's), itself and what it starts; not the plugin, not the host's.
func TestSandboxSeesOnlyItsOwnProcesses(t *testing.T) {
	sandboxOnly(t)
	stdout, stderr, res := run(t, sandboxed(), userTask(t, 61460, nil, `echo $$; tr '\0' ' ' < /proc/1/cmdline; echo; cd /proc && echo [0-9]*`))
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if res.ExitCode != 0 || len(lines) != 3 {
		t.Fatalf("%+v, stdout %q, stderr %q", res, stdout, stderr)
	}
	if !strings.HasPrefix(lines[1], "gpulayer-task-init") {
		t.Errorf("pid 1 is %q, want the sandbox's init", lines[1])
	}
	pids := strings.Fields(lines[2])
	if len(pids) > 4 || !slices.Contains(pids, lines[0]) || slices.Contains(pids, strconv.Itoa(os.Getpid())) {
		t.Errorf("the task sees processes %v (it is %s; the test %d): want its init, itself and its own children only", pids, lines[0], os.Getpid())
	}
}

// The memory, pids and CPU limits the agent asks for are set on the
// task's cgroup, which the task runs in; it is removed after the task.
func TestSandboxCgroupLimits(t *testing.T) {
	sandboxOnly(t)
	sb := &executor.Sandbox{MemoryBytes: 256 << 20, CPUMillis: 1500, Pids: 100}
	// Prints, for each controller, the task's cgroup and the limit in it
	// (v1: a hierarchy per controller; v2: the one unified one).
	script := `
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	p=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
	echo "$p"; cat "$p/memory.max" "$p/pids.max" "$p/cpu.max"
else
	p=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
	echo "/sys/fs/cgroup/memory$p"; cat "/sys/fs/cgroup/memory$p/memory.limit_in_bytes"
	cat "/sys/fs/cgroup/pids$(awk -F: '$2 ~ /(^|,)pids(,|$)/ {print $3}' /proc/self/cgroup)/pids.max"
	c=/sys/fs/cgroup/cpu$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/self/cgroup)
	echo "$(cat $c/cpu.cfs_quota_us) $(cat $c/cpu.cfs_period_us)"
fi`
	task := userTask(t, 61470, sb, script)
	stdout, stderr, res := run(t, sandboxed(), task)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if res.ExitCode != 0 || len(lines) != 4 {
		t.Fatalf("%+v, stdout %q, stderr %q", res, stdout, stderr)
	}
	if !strings.HasSuffix(lines[0], "/gpulayer/"+task.ID) {
		t.Errorf("the task runs in cgroup %s, want gpulayer/%s", lines[0], task.ID)
	}
	if want := []string{strconv.Itoa(256 << 20), "100", "150000 100000"}; !slices.Equal(lines[1:], want) {
		t.Errorf("limits %q, want %q", lines[1:], want)
	}
	if _, err := os.Stat(lines[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the task's cgroup %s is left after it: %v", lines[0], err)
	}
}

// The attack: a fork bomb. pids.max bounds it: the task cannot have
// more processes (and threads, its init's included) than its limit.
func TestSandboxPidsLimitBoundsForkBomb(t *testing.T) {
	sandboxOnly(t)
	const limit = 40
	sb := &executor.Sandbox{Pids: limit}
	// Each sleep that started is counted in the task's directory before
	// the next fork; the fork that fails ends the shell.
	task := userTask(t, 61480, sb, `i=0; while [ $i -lt 200 ]; do sleep 1000 & i=$((i+1)); echo $i > count; done; echo unbounded`)
	stdout, _, res := run(t, sandboxed(), task)
	b, err := os.ReadFile(filepath.Join(task.WorkDir, "count"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if n >= limit || strings.Contains(stdout, "unbounded") || res.ExitCode == 0 {
		t.Errorf("the task started %d processes under pids.max %d (%+v)", n, limit, res)
	}
	if left := processesOf(t, 61480); len(left) != 0 {
		t.Errorf("processes of the fork bomb left: %v", left)
	}
}

// A sandbox that cannot be built fails the task's Start with an error
// that says which step failed; the task does not run without one.
func TestSandboxFailureNamedInError(t *testing.T) {
	sandboxOnly(t)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		name string
		sb   executor.Sandbox
		want string
	}{
		{"keep path missing", executor.Sandbox{Keep: []string{"/nonexistent/gpulayer-mps"}}, "sandbox: keep /nonexistent/gpulayer-mps: no such file or directory"},
		{"CPU limit below the kernel's least", executor.Sandbox{CPUMillis: 1}, "sandbox: cgroup: set cpu."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := executortest.NewTask(t, shell(`touch "$1"`, marker))
			task.Env = map[string]string{executor.EnvSandbox: tc.sb.Encode()}
			err := sandboxed().Start(t.Context(), task)
			if !errors.Is(err, exec.ErrSandbox) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start = %v, want ErrSandbox saying %q", err, tc.want)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the task ran anyway")
			}
		})
	}
}

// The agent's sandbox request is the executor's business: the task does
// not find it in its environment.
func TestSandboxVariableNotPassedOn(t *testing.T) {
	task := executortest.NewTask(t, shell(`echo "[$GPULAYER_SANDBOX]"`))
	task.Env = map[string]string{executor.EnvSandbox: executor.Sandbox{Disable: true}.Encode()}
	stdout, stderr, res := run(t, sandboxed(), task)
	if res.ExitCode != 0 || stdout != "[]\n" {
		t.Errorf("%+v, stdout %q, stderr %q", res, stdout, stderr)
	}
}
