package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mustParse(t *testing.T, in string) Config {
	t.Helper()
	c, err := Parse(strings.NewReader(in), "")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestSampleConfig(t *testing.T) {
	f, err := os.Open("testdata/zoo_sample.cfg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Parse(f, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if c.TickTime != 2000 || c.InitLimit != 10 || c.SyncLimit != 5 || c.DataDir != "/tmp/zookeeper" ||
		c.DataLogDir != "/tmp/zookeeper" || c.ClientPort != 2181 || c.ClientPortAddress != "" {
		t.Errorf("sample parsed as %+v", c)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings: %q", c.Warnings)
	}
	if !c.Standalone() {
		t.Error("sample is not standalone")
	}
	if minMs, maxMs := c.SessionTimeoutBounds(); minMs != 4000 || maxMs != 40000 {
		t.Errorf("SessionTimeoutBounds = %d, %d; want 4000, 40000", minMs, maxMs)
	}
}

func TestZooKeeperDefaults(t *testing.T) {
	c := mustParse(t, "dataDir=/d\nclientPort=2181")
	want := zkDefaults()
	want.DataDir, want.DataLogDir, want.ClientPort = "/d", "/d", 2181
	want.Raw = map[string]string{"dataDir": "/d", "clientPort": "2181"}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"TickTime", c.TickTime, 3000},
		{"MaxClientCnxns", c.MaxClientCnxns, 60},
		{"MaxCnxns", c.MaxCnxns, 0},
		{"MinSessionTimeout", c.MinSessionTimeout, -1},
		{"MaxSessionTimeout", c.MaxSessionTimeout, -1},
		{"ClientPortListenBacklog", c.ClientPortListenBacklog, -1},
		{"SecureClientPort", c.SecureClientPort, 0},
		{"MyID", c.MyID, int64(-1)},
		{"StandaloneEnabled", c.StandaloneEnabled, true},
		{"ReconfigEnabled", c.ReconfigEnabled, false},
		{"LocalSessionsEnabled", c.LocalSessionsEnabled, false},
		{"ExtendedTypesEnabled", c.ExtendedTypesEnabled, false},
		{"ContainerCheckIntervalMs", c.ContainerCheckIntervalMs, 60000},
		{"ContainerMaxPerMinute", c.ContainerMaxPerMinute, 10000},
		{"ContainerMaxNeverUsedIntervalMs", c.ContainerMaxNeverUsedIntervalMs, int64(0)},
		{"ReadOnlyModeEnabled", c.ReadOnlyModeEnabled, false},
		{"AuditEnable", c.AuditEnable, false},
		{"SkipACL", c.SkipACL, false},
		{"DigestAuthEnabled", c.DigestAuthEnabled, true},
		{"SuperDigest", c.SuperDigest, ""},
		{"SASLServerContext", c.SASLServerContext, "Server"},
		{"EnforceAuthEnabled", c.EnforceAuthEnabled, false},
		{"SessionRequireClientSASLAuth", c.SessionRequireClientSASLAuth, false},
		{"JuteMaxBuffer", c.JuteMaxBuffer, 1048575},
		{"GlobalOutstandingLimit", c.GlobalOutstandingLimit, 1000},
		{"OutstandingHandshakeLimit", c.OutstandingHandshakeLimit, -1},
		{"ForceSync", c.ForceSync, true},
		{"SnapCount", c.SnapCount, 100000},
		{"SnapSizeLimitInKb", c.SnapSizeLimitInKb, int64(4194304)},
		{"PreAllocSizeKB", c.PreAllocSizeKB, int64(65536)},
		{"AutopurgeSnapRetainCount", c.AutopurgeSnapRetainCount, 3},
		{"AutopurgePurgeInterval", c.AutopurgePurgeInterval, 0},
		{"AdminEnableServer", c.AdminEnableServer, true},
		{"AdminServerAddress", c.AdminServerAddress, "0.0.0.0"},
		{"AdminServerPort", c.AdminServerPort, 8080},
		{"AdminCommandURL", c.AdminCommandURL, "/commands"},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("Default().Validate: %v", err)
	}
	if c.ClientPortAddress != "127.0.0.1" || c.AdminServerAddress != "127.0.0.1" || c.ClientPort != 2181 || c.DataDir != "./warden-data" ||
		c.DataLogDir != "./warden-data" || c.TickTime != 2000 || !c.Standalone() {
		t.Errorf("Default() = %+v", c)
	}
	for _, cmd := range DefaultFourLetterWhitelist {
		if !c.FourLetterAllowed(cmd) {
			t.Errorf("default whitelist refuses %s", cmd)
		}
	}
	if c.FourLetterAllowed("dump") || c.FourLetterAllowed("wchc") {
		t.Error("default whitelist allows dump or wchc")
	}
}

func TestPrefixAliases(t *testing.T) {
	tests := []struct {
		in    string
		check func(c Config) bool
	}{
		{"zookeeper.extendedTypesEnabled=true", func(c Config) bool { return c.ExtendedTypesEnabled }},
		{"extendedTypesEnabled=true", func(c Config) bool { return c.ExtendedTypesEnabled }},
		{"znode.container.checkIntervalMs=1000", func(c Config) bool { return c.ContainerCheckIntervalMs == 1000 }},
		{"zookeeper.znode.container.maxPerMinute=5", func(c Config) bool { return c.ContainerMaxPerMinute == 5 }},
		{"znode.container.maxNeverUsedIntervalMs=300000", func(c Config) bool { return c.ContainerMaxNeverUsedIntervalMs == 300000 }},
		{"zookeeper.DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=",
			func(c Config) bool { return c.SuperDigest == "super:D/InIHSb7yEEbrWz8b9l71RjZJU=" }},
		{"DigestAuthenticationProvider.superDigest=super:x", func(c Config) bool { return c.SuperDigest == "super:x" }},
		{"DigestAuthenticationProvider.enabled=false", func(c Config) bool { return !c.DigestAuthEnabled }},
		{"jute.maxbuffer=0x3fffff", func(c Config) bool { return c.JuteMaxBuffer == 0x3fffff }},
		{"zookeeper.jute.maxbuffer=4194304", func(c Config) bool { return c.JuteMaxBuffer == 4194304 }},
		{"readonlymode.enabled=true", func(c Config) bool { return c.ReadOnlyModeEnabled }},
		{"audit.enable=true", func(c Config) bool { return c.AuditEnable }},
		{"zookeeper.audit.enable=TRUE", func(c Config) bool { return c.AuditEnable }},
		{"zookeeper.4lw.commands.whitelist=dump", func(c Config) bool { return c.FourLetterAllowed("dump") }},
		{"zookeeper.superUser=admin", func(c Config) bool { return c.SASLSuperUser("admin") && !c.SASLSuperUser("bob") }},
		{"superUser.1=a\nzookeeper.superUser.ops=b", func(c Config) bool {
			return c.SASLSuperUser("a") && c.SASLSuperUser("b") && !c.SASLSuperUser("")
		}},
		{"DigestAuthenticationProvider.digestAlg=SHA-256", func(c Config) bool { return c.DigestAlg.String() == "SHA-256" }},
		{"DigestAuthenticationProvider.digestAlg=sha3-256", func(c Config) bool { return c.DigestAlg.String() == "SHA3-256" }},
		{"java.security.auth.login.config=/etc/jaas.conf", func(c Config) bool { return c.JAASConfigFile == "/etc/jaas.conf" }},
		{"zookeeper.sasl.serverconfig=ZK", func(c Config) bool { return c.SASLServerContext == "ZK" }},
		{"zookeeper.skipACL=yes", func(c Config) bool { return c.SkipACL }},
		{"zookeeper.forceSync=no", func(c Config) bool { return !c.ForceSync }},
		{"snapCount=#10", func(c Config) bool { return c.SnapCount == 16 }},
		{"zookeeper.preAllocSize=16", func(c Config) bool { return c.PreAllocSizeKB == 16 }},
		{"globalOutstandingLimit=010", func(c Config) bool { return c.GlobalOutstandingLimit == 8 }},
		{"zookeeper.netty.server.outstandingHandshake.limit=0x10", func(c Config) bool { return c.OutstandingHandshakeLimit == 16 }},
		{"maxCnxns=-5", func(c Config) bool { return c.MaxCnxns == -5 }},
		{"enforce.auth.enabled=TRUE\nenforce.auth.schemes= sasl , digest ,", func(c Config) bool {
			return c.EnforceAuthEnabled && reflect.DeepEqual(c.EnforceAuthSchemes, []string{"sasl", "digest"})
		}},
		{"sessionRequireClientSASLAuth=true", func(c Config) bool { return c.SessionRequireClientSASLAuth }},
		{"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider", func(c Config) bool {
			return c.AuthProviders["1"] == "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
		}},
		{"admin.enableServer=false\nadmin.serverPort=9090\nadmin.serverAddress=127.0.0.1", func(c Config) bool {
			return !c.AdminEnableServer && c.AdminServerPort == 9090 && c.AdminServerAddress == "127.0.0.1"
		}},
		{"autopurge.snapRetainCount=5\nautopurge.purgeInterval=24", func(c Config) bool {
			return c.AutopurgeSnapRetainCount == 5 && c.AutopurgePurgeInterval == 24
		}},
		{"localSessionsEnabled=True\nlocalSessionsUpgradingEnabled=true", func(c Config) bool {
			return c.LocalSessionsEnabled && c.LocalSessionsUpgradingEnabled
		}},
		{"reconfigEnabled=true\nstandaloneEnabled=false", func(c Config) bool { return c.ReconfigEnabled && !c.StandaloneEnabled }},
		{"enforceQuota=true", func(c Config) bool { return c.EnforceQuota }},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c := mustParse(t, tt.in)
			if !tt.check(c) {
				t.Errorf("not applied: %+v", c)
			}
			if len(c.Warnings) != 0 {
				t.Errorf("warnings: %q", c.Warnings)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	c := mustParse(t, "zookeeper.admin.idleTimeout=1\nadmin.idleTimeout=2\nmetricsProvider.httpPort=7000")
	if v, ok := c.Lookup("zookeeper.admin.idleTimeout"); !ok || v != "2" {
		t.Errorf("Lookup(admin.idleTimeout) = %q, %v", v, ok)
	}
	if v, ok := c.Lookup("metricsProvider.httpPort"); !ok || v != "7000" {
		t.Errorf("Lookup(metricsProvider.httpPort) = %q, %v", v, ok)
	}
	if _, ok := c.Lookup("nothing"); ok {
		t.Error("Lookup(nothing) found something")
	}
}

func TestBooleans(t *testing.T) {
	tests := []struct {
		in       string
		get      func(Config) bool
		want     bool
		warnings int
	}{
		{"skipACL=yes", func(c Config) bool { return c.SkipACL }, true, 0},
		{"skipACL=no", func(c Config) bool { return c.SkipACL }, false, 0},
		{"skipACL=true", func(c Config) bool { return c.SkipACL }, false, 1},
		{"skipACL=YES", func(c Config) bool { return c.SkipACL }, false, 1},
		{"forceSync=no", func(c Config) bool { return c.ForceSync }, false, 0},
		{"forceSync=yes", func(c Config) bool { return c.ForceSync }, true, 0},
		{"forceSync=false", func(c Config) bool { return c.ForceSync }, true, 1},
		{"extendedTypesEnabled=TrUe", func(c Config) bool { return c.ExtendedTypesEnabled }, true, 0},
		{"extendedTypesEnabled=yes", func(c Config) bool { return c.ExtendedTypesEnabled }, false, 1},
		{"admin.enableServer=no", func(c Config) bool { return c.AdminEnableServer }, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c := mustParse(t, tt.in)
			if got := tt.get(c); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if len(c.Warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", c.Warnings, tt.warnings)
			}
		})
	}
}

func TestFourLetterWhitelist(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		allowed []string
		refused []string
	}{
		{"absent: warden default", "", []string{"ruok", "srvr", "stat", "mntr", "conf", "envi", "isro"}, []string{"dump", "cons", "wchp", "stmk"}},
		{"empty: srvr only", "4lw.commands.whitelist=", []string{"srvr"}, []string{"ruok", "isro", "stat"}},
		{"list", "4lw.commands.whitelist= ruok , stat,,", []string{"ruok", "stat", "srvr"}, []string{"mntr", "isro"}},
		{"star", "4lw.commands.whitelist=*", FourLetterCommands, nil},
		{"star among others", "4lw.commands.whitelist=ruok, *", FourLetterCommands, nil},
		{"isro with read-only mode", "4lw.commands.whitelist=ruok\nreadonlymode.enabled=true", []string{"isro", "srvr", "ruok"}, []string{"stat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.in)
			for _, cmd := range tt.allowed {
				if !c.FourLetterAllowed(cmd) {
					t.Errorf("%s refused", cmd)
				}
			}
			for _, cmd := range tt.refused {
				if c.FourLetterAllowed(cmd) {
					t.Errorf("%s allowed", cmd)
				}
			}
		})
	}
	c := mustParse(t, "4lw.commands.whitelist=ruok,bogus")
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "bogus") {
		t.Errorf("warnings = %q, want one about bogus", c.Warnings)
	}
}

func TestServerLines(t *testing.T) {
	tests := []struct {
		value string
		want  Server
	}{
		{"zk1:2888:3888", Server{ID: 1, Host: "zk1", PeerPort: 2888, ElectionPort: 3888}},
		{"zk1:2888:3888:participant", Server{ID: 1, Host: "zk1", PeerPort: 2888, ElectionPort: 3888}},
		{"zk1:2888:3888:observer", Server{ID: 1, Host: "zk1", PeerPort: 2888, ElectionPort: 3888, Observer: true}},
		{"zk1:2888:3888:OBSERVER;2181", Server{ID: 1, Host: "zk1", PeerPort: 2888, ElectionPort: 3888, Observer: true, ClientPort: 2181}},
		{"zk1:2888:3888;10.0.0.1:2181", Server{ID: 1, Host: "zk1", PeerPort: 2888, ElectionPort: 3888, ClientHost: "10.0.0.1", ClientPort: 2181}},
		{"zk1:2888:3888;0.0.0.0:2181", Server{ID: 1, Host: "zk1", PeerPort: 2888, ElectionPort: 3888, ClientPort: 2181}},
		{"[::1]:2888:3888", Server{ID: 1, Host: "::1", PeerPort: 2888, ElectionPort: 3888}},
		{"[fe80::1]:2888:3888:observer;[fe80::1]:2181", Server{ID: 1, Host: "fe80::1", PeerPort: 2888, ElectionPort: 3888, Observer: true, ClientHost: "fe80::1", ClientPort: 2181}},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			c := mustParse(t, "server.1="+tt.value)
			if len(c.Servers) != 1 || c.Servers[0] != tt.want {
				t.Errorf("Servers = %+v, want %+v", c.Servers, tt.want)
			}
		})
	}
}

func TestServersSorted(t *testing.T) {
	c := mustParse(t, "server.3=c:1:2\nserver.1=a:1:2\nserver.2=b:1:2:observer\nserver.1=a2:1:2")
	var ids []int64
	for _, s := range c.Servers {
		ids = append(ids, s.ID)
	}
	if !reflect.DeepEqual(ids, []int64{1, 2, 3}) || c.Servers[0].Host != "a2" {
		t.Errorf("Servers = %+v", c.Servers)
	}
	if c.Participants() != 2 {
		t.Errorf("Participants = %d", c.Participants())
	}
}

func TestBadValues(t *testing.T) {
	tests := []struct {
		in   string
		line int
		key  string
	}{
		{"tickTime=abc", 1, "tickTime"},
		{"# x\nclientPort=21 81", 2, "clientPort"},
		{"clientPort=0x10", 1, "clientPort"},
		{"maxClientCnxns=99999999999", 1, "maxClientCnxns"},
		{"jute.maxbuffer=1M", 1, "jute.maxbuffer"},
		{"snapCount=0x", 1, "snapCount"},
		{"standaloneEnabled=yes", 1, "standaloneEnabled"},
		{"localSessionsEnabled=1", 1, "localSessionsEnabled"},
		{"electionAlg=1", 1, "electionAlg"},
		{"peerType=voter", 1, "peerType"},
		{"DigestAuthenticationProvider.digestAlg=RipeMD160", 1, "DigestAuthenticationProvider.digestAlg"},
		{"server.x=a:1:2", 1, "server.x"},
		{"server.1=a:1", 1, "server.1"},
		{"server.1=a:1:2:3:4", 1, "server.1"},
		{"server.1=a:1:2:voter", 1, "server.1"},
		{"server.1=a:99999:2", 1, "server.1"},
		{"server.1=a:1:2;b:c:2181", 1, "server.1"},
		{"server.1=a:1:2;2181;x", 1, "server.1"},
		{"server.1=[::1:2888:3888", 1, "server.1"},
		{"server.1=a:1:2|b:1:2", 1, "server.1"},
		{"server.1=:1:2", 1, "server.1"},
		{"syncEnabled=maybe", 1, "syncEnabled"},
		{"dynamicConfigFile=/x\nserver.1=a:1:2", 1, "dynamicConfigFile"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in), "")
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "line "+string(rune('0'+tt.line))) || !strings.Contains(msg, tt.key) {
				t.Errorf("error %q does not name line %d and key %s", msg, tt.line, tt.key)
			}
		})
	}
}

func TestUnknownKeysWarn(t *testing.T) {
	c := mustParse(t, "dataDir=/d\nclientPort=1\nfrobnicate=1\nwarden.nope=2\ngroup.1=1:2:3\n"+
		"commitLogCount=500\nssl.keyStore.location=/k\nmetricsProvider.httpPort=7000\nzookeeper.leaderServes=no\n"+
		"autopurge.snapRetainCount=1")
	want := []string{"frobnicate", "warden.nope", "group.1", "autopurge.snapRetainCount"}
	if len(c.Warnings) != len(want) {
		t.Fatalf("warnings = %q, want one each for %v", c.Warnings, want)
	}
	for i, w := range want {
		if !strings.Contains(c.Warnings[i], w) {
			t.Errorf("warning %d = %q, want it to name %s", i, c.Warnings[i], w)
		}
	}
	if c.AutopurgeSnapRetainCount != 3 {
		t.Errorf("AutopurgeSnapRetainCount = %d, want 3", c.AutopurgeSnapRetainCount)
	}
	if c.Raw["frobnicate"] != "1" || c.Raw["zookeeper.leaderServes"] != "no" {
		t.Errorf("Raw = %v", c.Raw)
	}
}

func TestValidate(t *testing.T) {
	base := "dataDir=/d\nclientPort=2181\n"
	quorum := base + "initLimit=5\nsyncLimit=2\nserver.1=a:1:2\nserver.2=b:1:2\nserver.3=c:1:2\n"
	tests := []struct {
		name  string
		in    string
		myID  int64
		valid bool
	}{
		{"standalone", base, -1, true},
		{"no dataDir", "clientPort=1", -1, false},
		{"no client port", "dataDir=/d", -1, false},
		{"secure port only", "dataDir=/d\nsecureClientPort=2281", -1, true},
		{"address without port", "dataDir=/d\nsecureClientPort=2281\nclientPortAddress=1.2.3.4", -1, false},
		{"zero tick", base + "tickTime=0", -1, false},
		{"min above max", base + "minSessionTimeout=5000\nmaxSessionTimeout=4000", -1, false},
		{"min above default max", base + "tickTime=100\nminSessionTimeout=5000", -1, false},
		{"quorum", quorum, 2, true},
		{"quorum without myid", quorum, -1, false},
		{"myid not listed", quorum, 9, false},
		{"quorum without initLimit", strings.Replace(quorum, "initLimit=5", "", 1), 1, false},
		{"quorum without syncLimit", strings.Replace(quorum, "syncLimit=2", "", 1), 1, false},
		{"one server is standalone", base + "server.1=a:1:2", -1, true},
		{"one server not standalone", base + "initLimit=5\nsyncLimit=2\nstandaloneEnabled=false\nserver.1=a:1:2", 1, true},
		{"observer only", base + "server.1=a:1:2:observer", -1, false},
		{"one participant and an observer", base + "server.1=a:1:2\nserver.2=b:1:2:observer", 1, false},
		{"standaloneEnabled=false without servers", base + "standaloneEnabled=false", -1, false},
		{"bad port", "dataDir=/d\nclientPort=70000", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustParse(t, tt.in)
			c.MyID = tt.myID
			err := c.Validate()
			if tt.valid && err != nil {
				t.Errorf("Validate: %v", err)
			}
			if !tt.valid && !errors.Is(err, ErrInvalid) {
				t.Errorf("Validate = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestSessionTimeoutBounds(t *testing.T) {
	c := mustParse(t, "tickTime=1000\nminSessionTimeout=100")
	if minMs, maxMs := c.SessionTimeoutBounds(); minMs != 100 || maxMs != 20000 {
		t.Errorf("got %d, %d; want 100, 20000", minMs, maxMs)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadQuorumWithMyID(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(data, "myid"), "2\n")
	cfg := filepath.Join(dir, "zoo.cfg")
	writeFile(t, cfg, "tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir="+data+"\n"+
		"server.1=127.0.0.1:2888:3888;2181\nserver.2=127.0.0.1:2889:3889;127.0.0.1:2182\n"+
		"server.3=127.0.0.1:2890:3890:observer;2183\n")
	c, err := Load(cfg)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.MyID != 2 || c.ClientPort != 2182 || c.ClientPortAddress != "127.0.0.1" || c.Standalone() {
		t.Errorf("loaded %+v", c)
	}

	writeFile(t, cfg, "initLimit=10\nsyncLimit=5\ndataDir="+data+"\nclientPort=2181\n"+
		"server.1=a:1:2;2181\nserver.2=b:1:2;2182\nserver.3=c:1:2\n")
	if _, err := Load(cfg); !errors.Is(err, ErrInvalid) {
		t.Errorf("Load with contradicting clientPort = %v, want ErrInvalid", err)
	}

	writeFile(t, filepath.Join(data, "myid"), "two\n")
	if _, err := Load(cfg); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "two") {
		t.Errorf("Load with bad myid = %v", err)
	}
	if err := os.Remove(filepath.Join(data, "myid")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(cfg); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "myid") {
		t.Errorf("Load without myid = %v", err)
	}
}

func TestLoadDynamicConfigFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "myid"), "1")
	dyn := filepath.Join(dir, "zoo.cfg.dynamic.100000000")
	writeFile(t, dyn, "server.1=a:1:2;2181\nserver.2=b:1:2;2181\nserver.3=c:1:2;2181\n")
	cfg := filepath.Join(dir, "zoo.cfg")
	writeFile(t, cfg, "initLimit=1\nsyncLimit=1\ndataDir="+dir+"\ndynamicConfigFile="+dyn+"\n")
	c, err := Load(cfg)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(c.Servers) != 3 || c.ClientPort != 2181 || c.MyID != 1 {
		t.Errorf("loaded %+v", c)
	}
	writeFile(t, dyn, "server.1=a:1:2;2181\ntickTime=1\n")
	if _, err := Load(cfg); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "tickTime") {
		t.Errorf("Load with tickTime in dynamic file = %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.cfg")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

func TestParseBaseDir(t *testing.T) {
	c, err := Parse(strings.NewReader("dataDir=data\ndataLogDir=/abs\njava.security.auth.login.config=jaas.conf"), "/etc/zk")
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/etc/zk/data" || c.DataLogDir != "/abs" || c.JAASConfigFile != "/etc/zk/jaas.conf" {
		t.Errorf("paths %q %q %q", c.DataDir, c.DataLogDir, c.JAASConfigFile)
	}
}

func TestConfText(t *testing.T) {
	c := mustParse(t, "tickTime=2000\ndataDir=/data\ndataLogDir=/datalog\nclientPort=2181")
	want := "clientPort=2181\nsecureClientPort=-1\ndataDir=/data/version-2\ndataDirSize=67108880\n" +
		"dataLogDir=/datalog/version-2\ndataLogSize=1024\ntickTime=2000\nmaxClientCnxns=60\n" +
		"minSessionTimeout=4000\nmaxSessionTimeout=40000\nclientPortListenBacklog=-1\nserverId=0\n"
	if got := c.ConfText(67108880, 1024); got != want {
		t.Errorf("ConfText =\n%s\nwant\n%s", got, want)
	}
}

func TestQuorumSASLRefused(t *testing.T) {
	for _, key := range []string{"quorum.auth.enableSasl", "quorum.auth.learnerRequireSasl", "quorum.auth.serverRequireSasl", "zookeeper.quorum.auth.enableSasl"} {
		t.Run(key, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "myid"), []byte("1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			text := "tickTime=2000\ninitLimit=10\nsyncLimit=5\nclientPort=2181\ndataDir=" + dir + "\n" +
				"server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.2:2888:3888\nserver.3=127.0.0.3:2888:3888\n" + key + "=true\n"
			path := filepath.Join(dir, "zoo.cfg")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path)
			if err == nil {
				err = c.Validate()
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "does not implement SASL") {
				t.Fatalf("%s=true in an ensemble: %v, want a refusal", key, err)
			}
		})
	}
}
