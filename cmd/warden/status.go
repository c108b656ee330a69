package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/signal"
	"time"

	"github.com/wardenzk/warden/internal/status"
)

const statusDoc = `Asks every member of an ensemble, in parallel, for the four-letter words
srvr and mntr (mntr only where the whitelist allows it; srvr is enough),
and prints one row per member, in the order given: mode, last zxid, lag
behind the leader in transactions, connections and outstanding requests;
then the leader and whether a quorum of the members is serving. It works
against Warden and Apache ZooKeeper alike.

Exit status: 0 when every member is serving and exactly one is leader (or
the only member is standalone); 1 otherwise; 2 for a usage error.
`

// statusFlags is `warden status`. It exits with 1 when the ensemble is
// not healthy (status.Report.OK), after printing the report.
func statusFlags(fs *flag.FlagSet) func(args []string) error {
	timeout := fs.Duration("timeout", status.DefaultTimeout, "time each member has to answer (srvr and mntr together)")
	jsonOut := fs.Bool("json", false, "print the report as one line of JSON")
	return func(args []string) error { return runStatus(args, *timeout, *jsonOut) }
}

func runStatus(args []string, timeout time.Duration, jsonOut bool) error {
	members, err := status.ParseMembers(args)
	if err == nil && timeout <= 0 {
		err = errors.New("status: -timeout must be positive")
	}
	if err != nil {
		return badUsage("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	found, err := status.Check(ctx, status.Config{Members: members, Timeout: timeout})
	if err != nil {
		return err
	}
	report := status.Summarize(found)
	write := status.WriteTable
	if jsonOut {
		write = status.WriteJSON
	}
	if err := write(os.Stdout, report); err != nil {
		return err
	}
	if !report.OK {
		return &exitError{1}
	}
	return nil
}
