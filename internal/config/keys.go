package config

import (
	"fmt"
	"strconv"
	"strings"
)

// zkPrefix is the prefix ZooKeeper puts on every zoo.cfg key it does not
// know before exporting it as a Java system property. Keys are accepted with
// or without it.
const zkPrefix = "zookeeper."

// canonicalKey is the name a key is looked up by: without "zookeeper.".
func canonicalKey(k string) string { return strings.TrimPrefix(k, zkPrefix) }

// assignment is one key being applied to a Config.
type assignment struct {
	c     *Config
	key   string // as spelled in the file
	value string
	line  int
}

func (a *assignment) fail(format string, args ...any) error {
	return fmt.Errorf("config: line %d: %s=%q: %s: %w", a.line, a.key, a.value, fmt.Sprintf(format, args...), ErrInvalid)
}

func (a *assignment) warn(format string, args ...any) {
	a.c.Warnings = append(a.c.Warnings, fmt.Sprintf("line %d: %s: %s", a.line, a.key, fmt.Sprintf(format, args...)))
}

// setter applies one key's value.
type setter func(a *assignment) error

// keySetters maps canonical key names to what they set. The parse style of
// each key follows how ZooKeeper reads it: QuorumPeerConfig keys use
// Integer.parseInt and a strict true/false; system properties use
// Integer.getInteger (decimal, 0x/# hex, 0 octal) and Boolean.parseBoolean
// or the yes/no comparisons of the code that reads them.
var keySetters = map[string]setter{
	"tickTime":                intKey(func(c *Config) *int { return &c.TickTime }),
	"dataDir":                 stringKey(func(c *Config) *string { return &c.DataDir }),
	"dataLogDir":              stringKey(func(c *Config) *string { return &c.DataLogDir }),
	"clientPort":              intKey(func(c *Config) *int { return &c.ClientPort }),
	"clientPortAddress":       stringKey(func(c *Config) *string { return &c.ClientPortAddress }),
	"secureClientPort":        intKey(func(c *Config) *int { return &c.SecureClientPort }),
	"secureClientPortAddress": stringKey(func(c *Config) *string { return &c.SecureClientPortAddress }),
	"clientPortListenBacklog": intKey(func(c *Config) *int { return &c.ClientPortListenBacklog }),
	"maxClientCnxns":          intKey(func(c *Config) *int { return &c.MaxClientCnxns }),
	"maxCnxns":                decodeIntKey(func(c *Config) *int { return &c.MaxCnxns }),
	"minSessionTimeout":       intKey(func(c *Config) *int { return &c.MinSessionTimeout }),
	"maxSessionTimeout":       intKey(func(c *Config) *int { return &c.MaxSessionTimeout }),

	"initLimit":                               intKey(func(c *Config) *int { return &c.InitLimit }),
	"syncLimit":                               intKey(func(c *Config) *int { return &c.SyncLimit }),
	"standaloneEnabled":                       strictBoolKey(func(c *Config) *bool { return &c.StandaloneEnabled }),
	"reconfigEnabled":                         strictBoolKey(func(c *Config) *bool { return &c.ReconfigEnabled }),
	"dynamicConfigFile":                       stringKey(func(c *Config) *string { return &c.DynamicConfigFile }),
	"localSessionsEnabled":                    strictBoolKey(func(c *Config) *bool { return &c.LocalSessionsEnabled }),
	"localSessionsUpgradingEnabled":           strictBoolKey(func(c *Config) *bool { return &c.LocalSessionsUpgradingEnabled }),
	"electionAlg":                             setElectionAlg,
	"peerType":                                setPeerType,
	"connectToLearnerMasterLimit":             intKey(nil),
	"observerMasterPort":                      intKey(nil),
	"quorum.cnxn.threads.size":                intKey(nil),
	"syncEnabled":                             strictBoolKey(nil),
	"quorumListenOnAllIPs":                    strictBoolKey(nil),
	"sslQuorum":                               strictBoolKey(nil),
	"portUnification":                         strictBoolKey(nil),
	"sslQuorumReloadCertFiles":                strictBoolKey(nil),
	"quorum.auth.enableSasl":                  strictBoolKey(nil),
	"quorum.auth.learnerRequireSasl":          strictBoolKey(nil),
	"quorum.auth.serverRequireSasl":           strictBoolKey(nil),
	"multiAddress.enabled":                    strictBoolKey(nil),
	"multiAddress.reachabilityCheckEnabled":   strictBoolKey(nil),
	"multiAddress.reachabilityCheckTimeoutMs": intKey(nil),
	"jvm.pause.monitor":                       strictBoolKey(nil),

	"4lw.commands.whitelist":                 setWhitelist,
	"extendedTypesEnabled":                   javaBoolKey(func(c *Config) *bool { return &c.ExtendedTypesEnabled }),
	"enforceQuota":                           javaBoolKey(func(c *Config) *bool { return &c.EnforceQuota }),
	"znode.container.checkIntervalMs":        decodeIntKey(func(c *Config) *int { return &c.ContainerCheckIntervalMs }),
	"znode.container.maxPerMinute":           decodeIntKey(func(c *Config) *int { return &c.ContainerMaxPerMinute }),
	"znode.container.maxNeverUsedIntervalMs": decodeLongKey(func(c *Config) *int64 { return &c.ContainerMaxNeverUsedIntervalMs }),
	"readonlymode.enabled":                   javaBoolKey(func(c *Config) *bool { return &c.ReadOnlyModeEnabled }),
	"audit.enable":                           javaBoolKey(func(c *Config) *bool { return &c.AuditEnable }),

	"skipACL":                                  yesKey(func(c *Config) *bool { return &c.SkipACL }),
	"DigestAuthenticationProvider.enabled":     javaBoolKey(func(c *Config) *bool { return &c.DigestAuthEnabled }),
	"DigestAuthenticationProvider.superDigest": stringKey(func(c *Config) *string { return &c.SuperDigest }),
	"DigestAuthenticationProvider.digestAlg":   setDigestAlg,
	"X509AuthenticationProvider.superUser":     stringKey(func(c *Config) *string { return &c.X509SuperUser }),
	"java.security.auth.login.config":          stringKey(func(c *Config) *string { return &c.JAASConfigFile }),
	"sasl.serverconfig":                        stringKey(func(c *Config) *string { return &c.SASLServerContext }),
	"enforce.auth.enabled":                     javaBoolKey(func(c *Config) *bool { return &c.EnforceAuthEnabled }),
	"enforce.auth.schemes":                     setEnforceAuthSchemes,
	"sessionRequireClientSASLAuth":             javaBoolKey(func(c *Config) *bool { return &c.SessionRequireClientSASLAuth }),
	"allowSaslFailedClients":                   javaBoolKey(func(c *Config) *bool { return &c.AllowSASLFailedClients }),
	"warden.allowSkipACL":                      strictBoolKey(func(c *Config) *bool { return &c.AllowSkipACL }),

	"jute.maxbuffer":                          decodeIntKey(func(c *Config) *int { return &c.JuteMaxBuffer }),
	"globalOutstandingLimit":                  decodeIntKey(func(c *Config) *int { return &c.GlobalOutstandingLimit }),
	"netty.server.outstandingHandshake.limit": decodeIntKey(func(c *Config) *int { return &c.OutstandingHandshakeLimit }),
	"forceSync":                               notNoKey(func(c *Config) *bool { return &c.ForceSync }),
	"snapCount":                               decodeIntKey(func(c *Config) *int { return &c.SnapCount }),
	"snapSizeLimitInKb":                       decodeLongKey(func(c *Config) *int64 { return &c.SnapSizeLimitInKb }),
	"preAllocSize":                            decodeLongKey(func(c *Config) *int64 { return &c.PreAllocSizeKB }),
	"autopurge.snapRetainCount":               intKey(func(c *Config) *int { return &c.AutopurgeSnapRetainCount }),
	"autopurge.purgeInterval":                 intKey(func(c *Config) *int { return &c.AutopurgePurgeInterval }),

	"admin.enableServer":  javaBoolKey(func(c *Config) *bool { return &c.AdminEnableServer }),
	"admin.serverAddress": stringKey(func(c *Config) *string { return &c.AdminServerAddress }),
	"admin.serverPort":    decodeIntKey(func(c *Config) *int { return &c.AdminServerPort }),
	"admin.commandURL":    stringKey(func(c *Config) *string { return &c.AdminCommandURL }),
}

// acceptedKeys are keys ZooKeeper 3.8 documents that Warden accepts but
// that do not (yet) change its behaviour. They are kept in Raw (see
// Config.Lookup) and produce no warning.
var acceptedKeys = setOf(
	// Advanced configuration.
	"commitLogCount", "txnLogSizeLimitInKb",
	"fsync.warningthresholdms", "maxResponseCacheSize", "maxGetChildrenResponseCacheSize",
	"emulate353TTLNodes", "watchManagerName", "watcherCleanThreadsNum", "watcherCleanThreshold",
	"watcherCleanIntervalInSeconds", "maxInProcessingDeadWatchers", "bitHashCacheSize",
	"fastForwardFromEdits", "serverCnxnFactory", "flushDelay",
	"maxWriteQueuePollTime", "maxBatchSize",
	"request_throttler.shutdownTimeout", "advancedFlowControlEnabled", "enableEagerACLCheck",
	"maxConcurrentSnapSyncs", "maxConcurrentDiffSyncs", "digest.enabled",
	"snapshot.compression.method", "snapshot.trust.empty", "audit.impl.class",
	"outstandingHandshake.limit",
	"learner.asyncSending", "learner.closeSocketAsync", "leader.closeSocketAsync",
	"forward_learner_requests_to_commit_processor_disabled", "serializeLastProcessedZxid.enabled",
	"closeSessionTxn.enabled", "datadir.autocreate",
	"db.autocreate", "jute.maxbuffer.extrasize", "nodeHashSize", "messageTracker.BufferSize",
	"messageTracker.Enabled", "tcpKeepAlive", "clientTcpKeepAlive", "leaderServes",
	"cnxTimeout", "quorumCnxnTimeoutMs", "electionPortBindRetry", "observer.reconnectDelayMs",
	"observer.election.DelayMs", "oraclePath", "initialConfig", "fips-mode",
	"leaderConnectDelayDuringRetryMs", "fastleader.minNotificationInterval",
	"fastleader.maxNotificationInterval", "learnerHandler.syncThrottle",
	"learner.sync.throttle", "sync.size", "snapshot.sizeFactor", "takeSnapshotOnStartup",
	// Authentication that Warden implements elsewhere or not at all
	// (superUser and superUser.N: Config.SASLSuperUser).
	"superUser",
	"SASLAuthenticationProvider.superPassword", "letAnySaslUserDoX",
	"kerberos.removeHostFromPrincipal", "kerberos.removeRealmFromPrincipal",
	"kerberos.canonicalizeHostNames", "ensembleAuthName", "IPAuthenticationProvider.usexforwardedfor",
	"client.portUnification", "quorum.auth.learner.saslLoginContext",
	"quorum.auth.server.saslLoginContext", "quorum.auth.kerberos.servicePrincipal",
	"sasl.client", "sasl.clientconfig",
	// AdminServer settings read by the admin package through Lookup.
	"admin.idleTimeout", "admin.forceHttps", "admin.needClientAuth", "admin.portUnification",
	"admin.snapshot.enabled", "admin.restore.enabled", "admin.rateLimiterIntervalInMS",
	// JVM pause monitor (Go has no JVM pauses).
	"jvm.pause.info-threshold.ms", "jvm.pause.warn-threshold.ms", "jvm.pause.sleep-time.ms",
	// Metrics provider (Prometheus is read by the metrics package through Lookup).
	"metricsProvider.className",
)

// acceptedPrefixes are documented key families accepted without a warning.
var acceptedPrefixes = []string{
	"ssl.", "superUser.", "metricsProvider.", "commitProcessor.", "nio.", "netty.", "admin.",
	"quorum.auth.", "jute.", "leader.", "learner.", "follower.", "observer.",
}

func setOf(keys ...string) map[string]bool {
	s := make(map[string]bool, len(keys))
	for _, k := range keys {
		s[k] = true
	}
	return s
}

// apply sets one key of c. Unknown keys become warnings, never errors.
func (a *assignment) apply() error {
	key := canonicalKey(a.key)
	if set, ok := keySetters[key]; ok {
		return set(a)
	}
	switch {
	case strings.HasPrefix(key, "server."):
		return a.addServer(strings.TrimPrefix(key, "server."))
	case strings.HasPrefix(key, "group.") || strings.HasPrefix(key, "weight."):
		a.warn("hierarchical quorums are not supported; all servers vote with weight 1")
		return nil
	case strings.HasPrefix(key, "authProvider."):
		a.c.AuthProviders[strings.TrimPrefix(key, "authProvider.")] = a.value
		return nil
	case strings.HasPrefix(key, "warden."):
		a.warn("unknown Warden setting; ignored")
		return nil
	case acceptedKeys[key]:
		return nil
	}
	for _, p := range acceptedPrefixes {
		if strings.HasPrefix(key, p) {
			return nil
		}
	}
	a.warn("unknown setting; ignored (ZooKeeper would export it as system property %s%s)", zkPrefix, key)
	return nil
}

// parseJavaInt parses like Integer.parseInt: optional sign, decimal digits,
// 32-bit range.
func parseJavaInt(s string) (int64, error) {
	if strings.ContainsRune(s, '_') {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, 32)
}

// parseJavaDecode parses like Long.decode: optional sign, then "0x", "0X" or
// "#" for hex, a leading "0" for octal, decimal otherwise.
func parseJavaDecode(s string, bits int) (int64, error) {
	neg := false
	rest := s
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		neg = rest[0] == '-'
		rest = rest[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(rest, "0x"), strings.HasPrefix(rest, "0X"):
		base, rest = 16, rest[2:]
	case strings.HasPrefix(rest, "#"):
		base, rest = 16, rest[1:]
	case len(rest) > 1 && rest[0] == '0':
		base, rest = 8, rest[1:]
	}
	if rest == "" || rest[0] == '-' || rest[0] == '+' || strings.ContainsRune(rest, '_') {
		return 0, strconv.ErrSyntax
	}
	u, err := strconv.ParseUint(rest, base, 64)
	if err != nil {
		return 0, err
	}
	limit := uint64(1) << (bits - 1)
	if (!neg && u >= limit) || (neg && u > limit) {
		return 0, strconv.ErrRange
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

func numberError(a *assignment, err error, kind string) error {
	if ne, ok := err.(*strconv.NumError); ok {
		err = ne.Err
	}
	if err == strconv.ErrRange {
		return a.fail("out of range for a %s", kind)
	}
	return a.fail("not a %s", kind)
}

// intKey reads a QuorumPeerConfig integer (Integer.parseInt). A nil field
// validates the value and keeps it only in Raw.
func intKey(field func(*Config) *int) setter {
	return func(a *assignment) error {
		n, err := parseJavaInt(a.value)
		if err != nil {
			return numberError(a, err, "32-bit decimal integer")
		}
		if field != nil {
			*field(a.c) = int(n)
		}
		return nil
	}
}

// decodeIntKey reads a system-property integer (Integer.getInteger, which
// decodes hex and octal). Java falls back to the default on a bad value;
// Warden reports it.
func decodeIntKey(field func(*Config) *int) setter {
	return func(a *assignment) error {
		n, err := parseJavaDecode(a.value, 32)
		if err != nil {
			return numberError(a, err, "32-bit integer")
		}
		*field(a.c) = int(n)
		return nil
	}
}

// decodeLongKey is decodeIntKey for Long.getLong.
func decodeLongKey(field func(*Config) *int64) setter {
	return func(a *assignment) error {
		n, err := parseJavaDecode(a.value, 64)
		if err != nil {
			return numberError(a, err, "64-bit integer")
		}
		*field(a.c) = n
		return nil
	}
}

func stringKey(field func(*Config) *string) setter {
	return func(a *assignment) error {
		*field(a.c) = a.value
		return nil
	}
}

// strictBoolKey reads a QuorumPeerConfig boolean: "true" or "false" in any
// case, anything else is an error.
func strictBoolKey(field func(*Config) *bool) setter {
	return func(a *assignment) error {
		var v bool
		switch {
		case strings.EqualFold(a.value, "true"):
			v = true
		case strings.EqualFold(a.value, "false"):
		default:
			return a.fail("choose 'true' or 'false'")
		}
		if field != nil {
			*field(a.c) = v
		}
		return nil
	}
}

// javaBoolKey reads a system-property boolean (Boolean.parseBoolean): true
// only for "true" in any case. Other values than true/false are read as
// false, as in ZooKeeper, with a warning.
func javaBoolKey(field func(*Config) *bool) setter {
	return func(a *assignment) error {
		v := strings.EqualFold(a.value, "true")
		if !v && !strings.EqualFold(a.value, "false") {
			a.warn("%q is not true or false; read as false, as ZooKeeper does", a.value)
		}
		*field(a.c) = v
		return nil
	}
}

// yesKey reads a yes/no switch that is on only for exactly "yes" (skipACL).
func yesKey(field func(*Config) *bool) setter {
	return func(a *assignment) error {
		v := a.value == "yes"
		if !v && a.value != "no" {
			a.warn("%q is not yes or no; read as no, as ZooKeeper does", a.value)
		}
		*field(a.c) = v
		return nil
	}
}

// notNoKey reads a yes/no switch that is off only for exactly "no"
// (forceSync).
func notNoKey(field func(*Config) *bool) setter {
	return func(a *assignment) error {
		v := a.value != "no"
		if v && a.value != "yes" {
			a.warn("%q is not yes or no; read as yes, as ZooKeeper does", a.value)
		}
		*field(a.c) = v
		return nil
	}
}

func setElectionAlg(a *assignment) error {
	n, err := parseJavaInt(a.value)
	if err != nil {
		return numberError(a, err, "32-bit decimal integer")
	}
	if n != 3 {
		return a.fail("only electionAlg 3 is supported")
	}
	return nil
}

func setPeerType(a *assignment) error {
	switch strings.ToLower(a.value) {
	case "observer", "participant":
		return nil
	}
	return a.fail("unrecognised peerType (use participant or observer)")
}

func setEnforceAuthSchemes(a *assignment) error {
	a.c.EnforceAuthSchemes = nil
	for s := range strings.SplitSeq(a.value, ",") {
		if s = strings.TrimSpace(s); s != "" {
			a.c.EnforceAuthSchemes = append(a.c.EnforceAuthSchemes, s)
		}
	}
	return nil
}

// setWhitelist reads 4lw.commands.whitelist as ZooKeeper does: comma
// separated, trimmed, "*" for all. srvr (and isro in read-only mode) are
// added by FourLetterAllowed, not stored.
func setWhitelist(a *assignment) error {
	set := map[string]bool{}
	known := setOf(FourLetterCommands...)
	for cmd := range strings.SplitSeq(a.value, ",") {
		cmd = strings.TrimSpace(cmd)
		switch {
		case cmd == "":
		case cmd == "*":
			set["*"] = true
		case !known[cmd]:
			a.warn("%q is not a four-letter word command", cmd)
		default:
			set[cmd] = true
		}
	}
	a.c.FourLetterWhitelist = set
	return nil
}
