package runner

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
)

// leaderExitsEnv makes this test binary, run again as a helper, end its
// main thread alone and keep running on its others: what a task does
// when its main thread calls pthread_exit while workers hold the GPU.
const leaderExitsEnv = "GPULAYER_TEST_LEADER_EXITS"

func init() {
	if os.Getenv(leaderExitsEnv) != "1" {
		return
	}
	runtime.LockOSThread() // init runs on the main thread: keep it there
	started := make(chan struct{})
	go func() {
		close(started)
		select {} // runs on another thread until killed
	}()
	<-started
	syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0) // this thread only, not the group
}

// A process whose main thread has exited while its other threads run
// shows as a zombie, yet runs: the leftover scan still finds it (so the
// task's uid is not handed on with it alive) and the share watchdog
// still reads its uids.
func TestZombieLeaderWithThreadsIsAlive(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaderExitsEnv+"=1", "GOMAXPROCS=2", attemptIDVar+"=att-zombie")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	status := "/proc/" + strconv.Itoa(pid) + "/status"
	waitUntil(t, "the helper's main thread to exit alone", func() bool {
		b, err := os.ReadFile(status)
		if err != nil {
			t.Fatalf("helper gone: %v", err)
		}
		p, ok := parseStatus(b)
		return ok && p.live && bytes.Contains(b, []byte("State:\tZ"))
	})
	me := uint32(os.Getuid())
	if pids, err := newProcTable().owned(me); err != nil || !slices.Contains(pids, pid) {
		t.Fatalf("leftover scan of uid %d: %v %v, want the zombie leader %d among them", me, pids, err, pid)
	}
	if uids, ok := ProcessUIDs(uint32(pid)); !ok || uids[0] != me {
		t.Fatalf("uids of the zombie leader: %v %v", uids, ok)
	}
	// Its environment, which /proc/<pid>/environ no longer gives, is read
	// through a live thread: the attempt id traces it (one task user),
	// and the attempt's kill finds it.
	if att, ok := AttemptOfPID(uint32(pid)); !ok || att != "att-zombie" {
		t.Fatalf("attempt of the zombie leader: %q %v, want att-zombie", att, ok)
	}
	if pids, err := processesWith([]byte(attemptIDVar + "=att-zombie\x00")); err != nil || !slices.Contains(pids, pid) {
		t.Fatalf("processes of attempt att-zombie: %v %v, want %d", pids, err, pid)
	}
	// SIGKILL to the leader's pid ends the whole group, as the leftover
	// kill sends it.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if pids, _ := newProcTable().owned(me); slices.Contains(pids, pid) {
		t.Fatalf("the helper %d still listed after its kill", pid)
	}
}
