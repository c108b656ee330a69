//go:build compat

package compat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// rawDeadline bounds every read and write of the raw-protocol checks.
const rawDeadline = 10 * time.Second

// rawConn is a client connection speaking the framed protocol by hand.
type rawConn struct {
	t *testing.T
	net.Conn
}

func dialRaw(t *testing.T, s *Server) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr, rawDeadline)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(rawDeadline))
	return &rawConn{t: t, Conn: c}
}

// frame writes one length-prefixed frame.
func (c *rawConn) frame(body []byte) {
	c.t.Helper()
	b := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	if _, err := c.Write(append(b, body...)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// readFrame reads one frame; closed reports EOF or reset instead of a frame.
func (c *rawConn) readFrame() (body []byte, closed bool) {
	c.t.Helper()
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		if isClosed(err) {
			return nil, true
		}
		c.t.Fatalf("read length: %v", err)
	}
	body = make([]byte, binary.BigEndian.Uint32(n[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		c.t.Fatalf("read body: %v", err)
	}
	return body, false
}

// closedAfter reports whether the server closes the connection without sending more.
func (c *rawConn) closedAfter() string {
	c.t.Helper()
	b, err := io.ReadAll(c)
	if err != nil && !isClosed(err) {
		c.t.Fatalf("waiting for close: %v (got %d bytes)", err, len(b))
	}
	return fmt.Sprintf("closed extraBytes=%d", len(b))
}

func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		strings.Contains(err.Error(), "connection reset")
}

// connectRequest encodes a ConnectRequest (with the readOnly flag).
func connectRequest(lastZxid int64, timeoutMs int32, session int64, passwd []byte) []byte {
	var b []byte
	b = binary.BigEndian.AppendUint32(b, 0) // protocolVersion
	b = binary.BigEndian.AppendUint64(b, uint64(lastZxid))
	b = binary.BigEndian.AppendUint32(b, uint32(timeoutMs))
	b = binary.BigEndian.AppendUint64(b, uint64(session))
	b = binary.BigEndian.AppendUint32(b, uint32(len(passwd)))
	b = append(b, passwd...)
	return append(b, 0) // readOnly=false
}

// connectResponse is a decoded ConnectResponse.
type connectResponse struct {
	protocolVersion int32
	timeout         int32
	session         int64
	passwd          []byte
	readOnly        int // -1 when absent
}

func decodeConnectResponse(t *testing.T, b []byte) connectResponse {
	t.Helper()
	if len(b) < 20 {
		t.Fatalf("connect response of %d bytes", len(b))
	}
	r := connectResponse{
		protocolVersion: int32(binary.BigEndian.Uint32(b)),
		timeout:         int32(binary.BigEndian.Uint32(b[4:])),
		session:         int64(binary.BigEndian.Uint64(b[8:])),
		readOnly:        -1,
	}
	n := int(int32(binary.BigEndian.Uint32(b[16:])))
	if n < 0 || 20+n > len(b) {
		t.Fatalf("connect response password length %d in %d bytes", n, len(b))
	}
	r.passwd = b[20 : 20+n]
	if len(b) > 20+n {
		r.readOnly = int(b[20+n])
	}
	return r
}

func (r connectResponse) String() string {
	return fmt.Sprintf("protocolVersion=%d timeout=%d sessionId=%#x passwdLen=%d passwdZero=%v readOnly=%d",
		r.protocolVersion, r.timeout, r.session, len(r.passwd), bytes.Equal(r.passwd, make([]byte, len(r.passwd))), r.readOnly)
}

// session opens a connection with a new session and returns it with the response.
func rawSession(t *testing.T, s *Server) (*rawConn, connectResponse) {
	t.Helper()
	c := dialRaw(t, s)
	c.frame(connectRequest(0, 10000, 0, make([]byte, 16)))
	b, closed := c.readFrame()
	if closed {
		t.Fatal("server closed the connection instead of answering ConnectRequest")
	}
	return c, decodeConnectResponse(t, b)
}

// replyHeader decodes xid, zxid and err of a reply.
func replyHeader(t *testing.T, b []byte) (xid int32, zxid int64, errCode int32) {
	t.Helper()
	if len(b) < 16 {
		t.Fatalf("reply of %d bytes", len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), int64(binary.BigEndian.Uint64(b[4:])), int32(binary.BigEndian.Uint32(b[12:]))
}

// request encodes a request header followed by body.
func request(xid, op int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	return append(b, body...)
}

// TestRawProtocol checks the server's answers to misbehaving clients, frame by frame.
func TestRawProtocol(t *testing.T) {
	differential(t, nil, func(t *testing.T, s *Server) string {
		tr := &transcript{}

		c, r := rawSession(t, s)
		tr.printf("connect: %v", r)
		// A getData of "/" (opcode 4, path, watch=false) as a sanity check.
		body := binary.BigEndian.AppendUint32(nil, 1)
		body = append(body, '/', 0)
		c.frame(request(1, 4, body))
		b, _ := c.readFrame()
		xid, zxid, errCode := replyHeader(t, b)
		tr.printf("getData /: xid=%d zxid=%d err=%d bodyLen=%d", xid, zxid, errCode, len(b)-16)
		// Unknown opcode.
		c.frame(request(2, 999, nil))
		b, closed := c.readFrame()
		if closed {
			tr.printf("unknown opcode: closed without reply")
		} else {
			xid, zxid, errCode = replyHeader(t, b)
			tr.printf("unknown opcode: xid=%d zxid=%d err=%d bodyLen=%d", xid, zxid, errCode, len(b)-16)
			tr.printf("unknown opcode: then %s", c.closedAfter())
		}

		// A frame longer than jute.maxbuffer (default 0xfffff) after the handshake.
		c, r = rawSession(t, s)
		tr.printf("connect: %v", r)
		_, _ = c.Write(binary.BigEndian.AppendUint32(nil, 0xfffff+1))
		tr.printf("oversized frame after handshake: %s", c.closedAfter())

		// ... and as the very first frame.
		c = dialRaw(t, s)
		_, _ = c.Write(binary.BigEndian.AppendUint32(nil, 0xfffff+1))
		tr.printf("oversized first frame: %s", c.closedAfter())

		// A negative length.
		c, _ = rawSession(t, s)
		_, _ = c.Write([]byte{0xff, 0xff, 0xff, 0xf0})
		tr.printf("negative frame length: %s", c.closedAfter())

		// lastZxidSeen ahead of the server: refused without a response.
		c = dialRaw(t, s)
		c.frame(connectRequest(0x7fffffff00000000, 10000, 0, make([]byte, 16)))
		tr.printf("connect with future lastZxidSeen: %s", c.closedAfter())

		// Reattach with the wrong password: timeOut=0, sessionId=0, zero password, close.
		first, r1 := rawSession(t, s)
		tr.printf("connect: %v", r1)
		wrong := append([]byte(nil), r1.passwd...)
		wrong[0] ^= 0xff
		c = dialRaw(t, s)
		c.frame(connectRequest(0, 10000, r1.session, wrong))
		b, closed = c.readFrame()
		if closed {
			tr.printf("reattach with wrong password: closed without response")
		} else {
			tr.printf("reattach with wrong password: %v", decodeConnectResponse(t, b))
			tr.printf("reattach with wrong password: then %s", c.closedAfter())
		}
		// The right password moves the session to the new connection.
		c = dialRaw(t, s)
		c.frame(connectRequest(0, 10000, r1.session, r1.passwd))
		b, closed = c.readFrame()
		if closed {
			tr.printf("reattach with right password: closed without response")
		} else {
			r2 := decodeConnectResponse(t, b)
			tr.printf("reattach with right password: %v samePassword=%v", r2, bytes.Equal(r2.passwd, r1.passwd))
		}
		tr.printf("old connection after reattach: %s", first.closedAfter())

		// Reattach to a session that does not exist: expired.
		c = dialRaw(t, s)
		c.frame(connectRequest(0, 10000, 0x1234567, make([]byte, 16)))
		b, closed = c.readFrame()
		if closed {
			tr.printf("attach to unknown session: closed without response")
		} else {
			tr.printf("attach to unknown session: %v", decodeConnectResponse(t, b))
			tr.printf("attach to unknown session: then %s", c.closedAfter())
		}

		// Session timeout negotiation: clamped to [2, 20] ticks.
		for _, ms := range []int32{1, 5000, 1000000} {
			c = dialRaw(t, s)
			c.frame(connectRequest(0, ms, 0, make([]byte, 16)))
			b, _ = c.readFrame()
			tr.printf("connect timeout=%d -> negotiated=%d", ms, decodeConnectResponse(t, b).timeout)
			c.Close()
		}
		return tr.String()
	})
}

// fourLetterShape reduces a 4lw reply to its shape: the keys it carries, in order, with
// values dropped.
func fourLetterShape(cmd, out string) string {
	var keys []string
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	switch cmd {
	case "ruok", "isro":
		return out
	case "mntr":
		// ZooKeeper 3.8 reports ~480 metrics; compare the ones monitoring tools read
		// (the pre-3.6 set), present or absent.
		have := map[string]bool{}
		for _, l := range lines {
			k, _, _ := strings.Cut(l, "\t")
			have[k] = true
		}
		for _, k := range mntrClassicKeys {
			keys = append(keys, fmt.Sprintf("%s present=%v", k, have[k]))
		}
	case "conf", "envi":
		for _, l := range lines {
			k, _, ok := strings.Cut(l, "=")
			if !ok {
				k = "(line) " + l
			}
			keys = append(keys, k)
		}
	default: // srvr, stat: "Key: value" lines, client lines " /ip:port[...](...)"
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, " /"):
				keys = append(keys, "<client>")
			case strings.Contains(l, ":"):
				k, _, _ := strings.Cut(l, ":")
				keys = append(keys, k+":")
			default:
				keys = append(keys, "(line) "+l)
			}
		}
	}
	return strings.Join(keys, "\n")
}

// mntrClassicKeys are the mntr keys of ZooKeeper before 3.6 (standalone), which
// monitoring scripts and exporters read.
var mntrClassicKeys = []string{
	"zk_version", "zk_avg_latency", "zk_max_latency", "zk_min_latency", "zk_packets_received",
	"zk_packets_sent", "zk_num_alive_connections", "zk_outstanding_requests", "zk_server_state",
	"zk_znode_count", "zk_watch_count", "zk_ephemerals_count", "zk_approximate_data_size",
	"zk_open_file_descriptor_count", "zk_max_file_descriptor_count",
}

// TestFourLetterWordShapes compares which keys the 4lw commands report.
func TestFourLetterWordShapes(t *testing.T) {
	differential(t, nil, func(t *testing.T, s *Server) string {
		tr := &transcript{}
		for _, cmd := range []string{"ruok", "isro", "srvr", "stat", "mntr", "conf", "envi", "xxxx"} {
			out, err := fourLetterWord(s.Addr, cmd, rawDeadline)
			if err != nil {
				tr.printf("%s: error %v", cmd, err)
				continue
			}
			tr.printf("== %s", cmd)
			tr.printf("%s", fourLetterShape(cmd, out))
			if os.Getenv("WARDEN_COMPAT_VERBOSE") != "" {
				t.Logf("%s:\n%s", cmd, out)
			}
		}
		return tr.String()
	})
}
