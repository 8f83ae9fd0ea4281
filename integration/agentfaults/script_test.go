//go:build linux

package agentfaults

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lockScript stands for a task that holds its GPUs while it runs. Its
// arguments: the shared directory, the job's key, how long to sleep (in
// seconds) and the exit code to end with.
//
// It takes an exclusive flock(2) on a file per job key (two copies of one
// task at once) and one per GPU of its agent (two processes on one GPU),
// failing at once if another process holds one, in which case it records
// "overlap" and exits 97. A flock lasts exactly as long as some process
// holding the descriptor lives: the shell and the sleep it runs inherit
// them, and the kernel drops the lock when the last of them dies however
// it dies (SIGKILL included), so a lock held is a process alive and no
// killed attempt leaves a stale lock behind. GPUs are told apart by agent
// (the name of the task's work root, the parent of $HOME) and UUID: the
// fake GPUs of two agents are different devices even if their UUIDs were
// the same.
//
// Events, one line each, appended (O_APPEND) to <dir>/events:
//
//	start <key> <attempt> <agent> <pid> <gpus|->
//	end <key> <attempt> <agent> <exit code>
//	overlap <task|gpu> <key> <attempt> <agent> [<gpu>]
const lockScript = `d="$1"; key="$2"; umask 000
agent=$(basename "$(dirname "$HOME")")
me="$key $GPULAYER_ATTEMPT_ID $agent"
exec 3>>"$d/lock-task-$key"
if ! flock -n 3; then echo "overlap task $me" >> "$d/events"; exit 97; fi
fd=4
for g in $(echo "$CUDA_VISIBLE_DEVICES" | tr , ' '); do
	eval "exec $fd>>\"\$d/lock-gpu-\$agent-\$g\""
	if ! flock -n $fd; then echo "overlap gpu $me $g" >> "$d/events"; exit 97; fi
	fd=$((fd+1))
done
echo "start $me $$ ${CUDA_VISIBLE_DEVICES:--}" >> "$d/events"
sleep "$3"
echo "end $me $4" >> "$d/events"
exit "$4"`

// maxScriptGPUs is how many GPUs lockScript can lock: descriptors 4 to 9
// (dash takes single-digit descriptors only).
const maxScriptGPUs = 6

// execConfig is the exec executor config that runs lockScript.
func execConfig(t testing.TB, dir, key string, sleepSeconds float64, exit int) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", lockScript, "sh", dir, key,
		strconv.FormatFloat(sleepSeconds, 'f', 3, 64), strconv.Itoa(exit)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sharedDir makes the directory tasks write their events and locks to,
// reachable by every task uid, under taskShareRoot.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(taskShareRoot(t), "gpulayer-agentfaults-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// event is one line of the events file.
type event struct {
	Kind    string // start, end, overlap
	Key     string // the job's key
	Attempt string
	Agent   string // the agent's work root name, work-<id>
	PID     int    // start
	GPUs    []string
	Exit    int    // end
	What    string // overlap: task or gpu
	Line    int
}

func (e event) String() string {
	return fmt.Sprintf("#%d %s %s %s %s", e.Line, e.Kind, e.Key, e.Attempt, e.Agent)
}

// readEvents parses dir/events; a line it cannot read is an error.
func readEvents(dir string) ([]event, error) {
	f, err := os.Open(filepath.Join(dir, "events"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []event
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		e, err := parseEvent(sc.Text())
		if err != nil {
			return out, fmt.Errorf("events line %d: %w", n, err)
		}
		e.Line = n
		out = append(out, e)
	}
	return out, sc.Err()
}

func parseEvent(line string) (event, error) {
	f := strings.Fields(line)
	bad := fmt.Errorf("malformed event %q", line)
	if len(f) == 0 {
		return event{}, bad
	}
	e := event{Kind: f[0]}
	var err error
	switch e.Kind {
	case "start":
		if len(f) != 6 {
			return e, bad
		}
		e.Key, e.Attempt, e.Agent = f[1], f[2], f[3]
		if e.PID, err = strconv.Atoi(f[4]); err != nil {
			return e, bad
		}
		if f[5] != "-" {
			e.GPUs = strings.Split(f[5], ",")
		}
	case "end":
		if len(f) != 5 {
			return e, bad
		}
		e.Key, e.Attempt, e.Agent = f[1], f[2], f[3]
		if e.Exit, err = strconv.Atoi(f[4]); err != nil {
			return e, bad
		}
	case "overlap":
		if len(f) < 5 || (f[1] != "task" && f[1] != "gpu") {
			return e, bad
		}
		e.What, e.Key, e.Attempt, e.Agent = f[1], f[2], f[3], f[4]
		if len(f) > 5 {
			e.GPUs = f[5:]
		}
	default:
		return e, bad
	}
	return e, nil
}

// taskShareRoot is where sharedDir makes its directories: under the
// host's /tmp, which a sandboxed task does not see (it has a /tmp of its
// own), so every agent the tests start keeps it reachable
// (--task-sandbox-keep).
func taskShareRoot(t testing.TB) string {
	t.Helper()
	root := filepath.Join(os.TempDir(), "gpulayer-agentfaults-shared")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil { // task uids pass through
		t.Fatal(err)
	}
	return root
}
