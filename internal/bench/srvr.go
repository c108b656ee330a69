package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// Asking ensemble members for their role with the srvr four-letter word,
// which Warden and ZooKeeper answer alike ("Mode: leader", "Mode:
// follower", ...; ZooKeeper needs 4lw.commands.whitelist to include it).

// fourLetterTimeout bounds one four-letter exchange.
const fourLetterTimeout = 2 * time.Second

// fourLetter sends word to addr and returns the whole answer (the server
// closes the connection after it).
func fourLetter(ctx context.Context, addr, word string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, fourLetterTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	if _, err := io.WriteString(nc, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(nc)
	return string(b), err
}

// srvrMode returns the role in a srvr answer: "leader", "follower",
// "observer", "standalone", ... or "" when the answer has no Mode line
// (the member is not serving: "This ZooKeeper instance is not currently
// serving requests").
func srvrMode(answer string) string {
	for line := range strings.SplitSeq(answer, "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "Mode:"); ok {
			return strings.TrimSpace(m)
		}
	}
	return ""
}

// memberMode asks addr for its role; "" when it does not answer or does
// not serve.
func memberMode(ctx context.Context, addr string) string {
	a, err := fourLetter(ctx, addr, "srvr")
	if err != nil {
		return ""
	}
	return srvrMode(a)
}

// pollEvery is how often the role of members is asked while waiting.
const pollEvery = 10 * time.Millisecond

// soleLeader returns the index of the only "leader" in modes, or -1 when
// there is none or more than one.
func soleLeader(modes []string) int {
	at := -1
	for i, m := range modes {
		if m == "leader" {
			if at >= 0 {
				return -1
			}
			at = i
		}
	}
	return at
}

// findLeader asks every member for srvr until exactly one says it leads,
// and returns that member's address. It gives up when ctx ends.
func findLeader(ctx context.Context, members []string) (string, error) {
	modes := make([]string, len(members))
	for {
		for i, m := range members {
			modes[i] = memberMode(ctx, m)
		}
		if i := soleLeader(modes); i >= 0 {
			return members[i], nil
		}
		if err := sleepCtx(ctx, pollEvery); err != nil {
			return "", fmt.Errorf("bench: no single leader among %v (srvr modes %q): %w", members, modes, err)
		}
	}
}

// waitMode asks addr for srvr until it answers with Mode: want. It gives
// up when ctx ends.
func waitMode(ctx context.Context, addr, want string) error {
	for {
		m := memberMode(ctx, addr)
		if m == want {
			return nil
		}
		if err := sleepCtx(ctx, pollEvery); err != nil {
			return fmt.Errorf("bench: %s did not become %s (last srvr mode %q): %w", addr, want, m, err)
		}
	}
}

// sleepCtx sleeps for d or until ctx ends, whichever is first, and
// returns ctx's error in the second case.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
