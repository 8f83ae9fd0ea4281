// Command gpulayer-executor-echo is an example executor plugin, written
// the way an out-of-tree plugin would be: it imports only GpuLayer's sdk/.
// Build it into the agent's plugin directory and jobs can use the "echo"
// executor:
//
//	go build -o /var/lib/gpulayer/plugins/gpulayer-executor-echo ./examples/plugins/echo
//
// A task's config:
//
//	{"message": "gpus: ${CUDA_VISIBLE_DEVICES}", "repeat": 3, "interval": "1s", "exit_code": 0}
//
// prints message (with ${NAME} taken from the task's environment) repeat
// times, one line each, interval apart, then ends with exit_code. repeat
// defaults to 1; -1 repeats until the task is stopped. Stop ends the task
// at once with exit code 143 and reason "stopped".
package main

import "github.com/gpulayer/gpulayer/sdk/executor"

func main() {
	executor.Serve(New())
}
