package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// checkMembership checks that the membership text of c (what
// /zookeeper/config holds, in the dynamic config file format) reads back
// as a dynamic config file to the same servers.
func checkMembership(t *testing.T, c Config, dir string) {
	t.Helper()
	for _, s := range c.Servers {
		// Like ZooKeeper's, the text does not escape: a host holding what
		// a properties file escapes (parsed from \\ or \uXXXX) does not
		// survive it. No real host name does.
		if strings.ContainsFunc(s.Host+s.ClientHost, func(r rune) bool { return r < ' ' || r == '\\' }) {
			return
		}
	}
	text := c.MembershipText()
	name := filepath.Join(dir, "membership")
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	back := zkDefaults()
	if err := back.loadDynamic(name); err != nil {
		t.Fatalf("the membership text is not a dynamic config file: %v\n%s", err, text)
	}
	want := slices.Clone(c.Servers)
	for i := range want {
		if want[i].ClientPort == 0 {
			want[i].ClientHost = "" // a host without a port is not written
		}
	}
	if len(want) == 0 {
		want = nil
	}
	if !reflect.DeepEqual(back.Servers, want) {
		t.Fatalf("membership reads back as\n%+v\nwant\n%+v\n%s", back.Servers, want, text)
	}
}

func checkConfig(t *testing.T, c Config) {
	t.Helper()
	if !slices.IsSortedFunc(c.Servers, func(x, y Server) int { return compareInt64(x.ID, y.ID) }) {
		t.Fatalf("servers out of id order: %+v", c.Servers)
	}
	for i := 1; i < len(c.Servers); i++ {
		if c.Servers[i].ID == c.Servers[i-1].ID {
			t.Fatalf("server.%d twice", c.Servers[i].ID)
		}
	}
	for _, s := range c.Servers {
		if s.Host == "" || s.PeerPort <= 0 || s.PeerPort > 65535 || s.ElectionPort <= 0 || s.ElectionPort > 65535 ||
			s.ClientPort < 0 || s.ClientPort > 65535 {
			t.Fatalf("bad server %+v", s)
		}
	}
	for k := range c.Raw {
		c.Lookup(k)
	}
	c.ConfText(1, 2)
	c.SessionTimeoutBounds()
	c.FourLetterAllowed("ruok")
}

// FuzzParse parses arbitrary zoo.cfg files: errors wrap ErrInvalid, and
// an accepted file gives servers in id order, each well formed, whose
// membership text reads back as a dynamic config file to the same
// servers.
func FuzzParse(f *testing.F) {
	sample, err := os.ReadFile("testdata/zoo_sample.cfg")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(sample))
	f.Add("tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir=/d\nclientPort=2181\n" +
		"server.1=127.0.0.1:2888:3888;2181\nserver.2=[::1]:2889:3889:participant;[::1]:2182\n" +
		"server.3=h:2890:3890:observer;0.0.0.0:2183\nserver.4=h4:1:2\n")
	f.Add("zookeeper.dataDir=d\ndataLogDir=l\n4lw.commands.whitelist=ruok, stat ,*\nmaxClientCnxns=0x10\nstandaloneEnabled=no\n")
	f.Add("dynamicConfigFile=zoo.cfg.dynamic.100000000\nauthProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n")
	f.Add("server.1=a:1:2|b:1:2\nserver.x=a:1:2\nserver.2=[::1:1:2\n")
	f.Add("server.1=a\\\\b:1:2\nserver.2=a\\u0020b:1:2;\\t3\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in string) {
		c, err := Parse(strings.NewReader(in), "/base")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error without ErrInvalid: %v", err)
			}
			return
		}
		checkConfig(t, c)
		c.Validate()
		checkMembership(t, c, dir)
	})
}

// FuzzLoad loads a fuzzed zoo.cfg, dynamic config file and myid from a
// data directory: errors wrap ErrInvalid or name a file that could not be
// read; an accepted configuration validates, and its membership text
// reads back to the same servers.
func FuzzLoad(f *testing.F) {
	f.Add("tickTime=2000\ninitLimit=10\nsyncLimit=5\n",
		"server.1=127.0.0.1:2888:3888;2181\nserver.2=127.0.0.1:2889:3889;127.0.0.1:2182\nversion=100000000\n", "2\n")
	f.Add("tickTime=2000\nclientPort=2181\n", "", "")
	f.Add("initLimit=1\nsyncLimit=1\nclientPort=2182\n", "server.1=a:1:2;2181\nserver.2=b:1:2;2181\n", "1")
	f.Add("initLimit=1\nsyncLimit=1\n", "server.1=a:1:2;2181\ngroup.1=1\nweight.1=1\n", " 1 \nx")
	f.Add("initLimit=1\nsyncLimit=1\n", "server.1=a:1:2;2181\ntickTime=1\n", "1")
	dir := f.TempDir()
	cfgName, dynName, myidName := filepath.Join(dir, "zoo.cfg"), filepath.Join(dir, "zoo.cfg.dynamic"), filepath.Join(dir, "myid")
	f.Fuzz(func(t *testing.T, cfg, dyn, myid string) {
		text := "dataDir=" + dir + "\n" + cfg
		if dyn != "" {
			text += "\ndynamicConfigFile=" + dynName + "\n"
		}
		for name, content := range map[string]string{cfgName: text, dynName: dyn, myidName: myid} {
			if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := Load(cfgName)
		if err != nil {
			var pe *fs.PathError
			if !errors.Is(err, ErrInvalid) && !errors.As(err, &pe) {
				t.Fatalf("error without ErrInvalid or a file: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Load accepted what Validate refuses: %v", err)
		}
		checkConfig(t, c)
		checkMembership(t, c, dir)
	})
}
