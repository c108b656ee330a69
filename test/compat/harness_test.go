//go:build compat

package compat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenzk/warden/test/proc"
)

// Server is one running server under test: Apache ZooKeeper or Warden.
type Server struct {
	Kind       string // "zookeeper" or "warden"
	Addr       string // 127.0.0.1:port, the client port
	SecureAddr string // 127.0.0.1:port, the secureClientPort; "" unless extra asked for one
	Dir        string // the server's own directory: zoo.cfg, data/, server.log
	ConfigPath string // Dir/zoo.cfg
	LogPath    string // the server's stdout and stderr
}

// Bounds used by the harness. Java start-up is the slow case.
const (
	startDeadline = 60 * time.Second // until srvr answers with a Mode: line
	stopDeadline  = 10 * time.Second // SIGTERM grace before SIGKILL
	pollInterval  = 50 * time.Millisecond
)

// javaClasspath returns the ZooKeeper classpath followed by the named extra jars of
// /usr/share/java (names without ".jar", e.g. "curator-client", "guava").
func javaClasspath(extra ...string) string { return proc.ZooKeeperClasspath(extra...) }

// systemProperties maps zoo.cfg keys that ZooKeeper reads only as Java system properties (or
// reads too late or under another name) to the property name. startZooKeeper passes these as
// -D flags in addition to writing them into zoo.cfg, so one map configures both servers.
var systemProperties = map[string]string{
	"extendedTypesEnabled":                     "zookeeper.extendedTypesEnabled",
	"emulate353TTLNodes":                       "zookeeper.emulate353TTLNodes",
	"znode.container.checkIntervalMs":          "znode.container.checkIntervalMs",
	"znode.container.maxPerMinute":             "znode.container.maxPerMinute",
	"jute.maxbuffer":                           "jute.maxbuffer",
	"readonlymode.enabled":                     "readonlymode.enabled",
	"DigestAuthenticationProvider.superDigest": "zookeeper.DigestAuthenticationProvider.superDigest",
	"DigestAuthenticationProvider.digestAlg":   "zookeeper.DigestAuthenticationProvider.digestAlg",
	"java.security.auth.login.config":          "java.security.auth.login.config",
	"4lw.commands.whitelist":                   "zookeeper.4lw.commands.whitelist",
	"admin.enableServer":                       "zookeeper.admin.enableServer",
	"skipACL":                                  "zookeeper.skipACL",
	"enforceQuota":                             "zookeeper.enforceQuota",
	"enforce.auth.enabled":                     "zookeeper.enforce.auth.enabled",
	"enforce.auth.schemes":                     "zookeeper.enforce.auth.schemes",
	"sessionRequireClientSASLAuth":             "zookeeper.sessionRequireClientSASLAuth",
	"authProvider.1":                           "zookeeper.authProvider.1",
	"authProvider.sasl":                        "zookeeper.authProvider.sasl",
	"digest.enabled":                           "zookeeper.digest.enabled",
	"globalOutstandingLimit":                   "zookeeper.globalOutstandingLimit",
	"maxCnxns":                                 "zookeeper.maxCnxns",
	"DigestAuthenticationProvider.enabled":     "zookeeper.DigestAuthenticationProvider.enabled",
	"X509AuthenticationProvider.superUser":     "zookeeper.X509AuthenticationProvider.superUser",
}

// baseConfig is the zoo.cfg every server starts from; extra keys override it.
var baseConfig = map[string]string{
	"tickTime":               "2000",
	"4lw.commands.whitelist": "*",
	"admin.enableServer":     "false",
}

// freePort returns a TCP port that was free a moment ago (listen on :0, then close).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeConfig creates a fresh server directory with data/ and zoo.cfg (base + extra,
// sorted by key) and returns the half-built Server.
func writeConfig(t *testing.T, kind string, extra map[string]string) *Server {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	cfg := map[string]string{}
	for k, v := range baseConfig {
		cfg[k] = v
	}
	for k, v := range extra {
		cfg[k] = v
	}
	cfg["dataDir"] = data
	cfg["clientPort"] = fmt.Sprint(port)
	cfg["clientPortAddress"] = "127.0.0.1"
	// A secureClientPort key (any value) asks for a TLS port too, on a free port of its
	// own; the plaintext clientPort stays for the readiness check.
	secureAddr := ""
	if _, ok := cfg["secureClientPort"]; ok {
		sp := freePort(t)
		cfg["secureClientPort"] = fmt.Sprint(sp)
		cfg["secureClientPortAddress"] = "127.0.0.1"
		secureAddr = fmt.Sprintf("127.0.0.1:%d", sp)
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, cfg[k])
	}
	s := &Server{
		Kind:       kind,
		Addr:       fmt.Sprintf("127.0.0.1:%d", port),
		SecureAddr: secureAddr,
		Dir:        dir,
		ConfigPath: filepath.Join(dir, "zoo.cfg"),
		LogPath:    filepath.Join(dir, "server.log"),
	}
	if err := os.WriteFile(s.ConfigPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// startZooKeeper starts a standalone Apache ZooKeeper (QuorumPeerMain) with zoo.cfg =
// base config + extra; keys listed in systemProperties are also passed as -D flags.
// It returns once srvr reports a Mode; the server is stopped in t.Cleanup.
func startZooKeeper(t *testing.T, extra map[string]string) *Server {
	t.Helper()
	s := writeConfig(t, "zookeeper", extra)
	args := []string{"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.showDateTime=true", "-cp", javaClasspath()}
	merged := map[string]string{}
	for k, v := range baseConfig {
		merged[k] = v
	}
	for k, v := range extra {
		merged[k] = v
	}
	var props []string
	for k, v := range merged {
		if p, ok := systemProperties[k]; ok {
			props = append(props, "-D"+p+"="+v)
		}
	}
	sort.Strings(props)
	args = append(args, props...)
	args = append(args, "org.apache.zookeeper.server.quorum.QuorumPeerMain", s.ConfigPath)
	startProcess(t, s, "java", args...)
	return s
}

var (
	wardenOnce sync.Once
	wardenBin  string
	wardenErr  error
	wardenDir  string // temp dir holding the built binary; removed by TestMain
)

// buildWarden builds ./cmd/warden once per test run (or uses $WARDEN_COMPAT_BIN).
func buildWarden() (string, error) {
	wardenOnce.Do(func() {
		if bin := os.Getenv("WARDEN_COMPAT_BIN"); bin != "" {
			wardenBin = bin
			return
		}
		dir, err := os.MkdirTemp("", "warden-compat-bin-")
		if err != nil {
			wardenErr = err
			return
		}
		wardenDir = dir
		bin := filepath.Join(dir, "warden")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/warden")
		cmd.Dir = repoRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			wardenErr = fmt.Errorf("go build ./cmd/warden: %v\n%s", err, out)
			return
		}
		wardenBin = bin
	})
	return wardenBin, wardenErr
}

// repoRoot is the module root, two levels above this package's directory.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "../.."
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// startWarden builds (once) and starts `warden server zoo.cfg` with the same zoo.cfg
// startZooKeeper would write. It returns once srvr reports a Mode; stopped in t.Cleanup.
func startWarden(t *testing.T, extra map[string]string) *Server {
	t.Helper()
	bin, err := buildWarden()
	if err != nil {
		t.Fatalf("warden binary: %v", err)
	}
	s := writeConfig(t, "warden", extra)
	startProcess(t, s, bin, "server", s.ConfigPath)
	return s
}

// startProcess runs name args with output to s.LogPath, waits for readiness, and registers
// the stop (SIGTERM, then SIGKILL after stopDeadline) and the log dump on failure.
func startProcess(t *testing.T, s *Server, name string, args ...string) {
	t.Helper()
	logf, err := os.Create(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = s.Dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Pdeathsig: a test binary killed by -timeout must not leave servers behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", s.Kind, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		stopProcess(t, cmd, exited)
		if t.Failed() {
			dumpLog(t, s)
		}
	})
	deadline := time.Now().Add(startDeadline)
	for {
		select {
		case <-exited:
			t.Fatalf("%s exited before it was ready: %v", s.Kind, waitErr)
		default:
		}
		if out, err := fourLetterWord(s.Addr, "srvr", time.Second); err == nil && strings.Contains(out, "Mode:") &&
			secureListening(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s at %s not ready within %v", s.Kind, s.Addr, startDeadline)
		}
		select {
		case <-exited:
		case <-time.After(pollInterval):
		}
	}
}

// secureListening reports whether s's secureClientPort (if it has one) accepts
// connections. ZooKeeper binds it after the plaintext port already answers srvr.
func secureListening(s *Server) bool {
	if s.SecureAddr == "" {
		return true
	}
	c, err := net.DialTimeout("tcp", s.SecureAddr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// stopProcess sends SIGTERM to the process group, and SIGKILL if it is still running
// after stopDeadline.
func stopProcess(t *testing.T, cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	pgid := -cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(stopDeadline):
	}
	t.Logf("pid %d ignored SIGTERM for %v; killing", cmd.Process.Pid, stopDeadline)
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(stopDeadline):
		t.Errorf("pid %d survived SIGKILL", cmd.Process.Pid)
	}
}

// dumpLog prints the tail of the server's log into the test output.
func dumpLog(t *testing.T, s *Server) {
	b, err := os.ReadFile(s.LogPath)
	if err != nil {
		t.Logf("%s log: %v", s.Kind, err)
		return
	}
	const max = 64 << 10
	if len(b) > max {
		b = b[len(b)-max:]
	}
	t.Logf("---- %s log (%s), last %d bytes ----\n%s", s.Kind, s.LogPath, len(b), b)
}

// fourLetterWord sends a 4lw command and returns everything the server wrote before
// closing the connection.
func fourLetterWord(addr, cmd string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if err != nil && !errors.Is(err, net.ErrClosed) && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

// TestMain removes the Warden binary built for this run.
func TestMain(m *testing.M) {
	code := m.Run()
	if wardenDir != "" {
		os.RemoveAll(wardenDir)
	}
	os.Exit(code)
}

// serverKinds lists the server kinds a differential test compares, in comparison
// order: ZooKeeper and Warden. WARDEN_COMPAT_ONLY=zookeeper|warden restricts to one
// (for development); WARDEN_COMPAT_PEER=zookeeper replaces Warden with a second
// ZooKeeper (to check that normalize makes two runs of the same server agree).
func serverKinds() []string {
	second := "warden"
	if os.Getenv("WARDEN_COMPAT_PEER") == "zookeeper" {
		second = "zookeeper"
	}
	switch os.Getenv("WARDEN_COMPAT_ONLY") {
	case "zookeeper":
		return []string{"zookeeper"}
	case "warden":
		return []string{second}
	}
	return []string{"zookeeper", second}
}

func startKind(t *testing.T, kind string, extra map[string]string) *Server {
	t.Helper()
	if kind == "warden" {
		return startWarden(t, extra)
	}
	return startZooKeeper(t, extra)
}

// knownDifference is an intended, documented difference between ZooKeeper and Warden.
// Before comparison, lines of both transcripts matching re are rewritten with replace
// (regexp.ReplaceAllString syntax), in tests whose name matches test.
type knownDifference struct {
	test    *regexp.Regexp // matched against t.Name()
	re      *regexp.Regexp
	replace string
	reason  string
}

// knownDifferences is the one table of intended differences. Keep a reason on each.
var knownDifferences = []knownDifference{
	{
		test:    regexp.MustCompile(``),
		re:      regexp.MustCompile(`(?i)(zookeeper version:?[ \t]*=?[ \t]*)[^\n]*`),
		replace: `${1}<version>`,
		reason:  "the server's build string differs (Debian prints an unexpanded ${mvngit.commit.id})",
	},
	{
		test:    regexp.MustCompile(`^TestKazoo$`),
		re:      regexp.MustCompile(`server_version -> \(3, 8, \d+\)`),
		replace: `server_version -> (3, 8, <patch>)`,
		reason:  "Warden reports its own 3.8.x patch level in envi; Debian ships 3.8.0 (clients compare major.minor)",
	},
	{
		test:    regexp.MustCompile(`^TestGoZKFourLetterWords$`),
		re:      regexp.MustCompile(`(?m)^srvr .*$`),
		replace: `srvr <parsed only for warden>`,
		reason: "go-zookeeper cannot parse Debian's srvr version line (\"3.8.0-${mvngit.commit.id}, built on 2024-12-29 ...\"); " +
			"Warden prints a parseable one, and the scenario checks that go-zookeeper parses it",
	},
	{
		test:    regexp.MustCompile(`^TestSASL$`),
		re:      regexp.MustCompile(`(?m)^anon exists (-> .*|err=NoAuthError)$`),
		replace: `anon exists <READ-checked since 3.8.4>`,
		reason: "exists checks READ on an existing node since ZOOKEEPER-2590 (3.8.4/3.9.2), the behaviour Warden follows; " +
			"Debian's 3.8.0 answers with the stat",
	},
	{
		test:    regexp.MustCompile(``),
		re:      regexp.MustCompile(`(?m)^Auth scheme: User\n(ip: \S+)\n(sasl: \S+)$`),
		replace: "Auth scheme: User\n${2}\n${1}",
		reason: "whoami lists identities in the order they were added; ZooKeeper lists them in Java hash-set order, " +
			"which is unspecified",
	},
	{
		// Before the version entry below, which would rewrite "handshake TLS 1.3".
		test: regexp.MustCompile(`^TestTLS(Refusals|ClientAuth/.*)$`),
		re: regexp.MustCompile(`(?m)(: )(handshake failed: alert [a-z ]+|` +
			`handshake TLS 1\.3; no reply, then alert (certificate required|unknown certificate authority))$`),
		replace: `${1}<refused in the handshake>`,
		reason: "a refused client certificate gets the TLS stack's alert: Java's bad_certificate (none sent) and " +
			"certificate_unknown (untrusted), Go's handshake_failure / certificate_required (TLS 1.2 / 1.3, none sent) " +
			"and unknown_ca (untrusted); under TLS 1.3 the client's side of the handshake completes and the alert " +
			"arrives with its first read. Either way the server's handshake fails and there is no session",
	},
	{
		// Only the lines of probes with the client's default versions: those offering TLS 1.2
		// alone say ", client TLS 1.2:" and must agree as they are.
		test:    regexp.MustCompile(`^TestTLS(Refusals|GoClients)$`),
		re:      regexp.MustCompile(`(?m)(^[^,\n]+: handshake |^gozk alice tls=\[)TLS 1\.[23]\b`),
		replace: `${1}<TLS 1.2 or 1.3>`,
		reason: "ssl.protocol defaults to TLSv1.2 alone in ZooKeeper 3.8; Warden enables TLS 1.3 and 1.2, ZooKeeper " +
			"3.9's default (ZOOKEEPER-4415; internal/tlsconf doc, docs/security.md). A client offering 1.3 gets it from " +
			"Warden; ZooKeeper 3.8's Java client offers 1.2 alone and gets 1.2 from both",
	},
	{
		test:    regexp.MustCompile(`^TestTLSKazoo$`),
		re:      regexp.MustCompile(`(reason=Connection dropped: socket connection error: )\[SSL: [A-Z0-9_]+\] [^\n]*`),
		replace: `${1}<TLS alert>`,
		reason:  "kazoo prints the TLS alert, which is the TLS stack's (see the TestTLSRefusals entry)",
	},
}

// applyKnownDifferences rewrites a transcript by the entries of knownDifferences that
// apply to test.
func applyKnownDifferences(test, transcript string) string {
	for _, d := range knownDifferences {
		if d.test.MatchString(test) {
			transcript = d.re.ReplaceAllString(transcript, d.replace)
		}
	}
	return transcript
}

// differential runs scenario against each server kind from serverKinds() (each in a
// subtest named after the server), normalises the transcripts, and fails with a unified
// diff if they differ. The first server's transcript is the reference.
func differential(t *testing.T, extra map[string]string, scenario func(t *testing.T, s *Server) string) {
	t.Helper()
	type run struct {
		name       string
		transcript string
		ok         bool
	}
	var runs []run
	for i, kind := range serverKinds() {
		name := kind
		if i > 0 && kind == serverKinds()[0] {
			name = kind + "-peer"
		}
		var transcript string
		ok := t.Run(name, func(t *testing.T) {
			s := startKind(t, kind, extra)
			transcript = scenario(t, s)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("transcript so far:\n%s", transcript)
				}
			})
		})
		runs = append(runs, run{name: name, transcript: transcript, ok: ok})
	}
	for _, r := range runs {
		if !r.ok {
			t.Fatalf("scenario failed against %s; transcripts not compared", r.name)
		}
	}
	norm := make([]string, len(runs))
	for i, r := range runs {
		norm[i] = applyKnownDifferences(t.Name(), normalize(r.transcript))
	}
	if len(runs) == 1 {
		t.Logf("only %s ran; normalised transcript:\n%s", runs[0].name, norm[0])
		return
	}
	for i := 1; i < len(runs); i++ {
		if norm[i] != norm[0] {
			t.Errorf("transcripts differ (after normalize):\n%s",
				unifiedDiff(runs[0].name, runs[i].name, norm[0], norm[i]))
		}
	}
}

// Normalisation. Transcripts are lines; values are recognised by the name of their field:
// "name=value" (value up to white space) or "name = value" / "name: value" (value up to
// end of line, as zkCli prints stats). Zxids and session ids are renumbered in order of
// first appearance (so equal values stay equal: z1, z2, ... and s1, s2, ...), times
// become <time>, ports <port>.
var (
	zxidField    = `(?:[cmp]?[zZ]xid|lastZxid|zxid|Zxid|last_zxid|lastzxid|peerLastZxid|zxid_seen|lastZxidSeen)`
	sessionField = `(?:ephemeralOwner|sessionid|sessionId|session_id|session|owner|sid)`
	timeField    = `(?:ctime|mtime|time|timestamp|lastResponseTime|lresp|lastSeen|established)`

	reZxidEq    = regexp.MustCompile(`\b(` + zxidField + `)(=)(0x[0-9a-fA-F]+|-?[0-9]+)\b`)
	reZxidSp    = regexp.MustCompile(`\b(` + zxidField + `)(\s*[=:]\s+|\s+=\s*)(0x[0-9a-fA-F]+|-?[0-9]+)\b`)
	reSessEq    = regexp.MustCompile(`\b(` + sessionField + `)(=)(0x[0-9a-fA-F]+|-?[0-9]+)\b`)
	reSessSp    = regexp.MustCompile(`\b(` + sessionField + `)(\s*[=:]\s+|\s+=\s*|\s+id\s*[=:]?\s*)(0x[0-9a-fA-F]+|-?[0-9]+)\b`)
	reTimeEq    = regexp.MustCompile(`\b(` + timeField + `)=[^\s,]+`)
	reTimeSp    = regexp.MustCompile(`\b(` + timeField + `)(\s*[=:]\s+|\s+=\s*)[^\n]*`)
	reLongHex   = regexp.MustCompile(`\b0x[0-9a-fA-F]{9,16}\b`)
	reHostPort  = regexp.MustCompile(`\b(127\.0\.0\.1|localhost|0\.0\.0\.0|\[?0:0:0:0:0:0:0:[01]\]?|/127\.0\.0\.1):[0-9]{2,5}\b`)
	reClientPrt = regexp.MustCompile(`\b(clientPort|port)(\s*[=:]\s*)[0-9]{2,5}\b`)
	reTempDir   = regexp.MustCompile(`/tmp/[^\s:,]*`)
)

// normalize replaces values that legitimately differ between runs and servers (zxids,
// session ids, times, ports, temp paths) by stable placeholders; see the comment above.
func normalize(transcript string) string {
	zx := newRenumber("z")
	ss := newRenumber("s")
	lines := strings.Split(transcript, "\n")
	for i, line := range lines {
		line = reTimeSp.ReplaceAllString(line, "${1}${2}<time>")
		line = reTimeEq.ReplaceAllString(line, "${1}=<time>")
		line = replaceGroups(reZxidEq, line, zx)
		line = replaceGroups(reZxidSp, line, zx)
		line = replaceGroups(reSessEq, line, ss)
		line = replaceGroups(reSessSp, line, ss)
		line = reLongHex.ReplaceAllStringFunc(line, ss.of)
		line = reHostPort.ReplaceAllString(line, "${1}:<port>")
		line = reClientPrt.ReplaceAllString(line, "${1}${2}<port>")
		line = reTempDir.ReplaceAllString(line, "<tmp>")
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}

// replaceGroups rewrites the third group (the value) of every match of re with r.of.
func replaceGroups(re *regexp.Regexp, line string, r *renumber) string {
	return re.ReplaceAllStringFunc(line, func(m string) string {
		g := re.FindStringSubmatch(m)
		return g[1] + g[2] + r.of(g[3])
	})
}

// renumber maps values to placeholders prefix1, prefix2, ... in order of first
// appearance; hex and decimal spellings of one number share a placeholder; 0 and -1
// stay as they are (they mean "none"), and so do the ephemeralOwner markers of
// containers (0x8000000000000000) and TTL nodes (0xff...) in session fields.
type renumber struct {
	prefix string
	seen   map[uint64]string
}

func newRenumber(prefix string) *renumber {
	return &renumber{prefix: prefix, seen: map[uint64]string{}}
}

func (r *renumber) of(v string) string {
	var n uint64
	var err error
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		_, err = fmt.Sscanf(v[2:], "%x", &n)
	} else {
		var i int64
		_, err = fmt.Sscanf(v, "%d", &i)
		n = uint64(i)
	}
	if err != nil {
		return v
	}
	if n == 0 || int64(n) == -1 {
		return v
	}
	if r.prefix == "s" && (n == 1<<63 || n>>56 == 0xff) {
		return v // a container's or TTL node's ephemeralOwner marker, not a session
	}
	if p, ok := r.seen[n]; ok {
		return p
	}
	p := fmt.Sprintf("<%s%d>", r.prefix, len(r.seen)+1)
	r.seen[n] = p
	return p
}

// unifiedDiff renders a line diff of a and b (longest common subsequence) with three
// lines of context around each change.
func unifiedDiff(nameA, nameB, a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	// lcs[i][j] = length of the LCS of la[i:] and lb[j:].
	lcs := make([][]int, len(la)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(lb)+1)
	}
	for i := len(la) - 1; i >= 0; i-- {
		for j := len(lb) - 1; j >= 0; j-- {
			if la[i] == lb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind byte // ' ', '-', '+'
		text string
	}
	var ops []op
	i, j := 0, 0
	for i < len(la) || j < len(lb) {
		switch {
		case i < len(la) && j < len(lb) && la[i] == lb[j]:
			ops = append(ops, op{' ', la[i]})
			i++
			j++
		case i < len(la) && (j == len(lb) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', la[i]})
			i++
		default:
			ops = append(ops, op{'+', lb[j]})
			j++
		}
	}
	const context = 3
	keep := make([]bool, len(ops))
	for k, o := range ops {
		if o.kind != ' ' {
			for c := max(0, k-context); c <= min(len(ops)-1, k+context); c++ {
				keep[c] = true
			}
		}
	}
	var w strings.Builder
	fmt.Fprintf(&w, "--- %s\n+++ %s\n", nameA, nameB)
	bw := bufio.NewWriter(&w)
	gap := false
	for k, o := range ops {
		if !keep[k] {
			gap = true
			continue
		}
		if gap {
			fmt.Fprintln(bw, "@@")
			gap = false
		}
		fmt.Fprintf(bw, "%c%s\n", o.kind, o.text)
	}
	bw.Flush()
	return w.String()
}
