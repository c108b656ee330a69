package containerenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/config"
)

// lookupIn is an os.LookupEnv over a map.
func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// defaultsCfg is the zoo.cfg of an empty environment: the official image's
// standalone default.
const defaultsCfg = `dataDir=/data
dataLogDir=/datalog
tickTime=2000
initLimit=5
syncLimit=2
autopurge.snapRetainCount=3
autopurge.purgeInterval=0
maxClientCnxns=60
standaloneEnabled=true
admin.enableServer=true
server.1=localhost:2888:3888;2181
`

func TestZooCfg(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"defaults", nil, defaultsCfg},
		{"empty values mean the defaults", map[string]string{
			"ZOO_TICK_TIME": "", "ZOO_SERVERS": "  ", "ZOO_4LW_COMMANDS_WHITELIST": "", "ZOO_CFG_EXTRA": "",
		}, defaultsCfg},
		{"compose member, the official example", map[string]string{
			"ZOO_MY_ID":   "2",
			"ZOO_SERVERS": "server.1=zoo1:2888:3888;2181 server.2=zoo2:2888:3888;2181 server.3=zoo3:2888:3888;2181",
		}, strings.Replace(defaultsCfg, "server.1=localhost:2888:3888;2181\n",
			"server.1=zoo1:2888:3888;2181\nserver.2=zoo2:2888:3888;2181\nserver.3=zoo3:2888:3888;2181\n", 1)},
		{"every setting", map[string]string{
			"ZOO_DATA_DIR": "/var/lib/zk", "ZOO_DATA_LOG_DIR": "/var/lib/zklog",
			"ZOO_TICK_TIME": "500", "ZOO_INIT_LIMIT": "10", "ZOO_SYNC_LIMIT": "4",
			"ZOO_AUTOPURGE_SNAPRETAINCOUNT": "5", "ZOO_AUTOPURGE_PURGEINTERVAL": "24",
			"ZOO_MAX_CLIENT_CNXNS": "0", "ZOO_STANDALONE_ENABLED": "false", "ZOO_ADMINSERVER_ENABLED": "false",
			"ZOO_SERVERS":                "server.1=a:2888:3888;2181\tserver.2=b:2888:3888:observer;2181",
			"ZOO_4LW_COMMANDS_WHITELIST": "srvr,ruok,conf",
			"ZOO_CFG_EXTRA":              "metricsProvider.httpPort=7000  skipACL=yes",
		}, `dataDir=/var/lib/zk
dataLogDir=/var/lib/zklog
tickTime=500
initLimit=10
syncLimit=4
autopurge.snapRetainCount=5
autopurge.purgeInterval=24
maxClientCnxns=0
standaloneEnabled=false
admin.enableServer=false
server.1=a:2888:3888;2181
server.2=b:2888:3888:observer;2181
4lw.commands.whitelist=srvr,ruok,conf
metricsProvider.httpPort=7000
skipACL=yes
`},
		{"3.4-style server lines get clientPort", map[string]string{
			"ZOO_SERVERS": "server.1=zoo1:2888:3888 server.2=zoo2:2888:3888 server.3=zoo3:2888:3888",
		}, "clientPort=2181\n" + strings.Replace(defaultsCfg, "server.1=localhost:2888:3888;2181\n",
			"server.1=zoo1:2888:3888\nserver.2=zoo2:2888:3888\nserver.3=zoo3:2888:3888\n", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Lookup(lookupIn(tt.env))
			if err := e.Validate(); err != nil {
				t.Fatal(err)
			}
			got := e.ZooCfg()
			if got != tt.want {
				t.Fatalf("zoo.cfg:\n%s\nwant:\n%s", got, tt.want)
			}
			// Warden reads what it generates, without a warning.
			c, err := config.Parse(strings.NewReader(got), "")
			if err != nil {
				t.Fatalf("config.Parse of the generated zoo.cfg: %v", err)
			}
			if len(c.Warnings) > 0 {
				t.Errorf("config.Parse warnings: %q", c.Warnings)
			}
			if c.DataDir != e.DataDir || c.DataLogDir != e.DataLogDir || len(c.Servers) != len(e.Servers) {
				t.Errorf("parsed dataDir %q dataLogDir %q %d servers; want %q %q %d",
					c.DataDir, c.DataLogDir, len(c.Servers), e.DataDir, e.DataLogDir, len(e.Servers))
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // in the error
	}{
		{"relative data dir", map[string]string{"ZOO_DATA_DIR": "data"}, `ZOO_DATA_DIR="data": want an absolute path`},
		{"tick time not a number", map[string]string{"ZOO_TICK_TIME": "2s"}, `ZOO_TICK_TIME="2s": want a whole number above 0 (default 2000)`},
		{"zero id", map[string]string{"ZOO_MY_ID": "0"}, `ZOO_MY_ID="0": want a whole number above 0`},
		{"negative purge interval", map[string]string{"ZOO_AUTOPURGE_PURGEINTERVAL": "-1"}, `ZOO_AUTOPURGE_PURGEINTERVAL="-1"`},
		{"boolean", map[string]string{"ZOO_STANDALONE_ENABLED": "yes"}, `ZOO_STANDALONE_ENABLED="yes": want true or false`},
		{"comma-separated servers", map[string]string{"ZOO_SERVERS": "server.1=a:2888:3888;2181,server.2=b:2888:3888;2181"},
			`ZOO_SERVERS=`},
		{"server word without server.", map[string]string{"ZOO_SERVERS": "zoo1:2888:3888"}, `"zoo1:2888:3888" is not a server.N=`},
		{"extra without =", map[string]string{"ZOO_CFG_EXTRA": "skipACL"}, `"skipACL" is not key=value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Lookup(lookupIn(tt.env)).Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v; want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

// testEnv is an environment whose four directories are under a temporary
// directory.
func testEnv(t *testing.T, extra map[string]string) Env {
	root := t.TempDir()
	env := map[string]string{
		"ZOO_CONF_DIR":     filepath.Join(root, "conf"),
		"ZOO_DATA_DIR":     filepath.Join(root, "data"),
		"ZOO_DATA_LOG_DIR": filepath.Join(root, "datalog"),
		"ZOO_LOG_DIR":      filepath.Join(root, "logs"),
	}
	for k, v := range extra {
		env[k] = v
	}
	return Lookup(lookupIn(env))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPrepare(t *testing.T) {
	tests := []struct {
		name          string
		existingCfg   string // "" = none
		existingMyID  string // "" = none
		wantCfgWrite  bool
		wantMyIDWrite bool
	}{
		{"fresh volumes", "", "", true, true},
		{"mounted zoo.cfg is kept", "clientPort=2999\ndataDir=/elsewhere\n", "", false, true},
		{"myid of an earlier start is kept", "", "7\n", true, false},
		{"both kept", "tickTime=100\n", "9\n", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := testEnv(t, map[string]string{"ZOO_MY_ID": "3", "ZOO_CFG_EXTRA": "snapCount=1000"})
			if tt.existingCfg != "" {
				writeFile(t, e.ConfigPath(), tt.existingCfg)
			}
			if tt.existingMyID != "" {
				writeFile(t, e.MyIDPath(), tt.existingMyID)
			}
			res, err := Prepare(e)
			if err != nil {
				t.Fatal(err)
			}
			if res.ConfigPath != e.ConfigPath() || res.ConfigWritten != tt.wantCfgWrite || res.MyIDWritten != tt.wantMyIDWrite {
				t.Fatalf("Prepare = %+v; want config %s written %v, myid written %v",
					res, e.ConfigPath(), tt.wantCfgWrite, tt.wantMyIDWrite)
			}
			wantCfg, wantMyID := e.ZooCfg(), "3\n"
			if tt.existingCfg != "" {
				wantCfg = tt.existingCfg
			}
			if tt.existingMyID != "" {
				wantMyID = tt.existingMyID
			}
			if got := readFile(t, e.ConfigPath()); got != wantCfg {
				t.Errorf("zoo.cfg:\n%s\nwant:\n%s", got, wantCfg)
			}
			if got := readFile(t, e.MyIDPath()); got != wantMyID {
				t.Errorf("myid = %q; want %q", got, wantMyID)
			}
			for _, dir := range []string{e.DataLogDir, e.LogDir} {
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					t.Errorf("%s not created: %v", dir, err)
				}
			}
			// Nothing but the two files: no temporary left behind.
			for _, dir := range []string{e.ConfDir, e.DataDir} {
				ents, _ := os.ReadDir(dir)
				if len(ents) != 1 {
					t.Errorf("%s holds %d entries; want 1", dir, len(ents))
				}
			}
			// A second start keeps everything as it is.
			again, err := Prepare(e)
			if err != nil || again.ConfigWritten || again.MyIDWritten {
				t.Errorf("second Prepare = %+v, %v; want nothing written", again, err)
			}
		})
	}
}

func TestPrepareInvalid(t *testing.T) {
	e := testEnv(t, map[string]string{"ZOO_MY_ID": "one"})
	if _, err := Prepare(e); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Prepare with ZOO_MY_ID=one: %v; want ErrInvalid", err)
	}
	if _, err := os.Stat(e.ConfigPath()); err == nil {
		t.Errorf("zoo.cfg written for an invalid environment")
	}
}
