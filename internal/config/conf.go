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
	if c.Standalone() {
		return b.String()
	}
	// A quorum peer adds its quorum settings and the membership
	// (QuorumPeer.dumpConf).
	self, _ := c.Self()
	peerType := 0
	if self.Observer {
		peerType = 1
	}
	fmt.Fprintf(&b, "initLimit=%d\n", c.InitLimit)
	fmt.Fprintf(&b, "syncLimit=%d\n", c.SyncLimit)
	fmt.Fprintf(&b, "electionAlg=3\n")
	fmt.Fprintf(&b, "electionPort=%d\n", self.ElectionPort)
	fmt.Fprintf(&b, "quorumPort=%d\n", self.PeerPort)
	fmt.Fprintf(&b, "peerType=%d\n", peerType)
	// The membership ends the output, without a final newline.
	fmt.Fprintf(&b, "membership: \n%s", c.MembershipText())
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

// MembershipText returns the content of /zookeeper/config for Servers, in
// ZooKeeper's format (see FormatMembership), at MembershipVersion (0 for
// a static configuration). A server line without a client
// address prints none, as ZooKeeper prints it (even for this server, whose
// clientPort comes from zoo.cfg).
func (c Config) MembershipText() string { return FormatMembership(c.Servers, c.MembershipVersion) }

// hostText brackets an IPv6 literal, as server lines write it.
func hostText(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}
