// Package zkimport reads an Apache ZooKeeper 3.x data directory — the
// newest valid snapshot and the transaction logs after it — and rebuilds
// the database exactly as ZooKeeper would load it at start-up, so that
// `warden import-zk` can turn it into a Warden data directory with the same
// tree, stats, ACLs, sessions and zxid.
//
// Use:
//
//	db, skipped, err := zkimport.Load(zkimport.Dirs{Data: "/var/lib/zookeeper"})
//	t, err := db.Tree(tree.Options{})           // tree.FromRecords
//	epoch, counter := db.ZxidState()
//	f := fsm.NewFromState(opts, t, db.FSMSessions(), epoch, counter, term)
//
// Everything here is read-only on the ZooKeeper side; the package never
// writes into a ZooKeeper directory.
//
// # Files
//
// Both kinds of file live in <dataDir>/version-2 (the logs in
// <dataLogDir>/version-2 when ZooKeeper was given a separate dataLogDir).
// The suffix of a name is the zxid, in hexadecimal, of the first
// transaction the file holds (a log) or of the last one applied when the
// snapshot was started (a snapshot):
//
//	snapshot.<zxid>[.gz|.snappy]   log.<zxid>
//
// All integers are big-endian (jute's binary archive): int 4 bytes, long 8,
// buffer and ustring as int length + bytes with -1 meaning null, vector as
// int count + elements (-1 null).
//
// # Snapshot
//
// The stream (plain, gzip or snappy-java framed, by file suffix) is:
//
//	+-----------------------------------------------------+
//	| FileHeader: magic "ZKSN" int | version int | dbid long|
//	| sessions:   count int, count × (id long, timeout int) |
//	| ACL cache:  count int, count × (ref long, vector<ACL>)|
//	| nodes:      (path ustring, DataNode)* until path "/"  |
//	| seal:       adler32 long | "/" ustring                |
//	| [digest:    zxid long | version int | digest long]    |  3.6+
//	| [seal:      adler32 long | "/" ustring]               |
//	+-----------------------------------------------------+
//	DataNode = data buffer | acl ref long | StatPersisted
//	StatPersisted = czxid long | mzxid long | ctime long | mtime long |
//	                version int | cversion int | aversion int |
//	                ephemeralOwner long | pzxid long
//
// The Adler-32 of a seal covers every decompressed byte before it. Nodes
// come parents first; the root's path is "" and the end marker is "/". An
// ACL ref of -1 means world:anyone with all permissions. A plain snapshot
// must end with the 5 bytes 00 00 00 01 '/' (the last seal's path); one that
// does not, fails to parse or fails its checksum is skipped and the next
// older one is used, as ZooKeeper does. A node path that ZooKeeper's
// request checks refuse (tree.ValidatePath: "//", an empty or trailing
// segment) is a parse failure; ZooKeeper never writes one. A digest version below 2 stores the
// digest as a hex ustring.
//
// # Transaction log
//
//	+--------------------------------------------------------------+
//	| FileHeader: magic "ZKLG" int | version int (2) | dbid long      |
//	| record*:    adler32 long | length int | txn bytes | 'B' (0x42)  |
//	| zero padding (preallocated)                                   |
//	+--------------------------------------------------------------+
//	txn bytes = TxnHeader | body by type | [TxnDigest]
//	TxnHeader = clientId long | cxid int | zxid long | time long | type int
//	TxnDigest = version int | treeDigest long                     (3.6+)
//
// The Adler-32 covers the txn bytes. A record of length 0 (the padding) or
// cut short, or one without its 'B', ends the file: the rest of a log after
// a torn write is ignored, as ZooKeeper ignores it. A record whose checksum
// does not match is an error naming file and offset (ZooKeeper refuses to
// start on it too).
//
// Bodies by type (zookeeper.jute):
//
//	create(1), create2(15)  CreateTxn: path | data | vector<ACL> | ephemeral bool | parentCVersion int
//	                         (3.3-era CreateTxnV0 lacks parentCVersion: read as -1)
//	createContainer(19)     path | data | vector<ACL> | parentCVersion int
//	createTTL(21)           path | data | vector<ACL> | parentCVersion int | ttl long
//	delete(2), deleteContainer(20)  path
//	setData(5), reconfig(16)        path | data | version int
//	setACL(7)               path | vector<ACL> | version int
//	check(13)               path | version int
//	multi(14)               vector<(type int | data buffer)>, data = the sub-txn's body
//	createSession(-10)      timeout int
//	closeSession(-11)       vector<ustring> paths2Delete (absent before 3.6)
//	error(-1)               err int
//
// # Loading
//
// Load follows FileTxnSnapLog.restore: it deserialises the newest valid
// snapshot S, then replays every log transaction with zxid > S — the logs
// read are the newest one starting at or before S+1 and all later ones.
// Because ZooKeeper snapshots are fuzzy (taken while writes go on), some of
// those transactions may already be in the snapshot; they are re-applied
// with DataTree.processTxn's rules, which make that harmless: a create of an
// existing node fails (and, for a plain create, still raises the parent's
// cversion and pzxid to the logged values), a delete of a missing node
// fails, setData and setACL store the logged version, and a delete only
// moves the parent's pzxid forward; a create of a path ZooKeeper's request
// checks refuse fails too. Failed transactions change nothing else. Then, as ZooKeeperServer.loadData does, the ephemerals of sessions
// missing from the session table are deleted at the last zxid.
//
// Sessions survive the import as they survive a ZooKeeper restart: same
// ids and timeouts, and the password ZooKeeper derives from the id
// (java.util.Random seeded with id ^ 0xB3415C00, 16 bytes), so clients can
// reconnect to Warden with the session they had.
package zkimport
