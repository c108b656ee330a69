package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// cliBinary builds testdata/wardencli (cli.Main as a program) once.
func cliBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "wardencli-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "wardencli")
		out, err := exec.Command("go", "build", "-o", binPath, "./testdata/wardencli").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// TestOneShot runs single commands and a script through the binary and
// checks output and exit status (zkCli.sh's: 0, 1, 127).
func TestOneShot(t *testing.T) {
	bin := cliBinary(t)
	_, _, srv := startShell(t)
	addr := srv.Addr().String()
	script := filepath.Join(t.TempDir(), "script")
	os.WriteFile(script, []byte("# setup\ncreate /s1 one\ncreate /s1/k\nget /s1\ncreate /s1 dup\nget /never\n"), 0o644)
	cases := []struct {
		name           string
		args           []string
		stdin          string
		stdout, stderr string
		code           int
	}{
		{"create", []string{"create", "/one", "1"}, "", "Created /one\n", "", 0},
		{"ls", []string{"ls", "/"}, "", "[one, zookeeper]\n", "", 0},
		{"missing", []string{"get", "/nothing"}, "", "", "Node does not exist: /nothing\n", 1},
		{"usage", []string{"set", "/one"}, "", "", "set [-s] [-v version] path data\n", 1},
		{"unknown", []string{"nosuch"}, "", "", "Command not found: Command not found nosuch\n", 127},
		{"script", []string{"-c", script}, "", "Created /s1\nCreated /s1/k\none\n", "Node already exists: /s1\n", 1},
		{"stdin lines", nil, "get /one\nget /never\nls /s1\n", "1\n[k]\n", "Node does not exist: /never\n", 0},
		{"json", []string{"getAllChildrenNumber", "--json", "/s1"}, "", `{"count":1,"path":"/s1"}` + "\n", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append([]string{"-server", addr, "-timeout", "10s"}, tc.args...)...)
			cmd.Stdin = strings.NewReader(tc.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || stdout.String() != tc.stdout || !strings.HasSuffix(stderr.String(), tc.stderr) {
				t.Errorf("status %d stdout %q stderr %q; want %d %q %q", code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

// screen accumulates what the shell writes to the pseudo-terminal.
type screen struct {
	t *testing.T
	f *os.File
	w *waitBuffer
}

// waitPrompt waits for prompt number n.
func (s *screen) waitPrompt(n int) {
	s.t.Helper()
	s.w.waitFor(s.t, fmt.Sprintf("(CONNECTED) %d] ", n))
}

func (s *screen) typeText(text string) {
	s.t.Helper()
	if _, err := s.f.WriteString(text); err != nil {
		s.t.Fatal(err)
	}
}

// TestInteractive drives the shell through a pseudo-terminal: prompt,
// commands, completion of commands and paths, history recall and the
// history file, watch events while the prompt waits, quit.
func TestInteractive(t *testing.T) {
	bin := cliBinary(t)
	_, _, srv := startShell(t)
	home := t.TempDir()
	// The line editor asks the terminal for the cursor position on every
	// redraw; this pseudo-terminal has no emulator to answer, so turn the
	// probe off through the editor's ordinary inputrc ($INPUTRC).
	inputrc := filepath.Join(home, ".inputrc")
	if err := os.WriteFile(inputrc, []byte("set cursor-position-probe off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-server", srv.Addr().String())
	cmd.Env = append(os.Environ(), "HOME="+home, "INPUTRC="+inputrc, "TERM=xterm", "NO_COLOR=1")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		f.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	sc := &screen{t: t, f: f, w: newWaitBuffer()}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			sc.w.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	go func() { exited <- cmd.Wait() }()

	sc.waitPrompt(0)
	sc.typeText("create /alpha hello\r")
	sc.w.waitFor(t, "Created /alpha")
	sc.waitPrompt(1)
	sc.w.take()

	sc.typeText("whoa\t") // command completion
	sc.w.waitFor(t, "whoami")
	sc.typeText("\r")
	sc.w.waitFor(t, "Auth scheme: User")
	sc.waitPrompt(2)
	sc.w.take()

	sc.typeText("get /alp\t") // path completion, read from the server
	sc.w.waitFor(t, "/alpha")
	sc.typeText("\r")
	sc.w.waitFor(t, "hello")
	sc.waitPrompt(3)
	sc.w.take()

	sc.typeText("\x1b[A") // up: the previous line again
	sc.w.waitFor(t, "get /alpha")
	sc.typeText("\r")
	sc.w.waitFor(t, "hello")
	sc.waitPrompt(4)
	sc.w.take()

	// A watch event arrives while the prompt waits: printed above it.
	sc.typeText("get -w /alpha\r")
	sc.waitPrompt(5)
	other := New(Config{Servers: srv.Addr().String()})
	if err := other.Connect(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.Exec(context.Background(), "set /alpha changed")
	sc.w.waitFor(t, "WatchedEvent state:SyncConnected type:NodeDataChanged path:/alpha")
	sc.w.take()

	sc.typeText("quit\r")
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("shell exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("shell did not exit after quit")
	}
	hist, err := os.ReadFile(filepath.Join(home, ".warden_history"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"create /alpha hello", "whoami", "get /alpha", "quit"} {
		if !strings.Contains(string(hist), `"block":"`+line+`"`) {
			t.Errorf("history file lacks %q:\n%s", line, hist)
		}
	}
}
