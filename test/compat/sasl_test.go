//go:build compat

package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// saslServerJAAS is the JAAS file both servers read (zoo.cfg java.security.auth.login.config,
// also a -D flag for ZooKeeper): two DIGEST-MD5 users, bob and super. No superUser is
// configured, so sasl:super does not gain the super scheme; ZooKeeper's sasl provider
// still lets the id "super" match every sasl ACL (and nothing else), which kazoo checks.
const saslServerJAAS = `Server {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_bob="bobsecret"
    user_super="adminsecret";
};
`

// saslClientJAAS is the Java client's login configuration, with the password as %s.
const saslClientJAAS = `Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="bob"
    password="%s";
};
`

// saslZkCliSteps are the zkCli.sh runs of TestSASL, in order, after the kazoo script has
// left /sasl-node (ACL sasl:bob ALL) behind. password is the Client section's password
// ("" = no JAAS file, no SASL).
var saslZkCliSteps = []struct {
	password string
	args     []string
}{
	{"bobsecret", []string{"whoami"}},
	{"bobsecret", []string{"getAcl", "/sasl-node"}},
	{"bobsecret", []string{"get", "/sasl-node"}},
	{"bobsecret", []string{"get", "-s", "/sasl-node"}},
	{"bobsecret", []string{"set", "/sasl-node", "fromjava"}},
	{"bobsecret", []string{"get", "/sasl-node"}},
	{"wrong", []string{"get", "/sasl-node"}},
	{"wrong", []string{"whoami"}},
	{"", []string{"get", "/sasl-node"}},
	{"", []string{"whoami"}},
}

// zkCliSASLNoise matches the session events of a SASL login; the Java client's event
// thread prints them, so where they land relative to the command's output varies.
var zkCliSASLNoise = []string{
	"WatchedEvent state:SaslAuthenticated",
	"WatchedEvent state:AuthFailed",
}

// TestSASL authenticates with SASL DIGEST-MD5 against the JAAS Server section: kazoo
// (pure-sasl) as bob, as another user and with bad credentials, then the Java client
// (zkCli.sh with a JAAS Client section) reading what kazoo wrote.
func TestSASL(t *testing.T) {
	t.Parallel()
	jaasDir := t.TempDir()
	serverJAAS := filepath.Join(jaasDir, "server-jaas.conf")
	if err := os.WriteFile(serverJAAS, []byte(saslServerJAAS), 0o644); err != nil {
		t.Fatal(err)
	}
	clientJAAS := map[string]string{} // password -> the Client section file using it
	for _, st := range saslZkCliSteps {
		if st.password == "" || clientJAAS[st.password] != "" {
			continue
		}
		f := filepath.Join(jaasDir, "client-"+st.password+".conf")
		if err := os.WriteFile(f, []byte(fmt.Sprintf(saslClientJAAS, st.password)), 0o644); err != nil {
			t.Fatal(err)
		}
		clientJAAS[st.password] = f
	}
	extra := map[string]string{
		"java.security.auth.login.config": serverJAAS,
		"authProvider.1":                  "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
	}
	differential(t, extra, func(t *testing.T, s *Server) string {
		var tr strings.Builder
		tr.WriteString(runScript(t, kazooDeadline, nil, "/usr/bin/python3", "sasl/kazoo_sasl.py", s.Addr))
		for _, st := range saslZkCliSteps {
			out, rc := runZkCliJAAS(t, s.Addr, clientJAAS[st.password], st.args...)
			fmt.Fprintf(&tr, "$ [password=%q] %s\n%src=%d\n", st.password, strings.Join(st.args, " "), out, rc)
		}
		return tr.String()
	})
}

// runZkCliJAAS runs `zkCli.sh -server addr args...` with the Java client's login
// configuration set to jaas ("" = none) and returns its output (noise lines dropped)
// and exit code. zkCli.sh passes $CLIENT_JVMFLAGS and $JVMFLAGS to the JVM.
func runZkCliJAAS(t *testing.T, addr, jaas string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zkCliDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCliPath, append([]string{"-server", addr}, args...)...)
	flags := "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData -Xshare:auto"
	if jaas != "" {
		flags += " -Djava.security.auth.login.config=" + jaas
	}
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS="+flags)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("zkCli.sh %v: no exit within %v; output:\n%s", args, zkCliDeadline, out.String())
	}
	rc := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("zkCli.sh %v: %v", args, err)
		}
		rc = ee.ExitCode()
	}
	var kept []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.TrimSpace(line) == "" || hasAnyPrefix(line, zkCliNoise) || hasAnyPrefix(line, zkCliSASLNoise) {
			continue
		}
		kept = append(kept, line+"\n")
	}
	return strings.Join(kept, ""), rc
}
