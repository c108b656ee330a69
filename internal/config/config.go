package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wardenzk/warden/internal/auth"
)

// ErrInvalid is wrapped by every error that reports a bad configuration:
// a malformed value, a missing required key, or keys that contradict each
// other. The message names the key (and the line, when parsing).
var ErrInvalid = errors.New("invalid configuration")

// Server is one "server.N" line: a member of the ensemble.
type Server struct {
	// ID is N of "server.N"; it matches the myid file of that server.
	ID int64
	// Host is the peer address (brackets of an IPv6 literal removed).
	Host string
	// PeerPort is the quorum port (ZooKeeper's 2888): Warden's raft traffic.
	PeerPort int
	// ElectionPort is ZooKeeper's leader-election port (3888); 0 when the
	// line has none. Warden does not need it (raft elects over PeerPort)
	// but keeps it for compatibility and the conf/zabstate outputs.
	ElectionPort int
	// Observer is true for ":observer" members (raft learners).
	Observer bool
	// ClientHost is the client address after ';', "" when the line gives
	// none or only a port (then all interfaces, as ZooKeeper does).
	ClientHost string
	// ClientPort is the client port after ';', 0 when absent.
	ClientPort int
}

// Config is a ZooKeeper configuration as read from zoo.cfg (plus myid).
// Field comments give the zoo.cfg key, unit and ZooKeeper's default; Parse
// starts from those defaults, Default starts from Warden's embedded ones.
type Config struct {
	// TickTime is the basic time unit in milliseconds (tickTime; ZooKeeper
	// default 3000, the sample zoo.cfg and Default use 2000). Must be > 0.
	TickTime int
	// DataDir holds snapshots, and transaction logs unless DataLogDir is
	// set (dataDir; required; Default "./warden-data").
	DataDir string
	// DataLogDir holds transaction logs (dataLogDir; default DataDir).
	DataLogDir string
	// ClientPort is the plaintext client port (clientPort; 0 = not set,
	// no plaintext listener; Default 2181).
	ClientPort int
	// ClientPortAddress is the address the client port binds to
	// (clientPortAddress; "" = all interfaces; Default "127.0.0.1").
	ClientPortAddress string
	// SecureClientPort is the TLS client port (secureClientPort; 0 = off).
	SecureClientPort int
	// SecureClientPortAddress is the TLS bind address
	// (secureClientPortAddress; "" = all interfaces).
	SecureClientPortAddress string
	// ClientPortListenBacklog is the listen backlog of the client port
	// (clientPortListenBacklog; -1 = OS default).
	ClientPortListenBacklog int
	// MaxClientCnxns limits concurrent connections per client IP
	// (maxClientCnxns; default 60; 0 = unlimited).
	MaxClientCnxns int
	// MaxCnxns limits the total number of client connections
	// (maxCnxns; default 0 = unlimited).
	MaxCnxns int
	// MinSessionTimeout in milliseconds (minSessionTimeout; -1 = 2×TickTime).
	// Use SessionTimeoutBounds for the effective value.
	MinSessionTimeout int
	// MaxSessionTimeout in milliseconds (maxSessionTimeout; -1 = 20×TickTime).
	MaxSessionTimeout int

	// InitLimit is how many ticks a follower may take to connect and sync
	// with the leader (initLimit; required in a quorum).
	InitLimit int
	// SyncLimit is how many ticks a follower may lag behind the leader
	// (syncLimit; required in a quorum).
	SyncLimit int
	// Servers lists the server.N lines in increasing ID order.
	Servers []Server
	// MyID is this server's id from dataDir/myid; -1 when not known.
	MyID int64
	// StandaloneEnabled lets a single-server configuration run standalone
	// (standaloneEnabled; default true).
	StandaloneEnabled bool
	// ReconfigEnabled allows the reconfig operation (reconfigEnabled;
	// default false: reconfig fails with RECONFIGDISABLED).
	ReconfigEnabled bool
	// DynamicConfigFile names the file holding the server.N lines
	// (dynamicConfigFile; "" = they are in zoo.cfg).
	DynamicConfigFile string
	// LocalSessionsEnabled makes sessions local to the server the client
	// connects to (localSessionsEnabled; default false).
	LocalSessionsEnabled bool
	// LocalSessionsUpgradingEnabled upgrades a local session to a global
	// one on its first ephemeral create (localSessionsUpgradingEnabled;
	// default false).
	LocalSessionsUpgradingEnabled bool

	// FourLetterWhitelist is the set of enabled four-letter words
	// (4lw.commands.whitelist). "*" in the set enables all. When the key is
	// absent Warden enables DefaultFourLetterWhitelist, where ZooKeeper
	// enables only srvr. Query it with FourLetterAllowed.
	FourLetterWhitelist map[string]bool
	// ExtendedTypesEnabled allows TTL nodes (extendedTypesEnabled; default
	// false).
	ExtendedTypesEnabled bool
	// EnforceQuota makes quota violations fail with QUOTAEXCEEDED instead of
	// only being logged (enforceQuota; default false).
	EnforceQuota bool
	// ContainerCheckIntervalMs is how often empty containers and expired TTL
	// nodes are looked for, in ms (znode.container.checkIntervalMs; 60000).
	ContainerCheckIntervalMs int
	// ContainerMaxPerMinute caps container/TTL deletions per minute
	// (znode.container.maxPerMinute; default 10000).
	ContainerMaxPerMinute int
	// ContainerMaxNeverUsedIntervalMs deletes containers that never had a
	// child after this many ms (znode.container.maxNeverUsedIntervalMs;
	// default 0 = never).
	ContainerMaxNeverUsedIntervalMs int64
	// ReadOnlyModeEnabled lets a partitioned server serve read-only clients
	// (readonlymode.enabled; default false).
	ReadOnlyModeEnabled bool
	// AuditEnable turns on the audit log: one line for every state-changing
	// client request, as ZooKeeper 3.6+ writes (audit.enable; default
	// false; docs/audit.md).
	AuditEnable bool

	// SkipACL disables every ACL check (skipACL; "yes" enables, anything
	// else is no; default no).
	SkipACL bool
	// DigestAuthEnabled enables the digest scheme
	// (DigestAuthenticationProvider.enabled; default true).
	DigestAuthEnabled bool
	// SuperDigest is "super:<base64 sha1>"; a digest login matching it is
	// super (DigestAuthenticationProvider.superDigest; default none).
	SuperDigest string
	// DigestAlg is the digest scheme's hash
	// (DigestAuthenticationProvider.digestAlg; default SHA1).
	DigestAlg auth.DigestAlg
	// AllowSkipACL lets skipACL=yes take effect (warden.allowSkipACL;
	// default false: skipACL=yes alone stops the start).
	AllowSkipACL bool
	// AllowSASLFailedClients keeps a connection whose SASL login failed
	// (allowSaslFailedClients; default false), unless SASL is required.
	AllowSASLFailedClients bool
	// X509SuperUser is the certificate DN treated as super
	// (X509AuthenticationProvider.superUser; none).
	X509SuperUser string
	// AuthProviders maps N of authProvider.N to the Java class named there,
	// e.g. "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
	// (which is how ZooKeeper enables the sasl scheme).
	AuthProviders map[string]string
	// JAASConfigFile is the JAAS login file holding SASL users
	// (java.security.auth.login.config; none = no SASL).
	JAASConfigFile string
	// SASLServerContext is the JAAS section used by the server
	// (sasl.serverconfig; default "Server").
	SASLServerContext string
	// EnforceAuthEnabled rejects requests of connections that have not
	// authenticated with one of EnforceAuthSchemes (enforce.auth.enabled;
	// default false).
	EnforceAuthEnabled bool
	// EnforceAuthSchemes lists the schemes accepted by EnforceAuthEnabled
	// (enforce.auth.schemes; comma separated).
	EnforceAuthSchemes []string
	// SessionRequireClientSASLAuth is the older switch requiring sasl
	// (sessionRequireClientSASLAuth; default false).
	SessionRequireClientSASLAuth bool

	// JuteMaxBuffer is the largest accepted record in bytes
	// (jute.maxbuffer; default 0xfffff = 1048575).
	JuteMaxBuffer int
	// GlobalOutstandingLimit is the number of in-flight requests above
	// which the server stops reading from clients (globalOutstandingLimit;
	// default 1000).
	GlobalOutstandingLimit int
	// Limits are the connection, request and large-request throttles
	// (limits.go).
	Limits Limits
	// OutstandingHandshakeLimit bounds the TLS handshakes in progress on
	// the client ports; past it a new connection is closed
	// (netty.server.outstandingHandshake.limit; default -1 = no bound).
	OutstandingHandshakeLimit int
	// ForceSync fsyncs the transaction log before acknowledging (forceSync;
	// "no" disables, anything else is yes; default yes).
	ForceSync bool
	// SnapCount is the number of transactions between snapshots
	// (snapCount; default 100000).
	SnapCount int
	// PreAllocSizeKB is the size in KiB of each write-ahead log segment,
	// which is preallocated whole (preAllocSize, ZooKeeper's step of
	// preallocation of its log files; default 65536, 64 MiB; values below
	// 4 are read as 4).
	PreAllocSizeKB int64
	// SnapSizeLimitInKb also triggers a snapshot once the transactions
	// since the last one add up to this many KiB (snapSizeLimitInKb;
	// default 4194304, i.e. 4 GiB; 0 or less disables the size trigger).
	SnapSizeLimitInKb int64
	// AutopurgeSnapRetainCount is how many snapshots autopurge keeps
	// (autopurge.snapRetainCount; default 3, values below 3 become 3).
	AutopurgeSnapRetainCount int
	// AutopurgePurgeInterval is the autopurge period in hours
	// (autopurge.purgeInterval; default 0 = off).
	AutopurgePurgeInterval int

	// AdminEnableServer starts the HTTP AdminServer (admin.enableServer;
	// default true, as in ZooKeeper 3.5–3.9).
	AdminEnableServer bool
	// AdminServerAddress is its bind address (admin.serverAddress;
	// default "0.0.0.0").
	AdminServerAddress string
	// AdminServerPort is its port (admin.serverPort; default 8080).
	AdminServerPort int
	// AdminCommandURL is the URL prefix of commands (admin.commandURL;
	// default "/commands").
	AdminCommandURL string

	// MembershipVersion is the version of Servers: 0 for server lines
	// read from zoo.cfg, the zxid of the reconfig that made them for the
	// membership a running server reports (Server.Config).
	MembershipVersion int64
	// File is the zoo.cfg Load read ("" for a configuration built in
	// memory). A committed reconfig rewrites it, as ZooKeeper does, to
	// point at the new dynamic config file.
	File string
	// Raw holds every key exactly as read (trimmed), with its trimmed value;
	// a key given twice keeps its last value.
	Raw map[string]string
	// Warnings lists problems that do not stop the server: unknown keys,
	// values ZooKeeper would silently read as false, unsupported features.
	Warnings []string
}

// DefaultFourLetterWhitelist is the set of four-letter words Warden enables
// when 4lw.commands.whitelist is absent: the read-only, side-effect-free
// ones health checks and monitoring use. (ZooKeeper enables only srvr.)
var DefaultFourLetterWhitelist = []string{"ruok", "srvr", "stat", "mntr", "conf", "envi", "isro"}

// FourLetterCommands lists every four-letter word ZooKeeper knows; "*" in
// the whitelist enables all of them.
var FourLetterCommands = []string{
	"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "hash", "isro",
	"mntr", "ruok", "srst", "srvr", "stat", "stmk", "wchc", "wchp", "wchs",
}

// zkDefaults returns ZooKeeper's own defaults, the starting point of Parse.
func zkDefaults() Config {
	return Config{
		TickTime:                  3000,
		ClientPortListenBacklog:   -1,
		MaxClientCnxns:            60,
		MinSessionTimeout:         -1,
		MaxSessionTimeout:         -1,
		MyID:                      -1,
		StandaloneEnabled:         true,
		ContainerCheckIntervalMs:  60000,
		ContainerMaxPerMinute:     10000,
		DigestAuthEnabled:         true,
		DigestAlg:                 auth.SHA1,
		SASLServerContext:         "Server",
		JuteMaxBuffer:             0xfffff,
		GlobalOutstandingLimit:    1000,
		OutstandingHandshakeLimit: -1,
		Limits:                    defaultLimits(),
		ForceSync:                 true,
		SnapCount:                 100000,
		SnapSizeLimitInKb:         4194304,
		PreAllocSizeKB:            65536,
		AutopurgeSnapRetainCount:  3,
		AdminEnableServer:         true,
		AdminServerAddress:        "0.0.0.0",
		AdminServerPort:           8080,
		AdminCommandURL:           "/commands",
		FourLetterWhitelist:       whitelistSet(DefaultFourLetterWhitelist),
		AuthProviders:             map[string]string{},
		Raw:                       map[string]string{},
	}
}

// Default returns the configuration `warden server` runs with when given no
// file: a standalone server on 127.0.0.1:2181 keeping its data in
// ./warden-data, tickTime 2000, and ZooKeeper's defaults for the rest.
func Default() Config {
	c := zkDefaults()
	c.TickTime = 2000
	c.DataDir = "./warden-data"
	c.DataLogDir = c.DataDir
	c.ClientPort = 2181
	c.ClientPortAddress = "127.0.0.1"
	// Like the client port, the AdminServer (its snapshot command, the
	// console) stays on loopback until a zoo.cfg says otherwise.
	c.AdminServerAddress = "127.0.0.1"
	return c
}

func whitelistSet(cmds []string) map[string]bool {
	set := make(map[string]bool, len(cmds))
	for _, c := range cmds {
		set[c] = true
	}
	return set
}

// SessionTimeoutBounds returns the effective minimum and maximum session
// timeouts in milliseconds: -1 (unset) becomes 2×TickTime and 20×TickTime.
func (c *Config) SessionTimeoutBounds() (minMs, maxMs int) {
	minMs, maxMs = c.MinSessionTimeout, c.MaxSessionTimeout
	if minMs == -1 {
		minMs = 2 * c.TickTime
	}
	if maxMs == -1 {
		maxMs = 20 * c.TickTime
	}
	return minMs, maxMs
}

// FourLetterAllowed reports whether the four-letter word cmd may run: it is
// in the whitelist, the whitelist holds "*", it is srvr (always enabled,
// zkServer.sh status depends on it), or it is isro and read-only mode is on.
func (c *Config) FourLetterAllowed(cmd string) bool {
	switch {
	case cmd == "srvr":
		return true
	case cmd == "isro" && c.ReadOnlyModeEnabled:
		return true
	default:
		return c.FourLetterWhitelist["*"] || c.FourLetterWhitelist[cmd]
	}
}

// Participants returns how many servers vote (server.N lines that are not
// observers).
func (c *Config) Participants() int {
	n := 0
	for _, s := range c.Servers {
		if !s.Observer {
			n++
		}
	}
	return n
}

// Standalone reports whether this configuration runs a single server: no
// server.N lines, or a single participant while standaloneEnabled is true
// (ZooKeeper's QuorumPeerConfig.isDistributed, negated).
func (c *Config) Standalone() bool {
	return len(c.Servers) == 0 || (c.StandaloneEnabled && c.Participants() <= 1)
}

// Self returns this server's own server.N entry (the one whose ID is MyID).
func (c *Config) Self() (Server, bool) {
	for _, s := range c.Servers {
		if s.ID == c.MyID {
			return s, true
		}
	}
	return Server{}, false
}

// Lookup returns the value of a zoo.cfg key however it was spelled in the
// file: name may be given with or without the "zookeeper." prefix. It reads
// Raw, so it also serves keys that have no Config field.
func (c *Config) Lookup(name string) (string, bool) {
	want := canonicalKey(name)
	var value string
	found := false
	for k, v := range c.Raw {
		if canonicalKey(k) == want {
			// Prefer the spelling without the prefix when both are given,
			// so the answer does not depend on map order.
			if !found || !strings.HasPrefix(k, zkPrefix) {
				value, found = v, true
			}
		}
	}
	return value, found
}

// Validate checks the configuration the way ZooKeeper does at startup and
// returns an error wrapping ErrInvalid for the first problem found.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("config: "+format+": %w", append(args, ErrInvalid)...)
	}
	if c.TickTime <= 0 {
		return bad("tickTime is not set (must be a positive number of milliseconds)")
	}
	if c.DataDir == "" {
		return bad("dataDir is not set")
	}
	if c.DataLogDir == "" {
		return bad("dataLogDir is empty (leave it out to use dataDir)")
	}
	for _, p := range []struct {
		key  string
		port int
	}{
		{"clientPort", c.ClientPort},
		{"secureClientPort", c.SecureClientPort},
		{"admin.serverPort", c.AdminServerPort},
	} {
		if p.port < 0 || p.port > 65535 {
			return bad("%s=%d is not a TCP port", p.key, p.port)
		}
	}
	if c.ClientPort == 0 && c.ClientPortAddress != "" {
		return bad("clientPortAddress is set but clientPort is not set")
	}
	if c.SecureClientPort == 0 && c.SecureClientPortAddress != "" {
		return bad("secureClientPortAddress is set but secureClientPort is not set")
	}
	if c.ClientPort == 0 && c.SecureClientPort == 0 {
		return bad("neither clientPort nor secureClientPort is set")
	}
	minMs, maxMs := c.SessionTimeoutBounds()
	if minMs > maxMs {
		return bad("minSessionTimeout (%d) must not be larger than maxSessionTimeout (%d)", minMs, maxMs)
	}
	if c.JuteMaxBuffer <= 0 {
		return bad("jute.maxbuffer=%d must be positive", c.JuteMaxBuffer)
	}
	if err := c.validateSecurity(); err != nil {
		return err
	}
	if err := c.Limits.validate(); err != nil {
		return err
	}
	return c.validateQuorum()
}

func (c *Config) validateQuorum() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("config: "+format+": %w", append(args, ErrInvalid)...)
	}
	participants := c.Participants()
	observers := len(c.Servers) - participants
	seen := map[int64]bool{}
	for _, s := range c.Servers {
		if seen[s.ID] {
			return bad("server.%d is given twice", s.ID)
		}
		seen[s.ID] = true
	}
	switch {
	case participants == 0 && !c.StandaloneEnabled:
		return bad("standaloneEnabled=false needs at least one participant server.N line")
	case participants == 0 && observers > 0:
		return bad("observers without participants is an invalid configuration")
	case participants == 1 && c.StandaloneEnabled && observers > 0:
		return bad("observers without a quorum is an invalid configuration")
	}
	if c.Standalone() {
		return nil
	}
	if c.InitLimit <= 0 {
		return bad("initLimit is not set")
	}
	if c.SyncLimit <= 0 {
		return bad("syncLimit is not set")
	}
	if c.MyID < 0 {
		return bad("myid file is missing from dataDir %s", c.DataDir)
	}
	if _, ok := c.Self(); !ok {
		return bad("myid %d has no server.%d line", c.MyID, c.MyID)
	}
	// Never a silent downgrade: quorum SASL is refused, as Warden cannot
	// do it; sslQuorum (TLS between members) authenticates members instead.
	for _, key := range []string{"quorum.auth.enableSasl", "quorum.auth.learnerRequireSasl", "quorum.auth.serverRequireSasl"} {
		if c.LookupBool(key) {
			return bad("%s=true: Warden does not implement SASL between ensemble members, "+
				"and will not run an ensemble that is weaker than the configuration asks; use sslQuorum=true with ssl.quorum.keyStore "+
				"and ssl.quorum.trustStore to authenticate members by certificate instead", key)
		}
	}
	return nil
}
