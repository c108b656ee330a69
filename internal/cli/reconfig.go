package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/client"
)

// reconfigArgs is a parsed reconfig command line (zkCli.sh's
// ReconfigCommand): the joining servers, leaving ids or new members as the
// comma-separated strings sent to the server ("" and !has* when not
// given), and the configuration version (-1: any).
type reconfigArgs struct {
	joining, leaving, members          string
	hasJoining, hasLeaving, hasMembers bool
	version                            int64
}

// parseReconfig checks reconfig's options as zkCli.sh does, in its order
// and with its messages.
func parseReconfig(inv *invocation) (reconfigArgs, error) {
	var r reconfigArgs
	_, file := inv.flags["file"]
	_, members := inv.flags["members"]
	_, add := inv.flags["add"]
	_, remove := inv.flags["remove"]
	if !file && !members && !add && !remove {
		return r, errors.New("reconfig " + commands["reconfig"].usage)
	}
	r.version = -1
	if v, ok := inv.flags["v"]; ok {
		n, err := strconv.ParseInt(v, 16, 64) // hexadecimal, as the config's version= line
		if err != nil {
			return r, errors.New("-v must be followed by a long (configuration version)")
		}
		r.version = n
	}
	if (file || members) && (add || remove) {
		return r, errors.New("Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)")
	}
	if file && members {
		return r, errors.New("Can't use -file and -members together (conflicting non-incremental modes)")
	}
	// zkCli.sh lower-cases the server strings (host names, roles).
	if add {
		r.joining, r.hasJoining = strings.ToLower(inv.flags["add"]), true
	}
	if remove {
		r.leaving, r.hasLeaving = strings.ToLower(inv.flags["remove"]), true
	}
	if members {
		r.members, r.hasMembers = strings.ToLower(inv.flags["members"]), true
	}
	if file {
		m, err := membersFromFile(inv.flags["file"])
		if err != nil {
			return r, err
		}
		r.members, r.hasMembers = m, true
	}
	return r, nil
}

// membersFromFile reads a dynamic configuration file (server.N lines, as
// in zoo.cfg.dynamic) for -file and returns its server lines, newline
// separated. Like zkCli.sh it checks them before sending; the leader
// checks again.
func membersFromFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		// zkCli.sh's message: the path, then the path again with Java's reason.
		return "", fmt.Errorf("Error processing %s%s (%s)", path, path, javaIOReason(err))
	}
	cfg, err := client.ParseConfig(b)
	if err != nil {
		return "", fmt.Errorf("Error processing %s%s", path, strings.TrimPrefix(err.Error(), "client: "))
	}
	if len(cfg.Servers) == 0 {
		return "", fmt.Errorf("Error processing %s: no server.N lines", path)
	}
	var lines []string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "server.") {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n"), nil
}

// javaIOReason is the reason FileInputStream gives for err.
func javaIOReason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	}
	return err.Error()
}

func runReconfig(ctx context.Context, s *Shell, inv *invocation) error {
	r, err := parseReconfig(inv)
	if err != nil {
		return err
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	var data []byte
	var st client.Stat
	if r.hasMembers {
		data, st, err = s.Conn().Reconfig(octx, []string{r.members}, r.version)
	} else {
		var joining, leaving []string
		if r.hasJoining {
			joining = []string{r.joining}
		}
		if r.hasLeaving {
			leaving = []string{r.leaving}
		}
		data, st, err = s.Conn().IncrementalReconfig(octx, joining, leaving, r.version)
	}
	if err != nil {
		return opError(err, "")
	}
	var b strings.Builder
	b.WriteString("Committed new configuration:\n")
	b.Write(data)
	b.WriteByte('\n')
	if inv.has("s") {
		writeStat(&b, st)
	}
	_, err = fmt.Fprint(s.out(), b.String())
	return err
}
