//go:build compat

package auth

import (
	"bufio"
	"encoding/hex"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// pureSASLClient drives pure-sasl's DIGEST-MD5 client (the library kazoo
// uses) the way kazoo's connection.py does: process(None) for the first
// token, then process(challenge) until complete. Tokens travel as hex lines
// on stdin/stdout; "COMPLETE" reports success, "ERROR <msg>" failure.
const pureSASLClient = `
import sys, binascii
from puresasl.client import SASLClient
c = SASLClient("zk-sasl-md5", "zookeeper", mechanism="DIGEST-MD5",
               username=sys.argv[1], password=sys.argv[2])
challenge = None
for _ in range(4):
    if c.complete:
        break
    try:
        resp = c.process(challenge=challenge)
    except Exception as e:
        print("ERROR " + str(e), flush=True)
        sys.exit(0)
    if c.complete and not resp:
        break
    print(binascii.hexlify(resp or b"").decode(), flush=True)
    line = sys.stdin.readline().strip()
    challenge = binascii.unhexlify(line)
print("COMPLETE" if c.complete else "INCOMPLETE", flush=True)
`

// runPureSASL authenticates user/password against s with pure-sasl and
// returns the client's verdict line.
func runPureSASL(t *testing.T, s *DigestMD5Server, user, password string) (string, error) {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", "-c", pureSASLClient, user, password)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting python3 (is python3-puresasl installed?): %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	out := bufio.NewReader(stdout)
	var serverErr error
	for range 4 {
		line, err := out.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				t.Fatalf("python client exited early (serverErr=%v)", serverErr)
			}
			t.Fatal(err)
		}
		line = strings.TrimSpace(line)
		if line == "COMPLETE" || line == "INCOMPLETE" || strings.HasPrefix(line, "ERROR") {
			return line, serverErr
		}
		token, err := hex.DecodeString(line)
		if err != nil {
			t.Fatalf("client sent %q: %v", line, err)
		}
		challenge, _, err := s.Step(token)
		if err != nil {
			// ZooKeeper closes the connection: end the client.
			return "", err
		}
		if _, err := io.WriteString(stdin, hex.EncodeToString(challenge)+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("exchange did not finish in 4 rounds")
	return "", nil
}

func TestPureSASLClient(t *testing.T) {
	users := map[string]string{"bob": "bobsecret", "super": "adminsecret"}
	t.Run("success", func(t *testing.T) {
		s := NewDigestMD5Server(users, SASLServerName)
		verdict, err := runPureSASL(t, s, "bob", "bobsecret")
		if err != nil || verdict != "COMPLETE" {
			t.Fatalf("verdict %q, server error %v", verdict, err)
		}
		if s.AuthorizationID() != "bob" {
			t.Errorf("AuthorizationID = %q", s.AuthorizationID())
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		s := NewDigestMD5Server(users, SASLServerName)
		_, err := runPureSASL(t, s, "bob", "wrong")
		if !errors.Is(err, ErrSASLAuthFailed) {
			t.Fatalf("server error %v, want ErrSASLAuthFailed", err)
		}
	})
	t.Run("unknown user", func(t *testing.T) {
		s := NewDigestMD5Server(users, SASLServerName)
		_, err := runPureSASL(t, s, "eve", "bobsecret")
		if !errors.Is(err, ErrSASLAuthFailed) {
			t.Fatalf("server error %v, want ErrSASLAuthFailed", err)
		}
	})
}
