package containerenv

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/config"
)

// environ turns "NAME=value\x00NAME=value..." (as /proc/self/environ
// holds an environment) into a lookup.
func environ(s string) func(string) (string, bool) {
	env := map[string]string{}
	for kv := range strings.SplitSeq(s, "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return lookupIn(env)
}

// FuzzEnv reads arbitrary container environments: no panic, Validate's
// errors wrap ErrInvalid, and an environment Validate accepts writes a
// zoo.cfg the server parses, with the values, whitelist and server lines
// the variables gave (unless ZOO_CFG_EXTRA sets the same key).
func FuzzEnv(f *testing.F) {
	f.Add("")
	f.Add("ZOO_MY_ID=2\x00ZOO_SERVERS=server.1=zoo1:2888:3888;2181 server.2=zoo2:2888:3888;2181 server.3=zoo3:2888:3888;2181")
	f.Add("ZOO_DATA_DIR=/var/lib/zk\x00ZOO_DATA_LOG_DIR=/var/lib/zklog\x00ZOO_TICK_TIME=500\x00ZOO_INIT_LIMIT=10\x00" +
		"ZOO_SYNC_LIMIT=4\x00ZOO_AUTOPURGE_SNAPRETAINCOUNT=5\x00ZOO_AUTOPURGE_PURGEINTERVAL=24\x00ZOO_MAX_CLIENT_CNXNS=0\x00" +
		"ZOO_STANDALONE_ENABLED=false\x00ZOO_ADMINSERVER_ENABLED=false\x00ZOO_SERVERS=server.1=a:2888:3888;2181\tserver.2=b:2888:3888:observer;2181\x00" +
		"ZOO_4LW_COMMANDS_WHITELIST=srvr,ruok,conf\x00ZOO_CFG_EXTRA=metricsProvider.httpPort=7000  skipACL=yes")
	f.Add("ZOO_TICK_TIME=abc\x00ZOO_DATA_DIR=relative")
	f.Add("ZOO_CFG_EXTRA=tickTime=100 dataDir=/x")
	f.Fuzz(func(t *testing.T, env string) {
		e := Lookup(environ(env))
		if err := e.Validate(); err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error without ErrInvalid: %v", err)
			}
			return
		}
		text := e.ZooCfg()
		c, err := config.Parse(strings.NewReader(text), "")
		if err != nil {
			t.Fatalf("Validate accepted an environment whose zoo.cfg does not parse: %v\n%s", err, text)
		}
		// The keys ZOO_CFG_EXTRA sets, as the server reads them (trimmed,
		// unescaped, with or without the zookeeper. prefix).
		extra := map[string]bool{}
		for _, kv := range e.Extra {
			one, _ := config.Parse(strings.NewReader(kv), "")
			for k := range one.Raw {
				extra[k], extra[strings.TrimPrefix(k, "zookeeper.")] = true, true
			}
		}
		for _, v := range variables {
			if v.key == "" || extra[v.key] {
				continue
			}
			if got, _ := c.Lookup(v.key); got != *v.field(&e) {
				t.Fatalf("%s=%q is %s=%q in zoo.cfg\n%s", v.name, *v.field(&e), v.key, got, text)
			}
		}
		if got, _ := c.Lookup("4lw.commands.whitelist"); !extra["4lw.commands.whitelist"] && got != e.FourLetterWhitelist {
			t.Fatalf("ZOO_4LW_COMMANDS_WHITELIST=%q is %q in zoo.cfg\n%s", e.FourLetterWhitelist, got, text)
		}
		if !extra["dataDir"] && c.DataDir != e.DataDir {
			t.Fatalf("ZOO_DATA_DIR=%q, the server's dataDir is %q", e.DataDir, c.DataDir)
		}
		if n, _ := strconv.Atoi(e.TickTime); !extra["tickTime"] && c.TickTime != n {
			t.Fatalf("ZOO_TICK_TIME=%q, the server's tickTime is %d", e.TickTime, c.TickTime)
		}
		ids := map[int64]bool{}
		for _, s := range e.Servers {
			k, _, _ := strings.Cut(s, "=")
			id, _ := strconv.ParseInt(strings.TrimPrefix(k, "server."), 10, 64)
			ids[id] = true
		}
		if len(extra) == 0 && len(c.Servers) != len(ids) {
			t.Fatalf("ZOO_SERVERS names %d servers, zoo.cfg %d\n%s", len(ids), len(c.Servers), text)
		}
	})
}
