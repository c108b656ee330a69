package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// ConfText returns the output of the conf four-letter word for a standalone
// server (ZooKeeperServer.dumpConf), one "key=value\n" line each:
//
//	clientPort=2181
//	secureClientPort=-1
//	dataDir=/abs/data/version-2
//	dataDirSize=<dataDirSize>
//	dataLogDir=/abs/datalog/version-2
//	dataLogSize=<dataLogSize>
//	tickTime=2000
//	maxClientCnxns=60
//	minSessionTimeout=4000
//	maxSessionTimeout=40000
//	clientPortListenBacklog=-1
//	serverId=0
//
// Ports that are not set print -1; directories are made absolute. The sizes
// (bytes of snapshot and log files) are measured by the caller.
func (c Config) ConfText(dataDirSize, dataLogSize int64) string {
	port := func(p int) int {
		if p == 0 {
			return -1
		}
		return p
	}
	minMs, maxMs := c.SessionTimeoutBounds()
	serverID := int64(0)
	if !c.Standalone() && c.MyID > 0 {
		serverID = c.MyID
	}
	var b strings.Builder
	fmt.Fprintf(&b, "clientPort=%d\n", port(c.ClientPort))
	fmt.Fprintf(&b, "secureClientPort=%d\n", port(c.SecureClientPort))
	fmt.Fprintf(&b, "dataDir=%s\n", versionDir(c.DataDir))
	fmt.Fprintf(&b, "dataDirSize=%d\n", dataDirSize)
	fmt.Fprintf(&b, "dataLogDir=%s\n", versionDir(c.DataLogDir))
	fmt.Fprintf(&b, "dataLogSize=%d\n", dataLogSize)
	fmt.Fprintf(&b, "tickTime=%d\n", c.TickTime)
	fmt.Fprintf(&b, "maxClientCnxns=%d\n", c.MaxClientCnxns)
	fmt.Fprintf(&b, "minSessionTimeout=%d\n", minMs)
	fmt.Fprintf(&b, "maxSessionTimeout=%d\n", maxMs)
	fmt.Fprintf(&b, "clientPortListenBacklog=%d\n", c.ClientPortListenBacklog)
	fmt.Fprintf(&b, "serverId=%d\n", serverID)
	return b.String()
}

// versionDir is the absolute "version-2" directory under dir, where
// ZooKeeper keeps its files and which conf reports.
func versionDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Join(dir, "version-2")
}
