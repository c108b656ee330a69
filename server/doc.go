// Package server is Warden's client-facing server: it speaks ZooKeeper's
// client protocol on the client port (and the four-letter words on the same
// port), keeps sessions alive, and sends every write through the
// replicated log before answering.
//
// Start a server from a zoo.cfg:
//
//	cfg, err := server.LoadConfig("zoo.cfg")
//	srv, err := server.Start(cfg, server.Options{})
//	defer srv.Close()
//
// # The request path
//
// Each connection has three goroutines. The reader decodes frames into
// requests, snapshotting the connection's identities (so an addauth
// applies only to requests after it), and queues them in order. The
// processor takes them in order: it proposes a write to the log at once
// (several may be in flight). A read that arrives while writes are in
// flight becomes a follower of the last of them: the apply goroutine runs
// it right after applying that write, so a read sees exactly the writes
// sent before it, and the processor goes on proposing later writes. With
// no write in flight the processor runs the read itself. The flusher writes
// queued frames to the socket.
//
// The apply goroutine applies committed entries under mu and, still under
// mu, queues the watch events they cause, then the proposer's reply, then
// its followers' replies. A read on the processor runs under mu's read lock
// and queues its reply before releasing it. Hence an event is queued before
// the reply of any request that saw its change, and never before the reply
// of the request that armed its watch. A notification's header carries the
// zxid of the transaction that fired it (ZooKeeper 3.9+), -1 for the
// catch-up events of SetWatches.
//
// Lock order: Server.mu, then Server.wmu, then Server.connMu, then a
// conn's outMu. sessMu and waitMu are leaves.
package server
