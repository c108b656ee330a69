//go:build docker

package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/wardenzk/warden/internal/status"
	"github.com/wardenzk/warden/test/proc"
)

// image is the tag the tests build and reuse.
const image = "warden:dockertest"

// projectPrefix + the test process's pid names its compose project;
// testLabel marks its standalone containers.
const (
	projectPrefix = "wardentest"
	testLabel     = "warden-docker-test=1"
)

// Bounds of the waits; generous for 2 busy cores.
const (
	buildTimeout   = 4 * time.Minute
	commandTimeout = 90 * time.Second
	healthyWithin  = 90 * time.Second // the image's HEALTHCHECK runs every 5 s
	serveWithin    = 45 * time.Second // a new leader after a kill
	pollEvery      = 250 * time.Millisecond
)

// repoRoot is the repository this file is in.
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the repository (runtime.Caller failed)")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var (
	setupOnce sync.Once
	setupErr  error
	compose   []string // "docker-compose" or "docker compose"
)

// setup checks the tools and builds the image, once for all tests; a
// missing tool fails every test that needs it.
func setup(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() { setupErr = doSetup(repoRoot(t)) })
	if setupErr != nil {
		t.Fatalf("docker tests cannot run: %v", setupErr)
	}
}

func doSetup(root string) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return errors.New("the docker client is not installed (install Docker Engine 20.10 or later)")
	}
	if out, err := command(commandTimeout, "", nil, "docker", "info", "--format", "{{.ServerVersion}}"); err != nil {
		return fmt.Errorf("the Docker engine does not answer (is dockerd running and this user allowed to use it?): %v\n%s", err, out)
	}
	switch {
	case lookPath("docker-compose"):
		compose = []string{"docker-compose"}
	default:
		if _, err := command(commandTimeout, "", nil, "docker", "compose", "version"); err != nil {
			return errors.New("neither docker-compose nor the docker compose plugin is installed (install either)")
		}
		compose = []string{"docker", "compose"}
	}
	sweepLeftovers(root)
	if out, err := command(buildTimeout, root, nil, "scripts/docker-build.sh", strings.TrimPrefix(image, "warden:")); err != nil {
		return fmt.Errorf("scripts/docker-build.sh: %v\n%s", err, out)
	}
	return nil
}

// sweepLeftovers removes what an earlier run could not (one killed by
// go test's -timeout, which runs no cleanups): standalone test containers
// and the compose projects of test processes that are gone.
func sweepLeftovers(root string) {
	ids, _ := command(commandTimeout, "", nil, "docker", "ps", "-aq", "--filter", "label="+testLabel)
	for _, id := range strings.Fields(ids) {
		command(commandTimeout, "", nil, "docker", "rm", "-f", "-v", id)
	}
	projects, _ := command(commandTimeout, "", nil, "docker", "ps", "-a", "--filter", "label=com.docker.compose.project",
		"--format", `{{.Label "com.docker.compose.project"}}`)
	seen := map[string]bool{}
	for _, p := range strings.Fields(projects) {
		pid, err := strconv.Atoi(strings.TrimPrefix(p, projectPrefix))
		if seen[p] || !strings.HasPrefix(p, projectPrefix) || err != nil || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		seen[p] = true
		command(commandTimeout, root, []string{"WARDEN_IMAGE=" + image}, compose[0],
			append(append([]string(nil), compose[1:]...), "-p", p, "-f", "deploy/docker/compose.yaml", "down", "-v", "--remove-orphans", "-t", "1")...)
	}
}

func lookPath(name string) bool { _, err := exec.LookPath(name); return err == nil }

// command runs name with args in dir (the working directory when ""),
// with extra environment variables, within timeout, and returns its
// combined output.
func command(timeout time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s %s: no end within %v", name, strings.Join(args, " "), timeout)
	}
	return strings.TrimSpace(string(out)), err
}

// must runs a command and fails the test when it fails.
func must(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, err := command(commandTimeout, repoRoot(t), env, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return out
}

// poll calls ok every pollEvery until it returns nil or within passes,
// then fails the test with the last error.
func poll(t *testing.T, within time.Duration, what string, ok func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := ok()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, within, err)
		}
		time.Sleep(pollEvery)
	}
}

// containerIP is the container's address on its (single) network.
func containerIP(t *testing.T, id string) string {
	t.Helper()
	ip := must(t, nil, "docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", id)
	if ip == "" {
		t.Fatalf("container %s has no IP address", id)
	}
	return ip
}

// waitHealthy waits until Docker's HEALTHCHECK (warden health) reports
// every container healthy.
func waitHealthy(t *testing.T, ids ...string) {
	t.Helper()
	poll(t, healthyWithin, "containers healthy", func() error {
		for _, id := range ids {
			st, err := command(commandTimeout, "", nil, "docker", "inspect", "-f", "{{.State.Status}} {{.State.Health.Status}}", id)
			if err != nil {
				return fmt.Errorf("%s: %v %s", id, err, st)
			}
			if st != "running healthy" {
				return fmt.Errorf("container %.12s is %q", id, st)
			}
		}
		return nil
	})
}

// copyOut reads one file out of a container (docker cp streams a tar)
// and its tar header (owner, mode).
func copyOut(t *testing.T, id, path string) (string, *tar.Header) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "cp", id+":"+path, "-")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker cp %s:%s: %v\n%s", id, path, err, stderr.String())
	}
	tr := tar.NewReader(bytes.NewReader(out))
	hdr, err := tr.Next()
	if err != nil {
		t.Fatalf("docker cp %s:%s: %v", id, path, err)
	}
	b, err := io.ReadAll(tr)
	if err != nil {
		t.Fatalf("docker cp %s:%s: %v", id, path, err)
	}
	return string(b), hdr
}

// fourLetter asks a server for a four-letter word.
func fourLetter(addr, word string) (string, error) {
	return proc.FourLetterWord(addr, word, 5*time.Second)
}

// connect opens a go-zookeeper session to one server only.
func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(c.Close)
	return c
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// write creates path=data through c, retrying until within passes (a
// member may be between leaders); an earlier attempt that succeeded
// unseen (ErrNodeExists) counts.
func write(t *testing.T, c *zk.Conn, path, data string) {
	t.Helper()
	poll(t, serveWithin, "create "+path, func() error {
		_, err := c.Create(path, []byte(data), 0, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
}

// read syncs path on c's server and returns its data, retrying like write.
func read(t *testing.T, c *zk.Conn, path string) string {
	t.Helper()
	var data []byte
	poll(t, serveWithin, "sync and get "+path, func() error {
		if _, err := c.Sync(path); err != nil {
			return err
		}
		var err error
		data, _, err = c.Get(path)
		return err
	})
	return string(data)
}

func TestComposeEnsemble(t *testing.T) {
	setup(t)
	project := fmt.Sprintf("%s%d", projectPrefix, os.Getpid())
	env := []string{"WARDEN_IMAGE=" + image,
		// Random loopback ports: never collide with a server on 2181.
		"WARDEN_ZOO1_PORT=127.0.0.1:", "WARDEN_ZOO2_PORT=127.0.0.1:", "WARDEN_ZOO3_PORT=127.0.0.1:"}
	dc := func(args ...string) []string {
		return append(append(append([]string(nil), compose[1:]...), "-p", project, "-f", "deploy/docker/compose.yaml"), args...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := command(commandTimeout, repoRoot(t), env, compose[0], dc("logs", "--no-color", "--tail", "40")...)
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := command(commandTimeout, repoRoot(t), env, compose[0], dc("down", "-v", "--remove-orphans", "-t", "5")...); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	})
	start := time.Now()
	must(t, env, compose[0], dc("up", "-d")...)

	members := []string{"zoo1", "zoo2", "zoo3"}
	ids := map[string]string{}
	addrs := map[string]string{}
	for _, m := range members {
		ids[m] = must(t, env, compose[0], dc("ps", "-q", m)...)
		addrs[m] = containerIP(t, ids[m]) + ":2181"
	}
	waitHealthy(t, ids["zoo1"], ids["zoo2"], ids["zoo3"])
	t.Logf("3 members healthy %v after up", time.Since(start).Round(time.Millisecond))

	// One leader, two followers, as `warden status` sees them.
	var leader string
	poll(t, serveWithin, "one leader", func() error {
		found, err := status.Check(context.Background(), status.Config{Members: []string{addrs["zoo1"], addrs["zoo2"], addrs["zoo3"]}})
		if err != nil {
			return err
		}
		r := status.Summarize(found)
		if !r.OK {
			return fmt.Errorf("ensemble not OK: leaders %v, %d of %d voters serving", r.Leaders, r.ServingVoters, r.Voters)
		}
		leader = r.Leader()
		return nil
	})

	// Write through one member, read through another.
	c1, c2, c3 := connect(t, addrs["zoo1"]), connect(t, addrs["zoo2"]), connect(t, addrs["zoo3"])
	write(t, c1, "/docker-before", "written through zoo1")
	if got := read(t, c2, "/docker-before"); got != "written through zoo1" {
		t.Fatalf("zoo2 reads %q", got)
	}

	// Kill the leader: the two others elect a new one and keep serving.
	var killed string
	for _, m := range members {
		if addrs[m] == leader {
			killed = m
		}
	}
	if killed == "" {
		t.Fatalf("leader %s is none of %v", leader, addrs)
	}
	must(t, nil, "docker", "kill", ids[killed])
	t.Logf("killed the leader, %s", killed)
	var alive []*zk.Conn
	for m, c := range map[string]*zk.Conn{"zoo1": c1, "zoo2": c2, "zoo3": c3} {
		if m != killed {
			alive = append(alive, c)
		}
	}
	killedAt := time.Now()
	write(t, alive[0], "/docker-after", "written after the kill")
	t.Logf("first write after the kill %v later", time.Since(killedAt).Round(time.Millisecond))
	if got := read(t, alive[1], "/docker-after"); got != "written after the kill" {
		t.Fatalf("read after the kill: %q", got)
	}
	if got := read(t, alive[1], "/docker-before"); got != "written through zoo1" {
		t.Fatalf("read of the earlier write after the kill: %q", got)
	}
	write(t, alive[1], "/docker-after-2", "x")
	if got := read(t, alive[0], "/docker-after-2"); got != "x" {
		t.Fatalf("second write after the kill reads %q", got)
	}
}

// TestImage checks the image's interface: the official image's user,
// volumes, ports and environment defaults, and the entrypoint and health
// check through the binary.
func TestImage(t *testing.T) {
	setup(t)
	tests := []struct{ format, want string }{
		{"{{.Config.User}}", "1000:1000"},
		{"{{json .Config.Entrypoint}}", `["/warden","container"]`},
		{"{{json .Config.Healthcheck.Test}}", `["CMD","/warden","health"]`},
		{"{{json .Config.Volumes}}", `{"/data":{},"/datalog":{},"/logs":{}}`},
		{"{{json .Config.ExposedPorts}}", `{"2181/tcp":{},"2888/tcp":{},"3888/tcp":{},"7000/tcp":{},"8080/tcp":{}}`},
		{"{{.Config.WorkingDir}}", "/data"},
		{`{{index .Config.Labels "org.opencontainers.image.version"}}`, "dockertest"},
	}
	for _, tt := range tests {
		if got := must(t, nil, "docker", "image", "inspect", "-f", tt.format, image); got != tt.want {
			t.Errorf("docker image inspect -f '%s' = %s; want %s", tt.format, got, tt.want)
		}
	}
	env := must(t, nil, "docker", "image", "inspect", "-f", "{{json .Config.Env}}", image)
	for _, kv := range []string{"ZOO_CONF_DIR=/conf", "ZOO_DATA_DIR=/data", "ZOO_DATA_LOG_DIR=/datalog",
		"ZOO_LOG_DIR=/logs", "ZOO_TICK_TIME=2000", "ZOO_INIT_LIMIT=5", "ZOO_SYNC_LIMIT=2",
		"ZOO_AUTOPURGE_PURGEINTERVAL=0", "ZOO_AUTOPURGE_SNAPRETAINCOUNT=3", "ZOO_MAX_CLIENT_CNXNS=60",
		"ZOO_STANDALONE_ENABLED=true", "ZOO_ADMINSERVER_ENABLED=true"} {
		if !strings.Contains(env, `"`+kv+`"`) {
			t.Errorf("image ENV lacks %s: %s", kv, env)
		}
	}
	// The directories of the empty base: the user's, and a sticky /tmp.
	id := must(t, nil, "docker", "create", "--label", testLabel, image)
	defer command(commandTimeout, "", nil, "docker", "rm", "-f", "-v", id)
	for dir, want := range map[string]string{"/conf": "1000:1000 drwxr-xr-x", "/data": "1000:1000 drwxr-xr-x",
		"/datalog": "1000:1000 drwxr-xr-x", "/logs": "1000:1000 drwxr-xr-x", "/tmp": "0:0 dtrwxrwxrwx"} {
		_, h := copyOut(t, id, dir)
		if got := fmt.Sprintf("%d:%d %v", h.Uid, h.Gid, h.FileInfo().Mode()); got != want {
			t.Errorf("%s in the image: %s; want %s", dir, got, want)
		}
	}
	// A command instead of flags runs that warden command (no shell needed).
	if out := must(t, nil, "docker", "run", "--rm", image, "version"); !strings.HasPrefix(out, "warden ") || !strings.Contains(out, "Zookeeper version: ") {
		t.Errorf("docker run IMAGE version = %q", out)
	}
	// A bad variable stops the container with an error naming it.
	out, err := command(commandTimeout, "", nil, "docker", "run", "--rm", "-e", "ZOO_MY_ID=one", image)
	if err == nil || !strings.Contains(out, `ZOO_MY_ID="one"`) {
		t.Errorf("docker run -e ZOO_MY_ID=one: %v, %q; want a failure naming ZOO_MY_ID", err, out)
	}
}

// runStandalone starts a standalone container with extra docker run
// arguments and removes it, with its volumes, when the test ends.
func runStandalone(t *testing.T, args ...string) (id, addr string) {
	t.Helper()
	run := append([]string{"run", "-d", "--label", testLabel}, args...)
	id = must(t, nil, "docker", append(run, image)...)
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := command(commandTimeout, "", nil, "docker", "logs", "--tail", "40", id)
			t.Logf("container logs:\n%s", out)
		}
		if out, err := command(commandTimeout, "", nil, "docker", "rm", "-f", "-v", id); err != nil {
			t.Errorf("docker rm: %v\n%s", err, out)
		}
	})
	waitHealthy(t, id)
	return id, containerIP(t, id) + ":2181"
}

func TestEnvironmentContract(t *testing.T) {
	setup(t)
	t.Run("generated zoo.cfg", func(t *testing.T) {
		id, addr := runStandalone(t,
			"-e", "ZOO_CFG_EXTRA=snapCount=5000 maxSessionTimeout=30000",
			"-e", "ZOO_4LW_COMMANDS_WHITELIST=srvr,conf,ruok",
			"-e", "ZOO_MAX_CLIENT_CNXNS=17")
		cfg, cfgHdr := copyOut(t, id, "/conf/zoo.cfg")
		for _, want := range []string{"dataDir=/data\n", "dataLogDir=/datalog\n", "maxClientCnxns=17\n",
			"server.1=localhost:2888:3888;2181\n", "4lw.commands.whitelist=srvr,conf,ruok\n",
			"snapCount=5000\n", "maxSessionTimeout=30000\n"} {
			if !strings.Contains(cfg, want) {
				t.Errorf("generated zoo.cfg lacks %q:\n%s", want, cfg)
			}
		}
		myid, myidHdr := copyOut(t, id, "/data/myid")
		if myid != "1\n" {
			t.Errorf("myid = %q; want \"1\\n\"", myid)
		}
		// Written by the non-root user.
		for _, h := range []*tar.Header{cfgHdr, myidHdr} {
			if h.Uid != 1000 || h.Gid != 1000 {
				t.Errorf("%s is owned by %d:%d; want 1000:1000", h.Name, h.Uid, h.Gid)
			}
		}
		// The server runs with it: conf reports it, mntr is off the whitelist.
		conf, err := fourLetter(addr, "conf")
		if err != nil || !strings.Contains(conf, "maxClientCnxns=17") || !strings.Contains(conf, "maxSessionTimeout=30000") {
			t.Errorf("conf = %q, %v; want maxClientCnxns=17 and maxSessionTimeout=30000", conf, err)
		}
		if mntr, _ := fourLetter(addr, "mntr"); !strings.Contains(mntr, "not in the whitelist") {
			t.Errorf("mntr answered %q; want a refusal (not in ZOO_4LW_COMMANDS_WHITELIST)", mntr)
		}
	})
	t.Run("mounted zoo.cfg kept", func(t *testing.T) {
		dir := t.TempDir()
		mounted := "clientPort=2181\ndataDir=/data\ntickTime=1500\nmaxClientCnxns=9\nadmin.enableServer=false\n"
		path := filepath.Join(dir, "zoo.cfg")
		if err := os.WriteFile(path, []byte(mounted), 0o644); err != nil {
			t.Fatal(err)
		}
		id, addr := runStandalone(t, "-v", path+":/conf/zoo.cfg:ro",
			"-e", "ZOO_TICK_TIME=3000", "-e", "ZOO_CFG_EXTRA=maxClientCnxns=99")
		if got, _ := copyOut(t, id, "/conf/zoo.cfg"); got != mounted {
			t.Errorf("/conf/zoo.cfg in the container:\n%s\nwant the mounted file:\n%s", got, mounted)
		}
		conf, err := fourLetter(addr, "conf")
		if err != nil || !strings.Contains(conf, "tickTime=1500") || !strings.Contains(conf, "maxClientCnxns=9\n") {
			t.Errorf("conf = %q, %v; want the mounted tickTime=1500 and maxClientCnxns=9", conf, err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, []byte(mounted)) {
			t.Errorf("the mounted file changed on the host: %q", b)
		}
	})
}
