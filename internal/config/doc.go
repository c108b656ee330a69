// Package config reads ZooKeeper configuration files: zoo.cfg, the dynamic
// config file it may name, and the myid file in dataDir. It is pure apart
// from Load and ReadMyID, which read those files.
//
// # Use
//
//	cfg, err := config.Load("conf/zoo.cfg") // parse + dynamic file + myid + Validate
//	for _, w := range cfg.Warnings { log.Warn(w) }
//
//	cfg := config.Default() // `warden server` without a file: 127.0.0.1:2181, ./warden-data
//	cfg.ClientPort = 2182   // flags (in cmd/ only) override fields, then:
//	err := cfg.Validate()
//
// # File format
//
// zoo.cfg is a Java properties file (java.util.Properties.load): key=value,
// key:value or "key value"; '#' and '!' comment lines; backslash line
// continuations; \t \n \r \f \uXXXX escapes. Keys and values are trimmed.
//
// # Keys
//
// Every key ZooKeeper 3.8 documents is accepted. Keys that change Warden's
// behaviour have a Config field (its comment names the key, unit and
// default); the others are kept in Config.Raw and read with Config.Lookup.
// An unknown key is a warning in Config.Warnings, never an error, because
// ZooKeeper silently exports unknown keys as system properties.
//
// Settings ZooKeeper users pass as Java system properties may be written in
// zoo.cfg with or without their "zookeeper." prefix:
//
//	zookeeper.extendedTypesEnabled=true        extendedTypesEnabled=true
//	zookeeper.DigestAuthenticationProvider.superDigest=super:D/In...
//	znode.container.checkIntervalMs=1000       jute.maxbuffer=0x3fffff
//	readonlymode.enabled=true                  java.security.auth.login.config=/etc/jaas.conf
//
// Values are read the way the ZooKeeper code reading each key does:
//
//   - QuorumPeerConfig integers (tickTime, clientPort, initLimit, ...) are
//     decimal; system-property integers (jute.maxbuffer, snapCount, maxCnxns,
//     globalOutstandingLimit, znode.container.*) also take 0x.. hex and 0..
//     octal. A bad number is an error naming the key and the line (where
//     ZooKeeper would silently use the default for system properties).
//   - QuorumPeerConfig booleans (standaloneEnabled, reconfigEnabled,
//     localSessionsEnabled, ...) must be true or false.
//   - System-property booleans (extendedTypesEnabled, readonlymode.enabled, audit.enable,
//     admin.enableServer, enforce.auth.enabled, ...) are true only for
//     "true"; other values read as false with a warning.
//   - skipACL is on only for "yes"; forceSync is off only for "no". Any
//     other value (skipACL=true!) keeps the default and warns.
//
// # Differences from ZooKeeper (on purpose)
//
//   - 4lw.commands.whitelist absent: Warden enables ruok, srvr, stat, mntr,
//     conf, envi and isro (DefaultFourLetterWhitelist), ZooKeeper only srvr.
//     When the key is present it means exactly what it means to ZooKeeper;
//     srvr is always enabled, isro too when readonlymode.enabled=true.
//   - group.N / weight.N (hierarchical quorums), multiple addresses per
//     server, and digest algorithms other than SHA1 are not supported; the
//     first two warn, the last is an error.
//   - Warden has no extension keys yet; any it adds will be named warden.*.
//
// # server.N
//
//	server.<id>=<host>:<peerPort>:<electionPort>[:participant|:observer][;[<clientHost>:]<clientPort>]
//
// IPv6 hosts are bracketed ([fe80::1]:2888:3888). With server.N lines the
// server id comes from dataDir/myid; a single participant with
// standaloneEnabled=true (the default) still runs standalone.
package config
