//go:build compat

package compat

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// recipeDeadline bounds one recipe program run (a JVM or a Python process). The
// programs carry their own shorter timeouts; this is the backstop for a hung client.
const recipeDeadline = 90 * time.Second

// updateGolden, when the environment sets WARDEN_COMPAT_UPDATE_GOLDEN=1, makes recipe
// tests rewrite their golden transcripts from the Apache ZooKeeper run.
var updateGolden = os.Getenv("WARDEN_COMPAT_UPDATE_GOLDEN") == "1"

// runRecipeProgram runs name args (killed after recipeDeadline) and returns its standard
// output. A non-zero exit fails the test with the program's output and the tail of its
// standard error; the partial output is still returned for the transcript.
func runRecipeProgram(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), recipeDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("%s %s: killed after %v", filepath.Base(name), strings.Join(args, " "), recipeDeadline)
	} else if err != nil {
		t.Errorf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	if t.Failed() {
		e := stderr.Bytes()
		const max = 16 << 10
		if len(e) > max {
			e = e[len(e)-max:]
		}
		t.Logf("stdout:\n%s\nstderr (tail):\n%s", stdout.String(), e)
	}
	return stdout.String()
}

// checkGolden compares a normalised scenario transcript with the golden file path, the
// expected behaviour recorded from Apache ZooKeeper. With WARDEN_COMPAT_UPDATE_GOLDEN=1
// a ZooKeeper run rewrites the file instead.
func checkGolden(t *testing.T, s *Server, path, transcript string) {
	t.Helper()
	got := normalize(transcript)
	if updateGolden && s.Kind == "zookeeper" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no golden transcript %s; record it with WARDEN_COMPAT_UPDATE_GOLDEN=1 WARDEN_COMPAT_ONLY=zookeeper", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("transcript differs from %s:\n%s", path, unifiedDiff("golden", s.Kind, string(want), got))
	}
}
