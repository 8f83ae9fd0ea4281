package executortest

import (
	"testing"

	plugin "github.com/hashicorp/go-plugin"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Connect serves impl over go-plugin's gRPC transport inside the test
// process and returns the client side: an executor.Executor backed by the
// same gRPC adapters the agent uses with a real plugin process. The
// connection is closed when the test ends.
func Connect(t testing.TB, impl executor.Executor) executor.Executor {
	t.Helper()
	// Closing the client shuts the server down through go-plugin's
	// controller service, as the agent does with a plugin process.
	client, _ := plugin.TestPluginGRPCConn(t, false, executor.PluginSet(impl))
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(executor.PluginName)
	if err != nil {
		t.Fatalf("executortest: dispense %q: %v", executor.PluginName, err)
	}
	e, ok := raw.(executor.Executor)
	if !ok {
		t.Fatalf("executortest: dispensed %T, not an executor.Executor", raw)
	}
	return e
}
