package netns

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

var (
	// ErrNotRoot reports that the process is not running as root, which
	// creating namespaces, links and mounts requires.
	ErrNotRoot = errors.New("netns: must run as root (network namespaces, links and mounts need CAP_NET_ADMIN and CAP_SYS_ADMIN)")
	// ErrMissingCommand reports that a command the package runs is not in
	// PATH; the error names the command and the package that provides it.
	ErrMissingCommand = errors.New("netns: required command not found")
)

// commandTimeout bounds every command the package runs.
const commandTimeout = 10 * time.Second

// requiredCommands maps each command the package runs to the Debian
// package that provides it.
var requiredCommands = []struct{ name, pkg string }{
	{"ip", "iproute2"},
	{"nft", "nftables"},
}

// checkPrereqs reports whether this process can build a network: it must
// be root and find every required command.
func checkPrereqs() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	for _, c := range requiredCommands {
		if _, err := exec.LookPath(c.name); err != nil {
			return fmt.Errorf("%w: %q is not in PATH; install it (apt-get install %s)", ErrMissingCommand, c.name, c.pkg)
		}
	}
	return nil
}

// run runs name with args, feeding stdin, bounded by commandTimeout. It
// returns the standard output; an error includes the command line and its
// standard error.
func run(stdin string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second // a loaded machine can be slow to close the pipes
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v: %w", commandTimeout, err)
		}
		return stdout.String(), fmt.Errorf("netns: %s %s: %w: %s",
			name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// ip runs the ip command.
func ip(args ...string) (string, error) {
	return run("", "ip", args...)
}

// ipIgnoring runs the ip command and treats a failure whose standard
// error contains one of the given phrases (e.g. "Cannot find device") as
// success: used by deletions, which must be idempotent.
func ipIgnoring(phrases []string, args ...string) error {
	_, err := ip(args...)
	if err == nil {
		return nil
	}
	for _, p := range phrases {
		if strings.Contains(err.Error(), p) {
			return nil
		}
	}
	return err
}
