package main

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/wardenzk/warden/wire"
)

// TestServeAnswersEveryCallInOrder sends a handshake and a pipeline of
// calls over loopback and checks each reply: its xid, in order, and the
// body the Java load generator reads (the created path, the data).
func TestServeAnswersEveryCallInOrder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer nc.Close()
		served <- serve(nc, []byte("payload"))
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)

	if _, err := nc.Write(wire.AppendRecords(nil, &wire.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)})); err != nil {
		t.Fatal(err)
	}
	var conn wire.ConnectResponse
	readRecord(t, br, &conn)
	if conn.TimeOut != 4000 || conn.SessionID == 0 || len(conn.Passwd) != 16 {
		t.Fatalf("connect response %+v: want the asked timeout, a session and a 16-byte password", conn)
	}

	var calls []byte
	calls = wire.AppendRecords(calls, &wire.RequestHeader{Xid: 1, Type: wire.OpCreate}, &wire.CreateRequest{Path: "/a/b", ACL: wire.OpenACLUnsafe})
	calls = wire.AppendRecords(calls, &wire.RequestHeader{Xid: 2, Type: wire.OpSetData}, &wire.SetDataRequest{Path: "/a/b", Data: []byte("x"), Version: -1})
	calls = wire.AppendRecords(calls, &wire.RequestHeader{Xid: 3, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/a/b"})
	calls = wire.AppendRecords(calls, &wire.RequestHeader{Xid: 4, Type: wire.OpCloseSession})
	if _, err := nc.Write(calls); err != nil {
		t.Fatal(err)
	}
	var created wire.CreateResponse
	readReply(t, br, 1, &created)
	if created.Path != "/a/b" {
		t.Errorf("create answered path %q, want /a/b", created.Path)
	}
	readReply(t, br, 2, &wire.SetDataResponse{})
	var got wire.GetDataResponse
	readReply(t, br, 3, &got)
	if string(got.Data) != "payload" {
		t.Errorf("getData answered %q, want the server's payload", got.Data)
	}
	readReply(t, br, 4, nil)
	if err := <-served; err != nil {
		t.Errorf("serve after closeSession: %v, want nil", err)
	}
}

func readRecord(t *testing.T, br *bufio.Reader, r wire.Record) {
	t.Helper()
	frame, err := wire.ReadFrame(br, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Unmarshal(frame, r, 0); err != nil {
		t.Fatal(err)
	}
}

// readReply reads one reply and checks its header: xid, and no error. A
// non-nil body is decoded from what follows the header.
func readReply(t *testing.T, br *bufio.Reader, xid int32, body wire.Record) {
	t.Helper()
	frame, err := wire.ReadFrame(br, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := wire.NewDecoder(frame, 0)
	var h wire.ReplyHeader
	h.Decode(d)
	if body != nil {
		body.Decode(d)
	}
	if d.Err() != nil {
		t.Fatalf("reply to xid %d: %v", xid, d.Err())
	}
	if h.Xid != xid || h.Err != wire.CodeOK {
		t.Fatalf("reply header %+v, want xid %d and no error", h, xid)
	}
}
