//go:build compat

package compat

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"
)

// kazooDeadline bounds one run of the kazoo scenario script.
const kazooDeadline = 90 * time.Second

// TestKazoo runs kazoo/scenario.py (Debian's kazoo under /usr/bin/python3, not the
// python3 first on PATH) against each server and compares the transcripts.
func TestKazoo(t *testing.T) {
	t.Parallel()
	extra := map[string]string{
		"extendedTypesEnabled":            "true",
		"znode.container.checkIntervalMs": "100",
	}
	differential(t, extra, func(t *testing.T, s *Server) string {
		return runScript(t, kazooDeadline, nil, "/usr/bin/python3", "kazoo/scenario.py", s.Addr)
	})
}

// runScript runs a client program to completion (bounded by deadline) with stdin and
// returns its stdout; stderr is logged when the test fails or the program exits non-zero.
func runScript(t *testing.T, deadline time.Duration, stdin []byte, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		t.Errorf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", name, args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
