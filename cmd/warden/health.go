package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/wardenzk/warden/internal/status"
)

const healthUsage = `Usage: warden health [-timeout d] [host:port]

Asks one server (default 127.0.0.1:2181) for srvr and exits 0 when it is
serving clients as standalone, leader, follower or observer, printing one
line such as "127.0.0.1:2181: follower, zxid 0x100000003". Otherwise it
prints the reason on one line to stderr and exits 1: down (no answer), not
serving (electing, syncing or without a quorum) or read-only (cut off from
its quorum). It is the HEALTHCHECK of Warden's Docker image and works
against Apache ZooKeeper too; srvr needs no 4lw.commands.whitelist entry
on Warden, and is ZooKeeper's default whitelist.

Exit status: 0 healthy, 1 unhealthy, 2 usage error.

Flags:
`

// runHealth is `warden health`, the image's HEALTHCHECK.
func runHealth(args []string) error {
	fs := flag.NewFlagSet("warden health", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), healthUsage); fs.PrintDefaults() }
	timeout := fs.Duration("timeout", status.DefaultTimeout, "time the server has to answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		os.Exit(2)
	}
	target := []string{"127.0.0.1:2181"}
	if fs.NArg() > 0 {
		target = fs.Args()
	}
	members, err := status.ParseMembers(target)
	if err == nil && len(members) != 1 {
		err = fmt.Errorf("health: asks one server, got %d (use 'warden status' for an ensemble)", len(members))
	}
	if err == nil && *timeout <= 0 {
		err = errors.New("health: -timeout must be positive")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "warden: %v\n", err)
		fs.Usage()
		os.Exit(2)
	}
	found, err := status.Check(context.Background(), status.Config{Members: members, Timeout: *timeout})
	if err != nil {
		return err
	}
	line, healthy := healthLine(status.Summarize(found).Rows[0])
	if !healthy {
		fmt.Fprintln(os.Stderr, "unhealthy: "+line)
		os.Exit(1)
	}
	fmt.Println(line)
	return nil
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
