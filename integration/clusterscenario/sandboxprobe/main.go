// Command sandboxprobe is the task the container cluster test
// (scripts/test-cluster.sh) runs with the exec executor on each agent. It
// prints what it sees and exits 0 only when it runs in the task sandbox:
// a PID namespace of its own (no process but its init and itself), a
// /tmp of its own (the agent container's holds go-plugin's sockets,
// plugin*), and the agent's data dir (/data) hidden.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

func main() {
	var pids []int
	entries, err := os.ReadDir("/proc")
	if err != nil {
		fmt.Println("NOT SANDBOXED: cannot read /proc:", err)
		os.Exit(2)
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	var tmp []string
	if entries, err := os.ReadDir("/tmp"); err == nil {
		for _, e := range entries {
			tmp = append(tmp, e.Name())
		}
	}
	data, dataErr := os.ReadDir("/data")
	self := os.Getpid()
	fmt.Printf("pid %d; visible pids %v; /tmp holds %q; /data entries %d (%v)\n", self, pids, tmp, len(data), dataErr)
	var why []string
	for _, p := range pids {
		if p > self {
			why = append(why, fmt.Sprintf("process %d is visible", p))
		}
	}
	if len(pids) > 2 {
		why = append(why, fmt.Sprintf("%d processes visible, want its init and itself", len(pids)))
	}
	for _, name := range tmp {
		if strings.HasPrefix(name, "plugin") {
			why = append(why, "the agent container's /tmp (go-plugin's socket "+name+") is visible")
		}
	}
	if len(data) > 0 {
		why = append(why, "the agent's data dir /data is readable")
	}
	if len(why) > 0 {
		fmt.Println("NOT SANDBOXED: " + strings.Join(why, "; "))
		os.Exit(1)
	}
	fmt.Println("sandboxed")
}
