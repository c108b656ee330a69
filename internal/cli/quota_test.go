package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
)

// TestQuotaCommands runs setquota, listquota and delquota and compares
// output and exit status with zkCli.sh 3.8's (recorded against Apache
// ZooKeeper 3.8.0 with zookeeper.enforceQuota=true). Output and errors
// share one buffer, in the order written, as in a terminal.
func TestQuotaCommands(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.EnforceQuota = true }))
	out := newWaitBuffer()
	sh := New(Config{Servers: srv.Addr().String(), Timeout: 10 * time.Second, Out: out, Err: out, Version: "test"})
	if err := sh.Connect(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	const group = "[-n num soft quota, -b bytes soft quota, -N num hard quota, -B bytes hard quota]"
	steps := []struct {
		line string
		want string
		code int
	}{
		// Argument rules (commons-cli's).
		{"setquota /q", "org.apache.commons.cli.MissingOptionException: Missing required option: " + group + "\n", 1},
		{"setquota -n 2", "setquota -n|-b|-N|-B val path\n", 1},
		{"setquota -n", "org.apache.commons.cli.MissingArgumentException: Missing argument for option: n\n", 1},
		{"setquota -n -b 5 /q", "org.apache.commons.cli.MissingArgumentException: Missing argument for option: n\n", 1},
		{"setquota -b 10 -B 20 /q", "org.apache.commons.cli.AlreadySelectedException: The option 'B' was specified but an option from this group has already been selected: 'b'\n", 1},
		{"setquota -x 2 /q", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -x\n", 1},
		{"setquota -N 3 -N /q", "setquota -n|-b|-N|-B val path\n", 1},
		{"setquota -- -b 3 /q", "org.apache.commons.cli.MissingOptionException: Missing required option: " + group + "\n", 1},
		{"listquota", "listquota path\n", 1},
		{"listquota -n /q", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -n\n", 1},
		{"delquota", "delquota [-n|-b|-N|-B] path\n", 1},
		{"delquota -nN /q", "org.apache.commons.cli.AlreadySelectedException: The option 'N' was specified but an option from this group has already been selected: 'n'\n", 1},
		{"delquota -n=3 /q", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -n=3\n", 1},
		// Option values: messages, exit status 0.
		{"setquota -n 0 /q", "the num quota must be greater than zero\n", 0},
		{"setquota -N 0 /q", "the num quota must be greater than zero\n", 0},
		{"setquota -n x /q", "NumberFormatException happens when parsing the option value\n", 0},
		{"setquota -n -x /q", "NumberFormatException happens when parsing the option value\n", 0},
		{"setquota -n 99999999999 /q", "NumberFormatException happens when parsing the option value\n", 0},
		{"setquota -b -1 /q", "the bytes quota must be greater than or equal to zero\n", 0},
		{"setquota -B -5 /q", "the bytes quota must be greater than or equal to zero\n", 0},
		{"setquota -n 2 /zookeeper/quota/x", "cannot set a quota under the path: /zookeeper/quota\n", 0},
		{"setquota -n 2 /zookeeper/quotax", "cannot set a quota under the path: /zookeeper/quota\n", 0},
		// Paths.
		{"setquota -n 2 /nothing", "/nothing does not exist.\n", 1},
		{"setquota -n 2 q", "Path must start with / character\n", 1},
		{"setquota -n 2 /q/", "Path must not end with / character\n", 1},
		{"setquota -n 1 /a//b", "Invalid path string \"/a//b\" caused by empty node name specified @3\n", 1},
		{"setquota -n 2 /", "Path must not end with / character\n", 1},
		{"listquota /a//b", "absolute path is /zookeeper/quota/a//b/zookeeper_limits\nInvalid path string \"/zookeeper/quota/a//b/zookeeper_limits\" caused by empty node name specified @19\n", 1},
		{"delquota /a//b", "Invalid path string \"/zookeeper/quota/a//b/zookeeper_limits\" caused by empty node name specified @19\n", 1},
		{"listquota /nothing", "absolute path is /zookeeper/quota/nothing/zookeeper_limits\nquota for /nothing does not exist.\n", 0},
		{"listquota r", "absolute path is /zookeeper/quotar/zookeeper_limits\nquota for r does not exist.\n", 0},
		{"delquota /nothing", "Quota does not exist for /nothing\n", 0},
		{"delquota -b r", "Quota does not exist for r\n", 0},
		// Setting, updating and listing.
		{"create /q x", "Created /q\n", 0},
		{"setquota -n 2 /q", "", 0},
		{"listquota /q", "absolute path is /zookeeper/quota/q/zookeeper_limits\nOutput quota for /q count=2,bytes=-1=;byteHardLimit=-1;countHardLimit=-1\nOutput stat for /q count=1,bytes=1\n", 0},
		{"setquota -N 3 /q", "", 0},
		{"setquota -n2 /q", "", 0},
		{"setquota /q -n 5", "", 0},
		{"listquota /q /x", "absolute path is /zookeeper/quota/q/zookeeper_limits\nOutput quota for /q count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=3\nOutput stat for /q count=1,bytes=1\n", 0},
		{"create /q/a aa", "Created /q/a\n", 0},
		{"create /q/a/b", "Created /q/a/b\n", 0},
		{"setquota -n 2 /q/a", "/q/a has a parent /q which has a quota\n", 1},
		{"setquota -n 2 -n 3 /q", "[Warning]: the count quota you create is less than the existing count:3\n", 0},
		{"listquota /q", "absolute path is /zookeeper/quota/q/zookeeper_limits\nOutput quota for /q count=2,bytes=-1=;byteHardLimit=-1;countHardLimit=3\nOutput stat for /q count=3,bytes=3\n", 0},
		// Hard limits, enforced.
		{"create /q/c", "Quota has exceeded : /q/c\n", 1},
		{"setquota -B 4 /q", "[Warning]: the count quota you create is less than the existing count:3\n", 0},
		{"set /q/a abc", "", 0},
		{"set /q/a abcd", "Quota has exceeded : /q/a\n", 1},
		{"setquota -N 2 /q", "[Warning]: the count quota you create is less than the existing count:3\n", 0},
		// Nested quotas are refused from either side.
		{"create /r", "Created /r\n", 0},
		{"create /r/s", "Created /r/s\n", 0},
		{"create /r/s/t", "Created /r/s/t\n", 0},
		{"setquota -b 5 /r/s/t", "", 0},
		{"setquota -n 3 /r", "/r has a child /r/s/t which has a quota\n", 1},
		{"setquota -n 3 /r/s", "/r/s has a child /r/s/t which has a quota\n", 1},
		{"listquota /r", "absolute path is /zookeeper/quota/r/zookeeper_limits\nquota for /r does not exist.\n", 0},
		{"delquota /r", "Quota does not exist for /r\n", 0},
		// Deleting limits, then the quota.
		{"delquota -n /q", "", 0},
		{"delquota -N /q", "", 0},
		{"listquota /q", "absolute path is /zookeeper/quota/q/zookeeper_limits\nOutput quota for /q count=-1,bytes=-1=;byteHardLimit=4;countHardLimit=-1\nOutput stat for /q count=3,bytes=4\n", 0},
		{"delquota /r/s/t", "", 0},
		{"ls -R /zookeeper/quota", "/zookeeper/quota\n/zookeeper/quota/q\n/zookeeper/quota/q/zookeeper_limits\n/zookeeper/quota/q/zookeeper_stats\n", 0},
		{"delquota /q", "", 0},
		{"ls -R /zookeeper/quota", "/zookeeper/quota\n", 0},
		{"create /q/c", "Created /q/c\n", 0},
		{"delquota /q", "Quota does not exist for /q\n", 0},
		// Quota text StatsTrack cannot read: zkCli.sh stops with a stack
		// trace; warden cli says what is wrong, and delquota removes it.
		{"create /m", "Created /m\n", 0},
		{"setquota -n 3 /m", "", 0},
		{"set /zookeeper/quota/m/zookeeper_limits count", "", 0},
		{"listquota /m", "absolute path is /zookeeper/quota/m/zookeeper_limits\ncannot read the quota text of /zookeeper/quota/m/zookeeper_limits (quota: text is not key=value pairs separated by ',' or ';': \"count\" has no value); fix it with set, or remove the quota with delquota\n", 1},
		{"delquota -n /m", "cannot read the quota text of /zookeeper/quota/m/zookeeper_limits (quota: text is not key=value pairs separated by ',' or ';': \"count\" has no value); fix it with set, or remove the quota with delquota\n", 1},
		{"delquota /m", "", 0},
		{"listquota /m", "absolute path is /zookeeper/quota/m/zookeeper_limits\nquota for /m does not exist.\n", 0},
	}
	for _, st := range steps {
		err := sh.Exec(context.Background(), st.line)
		if got := out.take(); got != st.want {
			t.Errorf("%s: output\n%s\nwant\n%s", st.line, got, st.want)
		}
		if code := exitStatus(err); code != st.code {
			t.Errorf("%s: status %d, want %d", st.line, code, st.code)
		}
	}
}

// TestQuotaHelp checks that the usage summary (zkCli.sh's, printed for an
// unknown command such as help) lists the quota commands.
func TestQuotaHelp(t *testing.T) {
	sh := New(Config{Out: newWaitBuffer()})
	var b strings.Builder
	sh.usage(&b)
	for _, line := range []string{"\tdelquota [-n|-b|-N|-B] path\n", "\tlistquota path\n", "\tsetquota -n|-b|-N|-B val path\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("usage lacks %q:\n%s", line, b.String())
		}
	}
}
