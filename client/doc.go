// Package client is a context-first Go client for ZooKeeper-protocol
// servers: Warden and Apache ZooKeeper 3.5–3.9.
//
//	c, err := client.Connect(ctx, "zk1:2181,zk2:2181,zk3:2181/app")
//	defer c.Close()
//	p, err := c.Create(ctx, "/lock-", nil, client.EphemeralSequential, client.OpenACL)
//
// # Connections and sessions
//
// Connect shuffles the members of the connection string and tries them
// in turn. Once a session exists the Conn keeps it: it pings when idle
// (every third of the negotiated timeout), treats two thirds of the
// timeout without any reply as a dead connection, and reconnects to the
// next member after a jittered exponential backoff, re-attaching the
// session with its id, password and the last zxid seen. On each new
// connection it sends, in this order and before any user request: the
// auth packets (WithAuth, AddAuth), the setWatches batches that re-arm
// every watch, then the requests that waited.
//
// The session is declared expired (StateExpired, ErrSessionExpired) when
// the server answers a re-attach with timeout 0, or when the client has
// been cut off for longer than the negotiated timeout. Expired, AuthFailed
// and Closed are terminal: the Conn fails every call with that error.
//
// # Requests
//
// Every call takes a context. Requests are pipelined: one writer
// goroutine batches them onto the socket, one reader goroutine matches
// the replies, in order, against a FIFO of pending requests (ZooKeeper
// answers in order; a mismatch drops the connection). Cancelling a
// context abandons the wait; the reply, when it comes, is dropped, and the
// connection stays in sync. A request issued while disconnected waits for
// the reconnect (or its context, or expiry); a request in flight when the
// connection drops fails with ErrConnectionLoss: it may or may not have
// been applied.
//
// # Watches
//
// GetW, ExistsW and ChildrenW return a channel that receives one Event
// and closes. The server holds one registration per (path, kind) per
// connection, so several local watchers on the same path all get the one
// event. AddWatch sets a persistent (optionally recursive) watch whose
// Events channel is backed by an unbounded queue. Watches survive
// reconnects: one-shot watches are re-armed with setWatches relative to
// the last zxid seen, so a change missed while disconnected fires on
// reconnect; persistent watches are re-armed with setWatches2 but missed
// changes are not replayed. No watch delivery ever blocks the read loop.
// When the Conn ends every watch gets one Event with Err set and closes.
// Event.Zxid is the zxid of the write that fired the event, as Warden and
// ZooKeeper 3.9+ send it; NoZxid from older servers, for catch-up events
// and for events the client makes itself.
//
// # Chroot
//
// A connection string ending in /path makes every path relative to it:
// paths sent are prefixed, paths returned (created names, events,
// ephemerals) are stripped.
//
// # Dynamic reconfiguration
//
// GetConfig and GetConfigW read the ensemble's membership
// (/zookeeper/config) as ZooKeeper's getConfig does: a getData, opcode 4,
// of that path whatever the chroot (opcode 18 is removeWatches; there is
// no getConfig opcode). ParseConfig reads the text into an
// EnsembleConfig: its version (the fromConfig of a conditional reconfig)
// and the servers with their client addresses.
//
// Reconfig (the whole new membership) and IncrementalReconfig (servers
// joining, ids leaving) send reconfig, opcode 16, as ZooKeeperAdmin does:
// lists comma-joined, the lists not given as null strings. They return the
// new configuration and the Stat of /zookeeper/config. The server must run
// with reconfigEnabled=true and the session needs WRITE on
// /zookeeper/config (the super user); the errors are ErrReconfigDisabled,
// ErrNoAuth, ErrBadVersion, ErrBadArguments, ErrNewConfigNoQuorum and
// ErrReconfigInProgress.
//
// Clients follow a new membership with UpdateServers, ZooKeeper's
// updateServerList: a client whose server left the list moves at once; when
// servers are added, a share of the clients (1 - old size/new size) moves
// to them, so the load evens out. WithEnsembleTracking does it
// automatically, as Curator's EnsembleTracker: the Conn watches
// /zookeeper/config and updates its list from every new configuration.
// ZooKeeper's Java client has no such option; an application calls
// updateServerList itself.
//
// # Goroutines
//
// A Conn runs a session loop, a reader and a writer per live connection,
// and one pump per event queue (session events, each persistent Watch).
// Close stops them all before returning.
//
// Lock order: Conn.mu, then watchManager.mu; link.mu and hostList.mu are
// taken alone.
package client
