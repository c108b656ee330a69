package status

// Replies of Apache ZooKeeper 3.8 to srvr and mntr, in the shapes of
// StatCommand / ServerStats.toString and MonitorCommand (see
// /work/shared/reference/zookeeper-protocol.md §11.2): a three-member
// ensemble in epoch 2, where the observer still has a zxid of epoch 1, plus
// a standalone server, a read-only one, and the refusals.
const (
	zkVersion = "3.8.4-9316c2a7a97e1666d8f4593f34dd6fc36ecc436c, built on 2024-02-12 22:16 UTC"

	srvrLeader = `Zookeeper version: ` + zkVersion + `
Latency min/avg/max: 0/0.5714/3
Received: 52
Sent: 51
Connections: 2
Outstanding: 0
Zxid: 0x200000007
Mode: leader
Node count: 6
Proposal sizes last/min/max: 48/36/92
`

	srvrFollower = `Zookeeper version: ` + zkVersion + `
Latency min/avg/max: 0/0.0/1
Received: 17
Sent: 16
Connections: 3
Outstanding: 1
Zxid: 0x200000005
Mode: follower
Node count: 6
`

	srvrObserver = `Zookeeper version: ` + zkVersion + `
Latency min/avg/max: 0/0.0/0
Received: 4
Sent: 3
Connections: 1
Outstanding: 0
Zxid: 0x100000009
Mode: observer
Node count: 6
`

	srvrStandalone = `Zookeeper version: ` + zkVersion + `
Latency min/avg/max: 0/0.0/0
Received: 12
Sent: 11
Connections: 1
Outstanding: 0
Zxid: 0x3
Mode: standalone
Node count: 5
`

	srvrReadOnly = `Zookeeper version: ` + zkVersion + `
READ-ONLY mode; serving only read-only clients
Latency min/avg/max: 0/0.0/0
Received: 2
Sent: 1
Connections: 1
Outstanding: 0
Zxid: 0x200000004
Mode: read-only
Node count: 6
`

	notServing = "This ZooKeeper instance is not currently serving requests\n"

	mntrNotAllowed = "mntr is not executed because it is not in the whitelist.\n"

	// mntr of the leader (an excerpt: 3.8 prints some 300 lines, in hash
	// order after the first two).
	mntrLeader = "zk_version\t" + zkVersion + `
zk_server_state	leader
zk_peer_state	leading - broadcast
zk_ephemerals_count	0
zk_min_latency	0
zk_num_alive_connections	2
zk_outstanding_requests	0
zk_avg_latency	0.5714
zk_learners	2
zk_synced_followers	1
zk_synced_non_voting_followers	0
zk_synced_observers	1
zk_pending_syncs	0
zk_max_latency	3
zk_znode_count	6
zk_uptime	603458
zk_open_file_descriptor_count	61
zk_max_file_descriptor_count	1048576
zk_p99_readlatency	0.0
`

	// mntr of a follower that is still synchronising with its leader.
	mntrFollowerSyncing = "zk_version\t" + zkVersion + `
zk_server_state	follower
zk_peer_state	following - synchronization
zk_num_alive_connections	3
zk_outstanding_requests	1
zk_znode_count	6
`
)
