package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/wardenzk/warden/internal/status"
)

const healthDoc = `Asks one server (default 127.0.0.1:2181) for srvr and exits 0 when it is
serving clients as standalone, leader, follower or observer, printing one
line such as "127.0.0.1:2181: follower, zxid 0x100000003". Otherwise it
prints the reason on one line to stderr and exits 1: down (no answer), not
serving (electing, syncing or without a quorum) or read-only (cut off from
its quorum). It is the HEALTHCHECK of Warden's Docker image and works
against Apache ZooKeeper too; srvr needs no 4lw.commands.whitelist entry
on Warden, and is ZooKeeper's default whitelist.

Exit status: 0 healthy, 1 unhealthy, 2 usage error.
`

// healthFlags is `warden health`, the image's HEALTHCHECK.
func healthFlags(fs *flag.FlagSet) func(args []string) error {
	timeout := fs.Duration("timeout", status.DefaultTimeout, "time the server has to answer")
	return func(args []string) error {
		target := []string{"127.0.0.1:2181"}
		if len(args) > 0 {
			target = args
		}
		members, err := status.ParseMembers(target)
		if err != nil {
			return badUsage("%v", err)
		}
		if len(members) != 1 {
			return badUsage("health asks one server, got %d (use 'warden status' for an ensemble)", len(members))
		}
		if *timeout <= 0 {
			return badUsage("-timeout must be positive")
		}
		found, err := status.Check(context.Background(), status.Config{Members: members, Timeout: *timeout})
		if err != nil {
			return err
		}
		line, healthy := healthLine(status.Summarize(found).Rows[0])
		if !healthy {
			return errors.New("unhealthy: " + line)
		}
		fmt.Println(line)
		return nil
	}
}

// healthLine is the one line `warden health` prints for a member, and
// whether the member is healthy: serving in a mode other than read-only.
func healthLine(r status.Row) (string, bool) {
	switch {
	case r.State == status.StateNotServing:
		return r.Addr + ": not serving requests (electing a leader, syncing, or no quorum)", false
	case r.State != status.StateServing:
		return r.Addr + ": " + r.ModeText(), false
	case r.Srvr.Mode == status.ModeReadOnly:
		return r.Addr + ": read-only (cut off from its quorum)", false
	}
	line := r.Addr + ": " + r.ModeText()
	if r.Srvr.HasZxid {
		line += ", zxid " + r.Srvr.Zxid.String()
	}
	return line, true
}
