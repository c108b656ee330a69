//go:build compat

package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Real clients' own reconfig tests, unchanged, under their own test harnesses, with
// realclients/zkshim.sh standing in for the ZooKeeper those harnesses start:
//
//   - go-zookeeper (the module version in go.mod, its source from the module cache):
//     TestIntegration_IncrementalReconfig and TestIntegration_Reconfig. Its harness runs
//     $ZOOKEEPER_BIN_PATH/zkServer.sh start-foreground zoo.cfg. Against Warden only:
//     the harness waits for FLWSrvr, which cannot parse Debian's srvr version line
//     (see reference-tools.md), so it never starts a Debian ZooKeeper unchanged.
//   - kazoo (Debian's python3-kazoo, which ships its tests): TestReconfig of
//     kazoo/tests/test_client.py, through realclients/kazoo_reconfig.py. Its harness
//     runs "java ... QuorumPeerMain zoo.cfg": the real java for ZooKeeper, zkshim.sh
//     first on PATH as "java" for Warden.

// realClientDeadline bounds one run of a client's test suite (and the servers its
// harness starts) including go test's compile of the copied module.
const realClientDeadline = 90 * time.Second

// TestRealClientGoZKReconfig runs go-zookeeper's reconfig integration tests against
// Warden ensembles started by go-zookeeper's own harness.
func TestRealClientGoZKReconfig(t *testing.T) {
	bin, err := buildWarden()
	if err != nil {
		t.Fatalf("warden binary: %v", err)
	}
	src := goModuleDir(t, "github.com/go-zookeeper/zk")
	dir := t.TempDir()
	mod := filepath.Join(dir, "zk")
	// A writable copy: go test writes nothing into the module, but the module cache is
	// read-only and t.TempDir's cleanup must be able to remove it.
	if out, err := exec.Command("cp", "-r", src, mod).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", src, err, out)
	}
	if out, err := exec.Command("chmod", "-R", "u+w", mod).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	binDir := shimDir(t, "zkServer.sh")
	for _, name := range []string{"TestIntegration_IncrementalReconfig", "TestIntegration_Reconfig"} {
		t.Run(name, func(t *testing.T) {
			out := runGroup(t, realClientDeadline, mod, []string{
				"WARDEN_BIN=" + bin,
				"ZOOKEEPER_BIN_PATH=" + binDir,
				"ZK_VERSION=3.8.0", // requireMinimumZkVersion skips the tests without it
			}, "go", "test", "-count=1", "-v", "-run", "^"+name+"$", ".")
			if !strings.Contains(out, "--- PASS: "+name+" ") || strings.Contains(out, "--- SKIP") {
				t.Errorf("go-zookeeper's %s did not pass against Warden:\n%s", name, out)
			}
		})
	}
}

// TestRealClientKazooReconfig runs kazoo's TestReconfig (add and remove an observer,
// from_config in the future -> BadVersionError, bad input -> BadArgumentsError, no super
// auth -> NoAuthError) against a ZooKeeper and a Warden ensemble started by kazoo's own
// harness.
func TestRealClientKazooReconfig(t *testing.T) {
	if _, err := os.Stat(debianPython); err != nil {
		t.Skipf("%s not installed", debianPython)
	}
	for _, kind := range []string{"zookeeper", "warden"} {
		t.Run(kind, func(t *testing.T) {
			env := []string{
				"ZOOKEEPER_CLASSPATH=" + javaClasspath(),
				"ZOOKEEPER_VERSION=3.8.0",
				"ZOOKEEPER_PORT_OFFSET=" + fmt.Sprint(kazooPortOffset(t)),
				"TMPDIR=" + t.TempDir(), // the harness's server directories
			}
			if kind == "warden" {
				bin, err := buildWarden()
				if err != nil {
					t.Fatalf("warden binary: %v", err)
				}
				env = append(env, "WARDEN_BIN="+bin, "PATH="+shimDir(t, "java")+":"+os.Getenv("PATH"))
			}
			out := runGroup(t, realClientDeadline, "realclients", env, debianPython, "kazoo_reconfig.py")
			results := regexp.MustCompile(`(?m)^(test_\w+) \(.*\) \.\.\. (.*)$`).FindAllStringSubmatch(out, -1)
			if len(results) != 3 {
				t.Fatalf("kazoo's TestReconfig ran %d tests, want 3:\n%s", len(results), out)
			}
			for _, r := range results {
				if r[2] != "ok" {
					t.Errorf("kazoo %s against %s: %s", r[1], kind, r[2])
				}
			}
		})
	}
}

// goModuleDir returns the module cache directory of a module in go.mod.
func goModuleDir(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", path)
	cmd.Dir = repoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", path, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", path, err, out)
	}
	return m.Dir
}

// shimDir returns a directory holding realclients/zkshim.sh under the given name.
func shimDir(t *testing.T, name string) string {
	t.Helper()
	shim, err := filepath.Abs(filepath.Join("realclients", "zkshim.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(shim, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kazooPortOffset returns a base port for kazoo's harness, which gives member i
// (0..2) the ports base+10i .. base+10i+3: a base whose 30 ports are free now.
func kazooPortOffset(t *testing.T) int {
	t.Helper()
	for tries := 0; tries < 50; tries++ {
		base := freePort(t)
		if base > 65535-30 {
			continue
		}
		free := true
		for p := base; p < base+30 && free; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				free = false
				continue
			}
			l.Close()
		}
		if free {
			return base
		}
	}
	t.Fatal("no 30 consecutive free ports")
	return 0
}

// runGroup runs a client's test suite in dir, in a process group of its own that also
// holds the servers its harness starts, and returns its standard output (standard error,
// where the servers log, is logged when the test fails). The whole group is killed at
// the deadline and when the run ends; a non-zero exit is logged (the caller asserts on
// the output).
func runGroup(t *testing.T, deadline time.Duration, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		// Anything the harness left behind (it stops its servers itself).
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	t.Logf("%s %s: %v after %v", name, strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Errorf("%s did not finish within %v", name, deadline)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s's standard error:\n%s", name, stderr.String())
		}
	})
	return out.String()
}
