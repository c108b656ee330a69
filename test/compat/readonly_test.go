//go:build compat

package compat

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// readOnlyDeadline bounds how long a member cut off from its quorum takes to serve
// read-only clients: an election timeout, then ZooKeeper's 2 s grace.
const readOnlyDeadline = 20 * time.Second

// TestEnsembleReadOnlyMode kills two members of a 3-member ensemble run with
// readonlymode.enabled=true (and localSessionsEnabled=true, see readOnlyScenario) and
// compares, between ZooKeeper and Warden, what the
// survivor shows: isro, srvr and mntr, kazoo with read_only=True (reads, NOTREADONLY
// writes and sync), kazoo without it (refused), and the Java client (zkCli.sh -r). Then
// the two come back and the survivor serves read-write clients again.
func TestEnsembleReadOnlyMode(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	var names []string
	for i, kind := range serverKinds() {
		name := kind
		if i > 0 && kind == serverKinds()[0] {
			name = kind + "-peer"
		}
		names = append(names, name)
		t.Run(name, func(t *testing.T) {
			tr := readOnlyScenario(t, kind)
			if !t.Failed() {
				got[name] = normalize(tr)
			} else {
				t.Logf("transcript so far:\n%s", tr)
			}
		})
	}
	if len(got) != len(names) {
		t.Fatal("the scenario failed on a server; transcripts not compared")
	}
	for _, n := range names[1:] {
		if got[n] != got[names[0]] {
			t.Errorf("transcripts differ:\n%s", unifiedDiff(names[0], n, got[names[0]], got[n]))
		}
	}
	if len(names) == 1 {
		t.Logf("only %s ran; transcript:\n%s", names[0], got[names[0]])
	}
}

func readOnlyScenario(t *testing.T, kind string) string {
	// ZooKeeper's read-only server creates sessions only when they are local
	// (localSessionsEnabled): without it, its ConnectResponse is a NOTREADONLY reply
	// header that no client can read. Warden serves read-only clients either way.
	e := startEnsembleWith(t, kind, ensembleOptions{extra: map[string]string{"readonlymode.enabled": "true", "localSessionsEnabled": "true"}})
	var tr strings.Builder
	survivor := e.Members[0]
	kazoo := func(mode string) {
		tr.WriteString(runScript(t, kazooDeadline, nil, "/usr/bin/python3", "readonly/kazoo_ro.py", mode, survivor.Addr))
	}
	kazoo("setup")
	fmt.Fprintf(&tr, "isro while connected: %s\n", isro(survivor))
	for _, m := range e.Members[1:] {
		e.Kill(t, m)
	}
	end := time.Now().Add(readOnlyDeadline)
	for isro(survivor) != "ro" {
		if time.Now().After(end) {
			t.Fatalf("member %d: isro %q, not ro, %v after its quorum went away", survivor.ID, isro(survivor), readOnlyDeadline)
		}
		time.Sleep(pollInterval)
	}
	fmt.Fprintf(&tr, "isro cut off: %s\n", isro(survivor))
	srvr, _ := fourLetterWord(survivor.Addr, "srvr", srvrTimeout)
	for _, line := range strings.Split(srvr, "\n") {
		if strings.HasPrefix(line, "Mode:") || strings.Contains(line, "READ-ONLY") {
			fmt.Fprintf(&tr, "srvr: %s\n", line)
		}
	}
	mntr, _ := fourLetterWord(survivor.Addr, "mntr", srvrTimeout)
	for _, line := range strings.Split(mntr, "\n") {
		if strings.HasPrefix(line, "zk_server_state") {
			fmt.Fprintf(&tr, "mntr: %s\n", line)
		}
	}
	kazoo("ro")
	kazoo("rw")
	for _, args := range [][]string{{"-r", "get", "/ro"}, {"-r", "create", "/java", "x"}, {"-r", "sync", "/ro"}} {
		out, rc := runZkCli(t, survivor.Addr, args...)
		fmt.Fprintf(&tr, "$ zkCli %s\n%src=%d\n", strings.Join(args, " "), out, rc)
	}
	// The quorum comes back: the survivor serves read-write clients again.
	e.Heal(t)
	fmt.Fprintf(&tr, "isro healed: %s\n", isro(survivor))
	kazoo("rw")
	return tr.String()
}

// isro returns m's answer to isro ("" when it does not answer).
func isro(m *Member) string {
	out, _ := fourLetterWord(m.Addr, "isro", srvrTimeout)
	return strings.TrimSpace(out)
}
