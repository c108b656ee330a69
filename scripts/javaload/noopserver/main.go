// Command noopserver is a ZooKeeper-protocol server that does no work: it
// answers every request at once, from nothing it stores, so that what a
// load generator reaches against it is the generator's own ceiling on this
// machine. docs/performance.md uses it to tell how much of a server's
// throughput under ZooKeeper's Java client the client itself leaves.
//
//	go run ./scripts/javaload/noopserver -addr 127.0.0.1:21899
//
// It accepts any session, answers create with the requested path, setData
// and exists with a zero stat, getData with -data bytes and a zero stat,
// closeSession by closing, and every other request with its header alone.
// Its replies are buffered and written when the connection has no more
// requests waiting, so it makes as few system calls as it can. Once its
// port is its own it prints "listening on ADDR" on stdout.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/wardenzk/warden/wire"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:21899", "address to listen on")
	data := flag.Int("data", 1024, "bytes of data in each getData reply")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noopserver:", err)
		os.Exit(1)
	}
	fmt.Println("listening on", ln.Addr()) // scripts/bench-lib.sh waits for this line
	payload := make([]byte, *data)
	for {
		nc, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "noopserver:", err)
			os.Exit(1)
		}
		go func() {
			defer nc.Close()
			if err := serve(nc, payload); err != nil && !errors.Is(err, io.EOF) {
				fmt.Fprintf(os.Stderr, "noopserver: connection from %s: %v\n", nc.RemoteAddr(), err)
			}
		}()
	}
}

// serve answers one connection's handshake and then its requests until it
// closes.
func serve(nc net.Conn, payload []byte) error {
	br := bufio.NewReaderSize(nc, 64<<10)
	bw := bufio.NewWriterSize(nc, 64<<10)
	frame, err := wire.ReadFrame(br, wire.DefaultMaxBuffer, nil)
	if err != nil {
		return err
	}
	var req wire.ConnectRequest
	if err := wire.Unmarshal(frame, &req, wire.DefaultMaxBuffer); err != nil {
		return err
	}
	resp := wire.ConnectResponse{TimeOut: req.TimeOut, SessionID: 1, Passwd: make([]byte, 16), HasReadOnly: req.HasReadOnly}
	if _, err := bw.Write(wire.AppendRecords(nil, &resp)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	var out []byte
	for {
		frame, err = wire.ReadFrame(br, wire.DefaultMaxBuffer, frame[:0])
		if err != nil {
			return err
		}
		d := wire.NewDecoder(frame, wire.DefaultMaxBuffer)
		var h wire.RequestHeader
		h.Decode(d)
		if d.Err() != nil {
			return d.Err()
		}
		hdr := wire.ReplyHeader{Xid: h.Xid, Zxid: 1}
		switch h.Type {
		case wire.OpCreate:
			out = wire.AppendRecords(out[:0], &hdr, &wire.CreateResponse{Path: d.String()})
		case wire.OpSetData:
			out = wire.AppendRecords(out[:0], &hdr, &wire.SetDataResponse{})
		case wire.OpExists:
			out = wire.AppendRecords(out[:0], &hdr, &wire.ExistsResponse{})
		case wire.OpGetData:
			out = wire.AppendRecords(out[:0], &hdr, &wire.GetDataResponse{Data: payload})
		default:
			out = wire.AppendRecords(out[:0], &hdr)
		}
		if _, err := bw.Write(out); err != nil {
			return err
		}
		if h.Type == wire.OpCloseSession {
			return bw.Flush()
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}
