package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"

	"github.com/wardenzk/warden/internal/containerenv"
)

const containerDoc = `The entrypoint of Warden's Docker image (docs/docker.md). It reads the
official zookeeper image's environment (ZOO_CONF_DIR, ZOO_DATA_DIR,
ZOO_SERVERS, ZOO_MY_ID, ZOO_CFG_EXTRA, ...), writes $ZOO_CONF_DIR/zoo.cfg
and $ZOO_DATA_DIR/myid when they do not exist yet (an existing file is
kept as it is), then runs 'warden server [flags] $ZOO_CONF_DIR/zoo.cfg'
in this process (the flags are the server's).

With a COMMAND, it runs 'warden COMMAND [args]' instead, without touching
any file, as the official image runs its CMD:
docker run IMAGE cli -server zoo1:2181.
`

// containerFlags is `warden container`: the image's entrypoint. It takes
// the server's flags.
func containerFlags(fs *flag.FlagSet) func(args []string) error {
	o := serverFlagVars(fs)
	return func(args []string) error {
		if len(args) > 0 {
			return execWarden(args)
		}
		return runContainer(*o)
	}
}

// runContainer prepares zoo.cfg and myid from the environment and runs
// the server.
func runContainer(o serverOptions) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	env := containerenv.Lookup(os.LookupEnv)
	res, err := containerenv.Prepare(env)
	if errors.Is(err, containerenv.ErrInvalid) {
		return fmt.Errorf("container: %w (docs/docker.md lists the variables)", err)
	}
	if err != nil {
		return fmt.Errorf("container: %w", err)
	}
	log.Info("container: zoo.cfg", "path", res.ConfigPath, "generated", res.ConfigWritten)
	log.Info("container: myid", "path", env.MyIDPath(), "written", res.MyIDWritten)
	if !res.ConfigWritten && hasContractVariables() {
		log.Warn("container: " + res.ConfigPath + " exists, so the ZOO_* settings in the environment are ignored; " +
			"remove it (or its mount) to generate it from the environment")
	}
	if b, err := os.ReadFile(env.MyIDPath()); err == nil && !res.MyIDWritten && strings.TrimSpace(string(b)) != env.MyID && os.Getenv("ZOO_MY_ID") != "" {
		log.Warn("container: "+env.MyIDPath()+" exists, so ZOO_MY_ID is ignored; this member keeps its id",
			"myid", strings.TrimSpace(string(b)), "ZOO_MY_ID", env.MyID)
	}
	return runServer([]string{res.ConfigPath}, o)
}

// hasContractVariables reports whether the environment sets any variable
// that only matters when zoo.cfg is generated.
func hasContractVariables() bool {
	// Not those with a default in the image's ENV: they are always set.
	for _, name := range []string{"ZOO_SERVERS", "ZOO_CFG_EXTRA", "ZOO_4LW_COMMANDS_WHITELIST"} {
		if os.Getenv(name) != "" {
			return true
		}
	}
	return false
}

// execWarden replaces this process with `warden args...` (there is no
// shell in the image to do it).
func execWarden(args []string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("container: find the warden binary to run %q: %w", args[0], err)
	}
	err = syscall.Exec(self, append([]string{"warden"}, args...), os.Environ())
	return fmt.Errorf("container: run warden %s: %w", args[0], err)
}
