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
// Each connection has three goroutines. The reader decodes frames; a
// write becomes an fsm.Entry proposed to the log, a read becomes a closure.
// Both take a slot in the connection's ordered reply queue. The processor
// completes slots strictly in request order: it runs a read only after
// every earlier request of the connection has completed (per-session FIFO),
// and waits for a write until the apply goroutine has filled in its reply.
// The flusher writes queued frames to the socket.
//
// The apply goroutine applies committed entries to the state machine under
// mu and, still under mu, queues watch events on the connections allowed to
// read the node. A read runs under mu's read lock, so an event is always
// queued before the reply of any request that saw the change.
//
// Lock order: Server.mu, then Server.wmu, then Server.connMu, then a
// conn's outMu. sessMu and waitMu are leaves.
package server
