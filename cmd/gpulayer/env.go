package main

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envPrefix starts the environment variable of every flag: --data-dir is
// also GPULAYER_DATA_DIR. A flag on the command line wins over the
// variable, which wins over the default.
const envPrefix = "GPULAYER_"

// envAliases are the older variables a flag also reads, after its own.
var envAliases = map[string][]string{
	"coordinator": {"GPULAYER_ADDR"}, // agent run: the same addresses clients use
}

// envNames returns the variables flag reads, in order of preference.
func envNames(flag string) []string {
	own := envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
	return append([]string{own}, envAliases[flag]...)
}

// envNamesAnnotation, on a flag, names the variables it reads in place of
// those its name gives: two flags of one name but different meanings
// (-o/--output, a format, and job submit's --output, a glob) each get
// their own.
const envNamesAnnotation = "gpulayer-env"

// flagEnvNames returns the variables f reads, in order of preference.
func flagEnvNames(f *pflag.Flag) []string {
	if names := f.Annotations[envNamesAnnotation]; len(names) > 0 {
		return names
	}
	return envNames(f.Name)
}

// readsEnv makes flag name of fs read the variables names, in that order,
// instead of the ones its name gives.
func readsEnv(fs *pflag.FlagSet, name string, names ...string) {
	_ = fs.SetAnnotation(name, envNamesAnnotation, names)
}

// sourceAnnotation records, on a flag not given on the command line, where
// its value came from (the variable's name, or the config file's).
const sourceAnnotation = "gpulayer-source"

// noEnvAnnotation marks a flag no variable sets: job submit's --config,
// as GPULAYER_CONFIG names the config file of coordinator and agent run.
const noEnvAnnotation = "gpulayer-no-env"

// noEnv says whether no variable sets f.
func noEnv(f *pflag.Flag) bool { return f.Name == "help" || len(f.Annotations[noEnvAnnotation]) > 0 }

// bindEnv sets every flag of fs not given on the command line from its
// variable, when that is set and not empty. It does not mark the flag
// changed: Changed keeps meaning "on the command line" (see
// refuseSecretsOnArgv). A value that does not parse is a usage error
// naming the variable, not repeating its value.
func bindEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || noEnv(f) {
			return
		}
		for _, name := range flagEnvNames(f) {
			v := os.Getenv(name)
			if v == "" {
				continue
			}
			if e := f.Value.Set(v); e != nil {
				err = usagef("%s does not hold a valid --%s (%s)", name, f.Name, f.Value.Type())
				return
			}
			_ = fs.SetAnnotation(f.Name, sourceAnnotation, []string{name})
			return
		}
	})
	return err
}

// documentEnv appends each flag's variable to its help text, through the
// whole tree.
func documentEnv(cmd *cobra.Command) {
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !noEnv(f) && !strings.Contains(f.Usage, "$"+envPrefix) {
			f.Usage += " [$" + strings.Join(flagEnvNames(f), ", $") + "]"
		}
	})
	for _, c := range cmd.Commands() {
		documentEnv(c)
	}
}
