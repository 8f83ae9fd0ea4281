package pluginhost

// Events hears of plugin processes as they start and crash: the agent
// counts them in its metrics. Its methods must return quickly.
type Events interface {
	// PluginStarted is called once per plugin process launched.
	PluginStarted(executor string)
	// PluginCrashed is called once per plugin process that died (or
	// stopped answering) while in use, not when the host killed it.
	PluginCrashed(executor string)
}

// noEvents is the Events of a host configured without any.
type noEvents struct{}

func (noEvents) PluginStarted(string) {}
func (noEvents) PluginCrashed(string) {}
