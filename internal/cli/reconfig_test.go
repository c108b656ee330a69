package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestReconfigArguments checks reconfig's option rules and messages
// (zkCli.sh 3.8's ReconfigCommand) and, for accepted lines, what reaches
// the server: the in-process server runs with reconfigEnabled=false (the
// default), so a reconfig that gets that far is answered as ZooKeeper
// answers it then.
func TestReconfigArguments(t *testing.T) {
	sh, out, _ := startShell(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "dyn.cfg")
	if err := os.WriteFile(good, []byte("server.1=127.0.0.1:2888:3888:participant;2181\nserver.2=127.0.0.2:2888:3888;2181\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.cfg")
	if err := os.WriteFile(bad, []byte("server.1=nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.cfg")
	usage := "reconfig " + commands["reconfig"].usage + "\n"
	sent := "KeeperErrorCode = Reconfig is disabled\n"
	steps := []struct{ line, want string }{
		{"reconfig", usage},
		{"reconfig -s", usage},
		{"reconfig -v 1", usage},
		{"reconfig -add server.4=h:1:2;3 -v xyz", "-v must be followed by a long (configuration version)\n"},
		{"reconfig -add server.4=h:1:2;3 -v 0x10", "-v must be followed by a long (configuration version)\n"},
		{"reconfig -members server.1=h:1:2;3 -remove 2", "Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)\n"},
		{"reconfig -file " + good + " -add server.4=h:1:2;3", "Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)\n"},
		{"reconfig -file " + good + " -members server.1=h:1:2;3", "Can't use -file and -members together (conflicting non-incremental modes)\n"},
		{"reconfig -file " + missing, "Error processing " + missing + missing + " (No such file or directory)\n"},
		{"reconfig -file " + bad, "Error processing " + bad + "configuration line \"server.1=nope\": \"nope\": want host:port\n"},
		{"reconfig -add server.4=h:1:2;3", sent},
		{"reconfig -remove 3 -v 100000000", sent},
		{"reconfig -s -add server.4=h:1:2;3 -remove 2", sent},
		{"reconfig -members server.1=h:1:2;3,server.2=i:1:2;3", sent},
		{"reconfig -file " + good, sent},
		{"reconfig -x", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -x\n"},
	}
	for _, st := range steps {
		sh.Exec(context.Background(), st.line)
		if got := out.take(); got != st.want {
			t.Errorf("%s:\n got %q\nwant %q", st.line, got, st.want)
		}
	}
}

// TestParseReconfig checks what each accepted form sends.
func TestParseReconfig(t *testing.T) {
	cases := []struct {
		line string
		want reconfigArgs
	}{
		{"reconfig -add SERVER.4=H:1:2;3", reconfigArgs{joining: "server.4=h:1:2;3", hasJoining: true, version: -1}},
		{"reconfig -remove 2,3 -v ff", reconfigArgs{leaving: "2,3", hasLeaving: true, version: 255}},
		{"reconfig -add a -remove 1", reconfigArgs{joining: "a", hasJoining: true, leaving: "1", hasLeaving: true, version: -1}},
		{"reconfig -members server.1=h:1:2;3", reconfigArgs{members: "server.1=h:1:2;3", hasMembers: true, version: -1}},
	}
	for _, tc := range cases {
		argv := splitLine(tc.line)
		inv, err := parseArgs(commands["reconfig"], argv[1:])
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		got, err := parseReconfig(inv)
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}
