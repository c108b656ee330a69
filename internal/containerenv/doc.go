// Package containerenv turns the environment of the official `zookeeper`
// Docker image into the files a server starts from: $ZOO_CONF_DIR/zoo.cfg
// and $ZOO_DATA_DIR/myid. It is the core of `warden container`, the
// entrypoint of Warden's image (deploy/docker), so that a compose file or a
// Kubernetes manifest written for the official image runs Warden unchanged.
//
// # Use
//
//	env := containerenv.Lookup(os.LookupEnv) // defaults for what is unset
//	if err := env.Validate(); err != nil { ... }
//	res, err := containerenv.Prepare(env)   // writes only what is absent
//	// run `warden server res.ConfigPath`
//
// Lookup, Validate and ZooCfg are pure; Prepare does the file IO.
//
// # The contract
//
// Variable (default)                       zoo.cfg line / effect
//
//	ZOO_CONF_DIR (/conf)                     where zoo.cfg is read or written
//	ZOO_DATA_DIR (/data)                     dataDir=; myid is written there
//	ZOO_DATA_LOG_DIR (/datalog)              dataLogDir=
//	ZOO_LOG_DIR (/logs)                      created; Warden logs to stderr
//	ZOO_TICK_TIME (2000)                     tickTime=
//	ZOO_INIT_LIMIT (5)                       initLimit=
//	ZOO_SYNC_LIMIT (2)                       syncLimit=
//	ZOO_AUTOPURGE_SNAPRETAINCOUNT (3)        autopurge.snapRetainCount=
//	ZOO_AUTOPURGE_PURGEINTERVAL (0)          autopurge.purgeInterval=
//	ZOO_MAX_CLIENT_CNXNS (60)                maxClientCnxns=
//	ZOO_STANDALONE_ENABLED (true)            standaloneEnabled=
//	ZOO_ADMINSERVER_ENABLED (true)           admin.enableServer=
//	ZOO_SERVERS (server.1=localhost:2888:3888;2181)
//	                                         one line per space-separated word
//	ZOO_4LW_COMMANDS_WHITELIST (none)        4lw.commands.whitelist=, when set
//	ZOO_CFG_EXTRA (none)                     one line per space-separated k=v
//	ZOO_MY_ID (1)                            the content of $ZOO_DATA_DIR/myid
//
// A variable that is unset or empty takes its default (the official image
// bakes the defaults into its ENV, so an empty value there writes an empty
// key that ZooKeeper then rejects; an empty value here means the default).
//
// Validate refuses what the server would not read back as given: a value
// with a backslash (an escape in zoo.cfg), a control character or invalid
// UTF-8, and ZOO_CFG_EXTRA entries that parse alone but make the whole
// zoo.cfg refused (dynamicConfigFile= next to the server lines).
//
// # zoo.cfg
//
// Written only when $ZOO_CONF_DIR/zoo.cfg does not exist, with the keys in
// the order the official entrypoint writes them:
//
//	dataDir=/data
//	dataLogDir=/datalog
//	tickTime=2000
//	initLimit=5
//	syncLimit=2
//	autopurge.snapRetainCount=3
//	autopurge.purgeInterval=0
//	maxClientCnxns=60
//	standaloneEnabled=true
//	admin.enableServer=true
//	server.1=localhost:2888:3888;2181      one line per ZOO_SERVERS word
//	4lw.commands.whitelist=...             only when ZOO_4LW_COMMANDS_WHITELIST is set
//	k=v                                    one line per ZOO_CFG_EXTRA word
//
// One addition: when no ZOO_SERVERS word names a client port (the 3.4
// style "server.1=zoo1:2888:3888", no ";2181"), the file starts with
// clientPort=2181, as the 3.4 images wrote; otherwise the client port
// comes from the server lines, as in the 3.5+ images, and no clientPort
// line is written (it would contradict a ";2182").
//
// The file is written to a temporary name in $ZOO_CONF_DIR and renamed,
// so a crash never leaves a half-written zoo.cfg that would then be kept.
// myid ("<ZOO_MY_ID>\n") is written the same way, only when absent.
package containerenv
