package server

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/wardenzk/warden/wire"
)

// FuzzFourLetterWords plays arbitrary bytes as the start of a connection:
// a four-letter word with anything after it, part of a word, a word cut
// across writes, or (when the input is no word) a ConnectRequest. With
// bit 0 of mode a session with a watch is open meanwhile, so that cons,
// wchc, wchp and dump list something; with bit 1 the bytes go down that
// session's connection instead, where a word is a frame length. The
// server must answer and close once the client has sent everything,
// never hang; a word's answer is its output (ruok imok, stmk and gtmk the
// mask, nothing for fewer than four bytes); the server stays well.
func FuzzFourLetterWords(f *testing.F) {
	for _, w := range []string{"ruok", "srvr", "stat", "cons", "mntr", "conf", "envi", "wchs", "wchc", "wchp", "dump", "dirs", "crst", "srst", "isro", "gtmk", "hash"} {
		f.Add(uint8(1), []byte(w))
	}
	f.Add(uint8(0), []byte("ruok trailing bytes\n\x00\xff"))
	f.Add(uint8(0), []byte("stmk\x00\x00\x00\x00\x00\x00\x01\x02"))
	f.Add(uint8(0), []byte("stmk\x01\x02"))
	f.Add(uint8(0), []byte("ru"))
	f.Add(uint8(0), []byte("RUOK"))
	f.Add(uint8(4), []byte("mntr"))
	f.Add(uint8(3), []byte("ruok"))
	f.Add(uint8(3), []byte("stat"))
	req := wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}
	f.Add(uint8(0), wire.AppendFrame(nil, req.Encode))

	srv, _ := startServer(f, func(c *Config) { c.FourLetterWhitelist = map[string]bool{"*": true} })

	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		var sess net.Conn
		if mode&1 != 0 {
			sess = rawSession(t, srv)
			watch := wire.AppendRecords(nil, &wire.RequestHeader{Xid: 1, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/", Watch: true})
			if _, err := sess.Write(watch); err != nil {
				t.Fatal(err)
			}
			if _, err := wire.ReadFrame(sess, wire.DefaultMaxBuffer, nil); err != nil {
				t.Fatal(err)
			}
		}
		nc := sess
		if mode&2 == 0 || sess == nil {
			var err error
			if nc, err = net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second); err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		// Cut as a network might: in pieces of 1 + mode>>2 bytes.
		step := 1 + int(mode>>2)
		for rest := data; len(rest) > 0; {
			n := min(step, len(rest))
			if _, err := nc.Write(rest[:n]); err != nil {
				break
			}
			rest = rest[n:]
		}
		nc.(*net.TCPConn).CloseWrite()
		out, err := io.ReadAll(nc)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("no answer and no close within 10s after %q", data)
		}
		if nc != sess {
			var first4 [4]byte
			copy(first4[:], data)
			word, isWord := wire.FourLetterWord(first4)
			switch {
			case len(data) < 4 && len(out) > 0:
				t.Fatalf("answer %q to %d bytes", out, len(data))
			case isWord && word == "ruok" && string(out) != "imok":
				t.Fatalf("ruok answered %q", out)
			case isWord && word == "stmk" && len(data) >= 12:
				want := strconv.FormatInt(int64(binary.BigEndian.Uint64(data[4:12])), 10)
				if string(out) != want {
					t.Fatalf("stmk %x answered %q, want %s", data[4:12], out, want)
				}
				if got := fourLetter(t, srv, "gtmk"); got != want {
					t.Fatalf("gtmk after stmk %s: %q", want, got)
				}
			case isWord && word != "hash" && len(out) == 0:
				t.Fatalf("%s answered nothing", word)
			}
		}
		if sess != nil {
			// End the session, or sessions pile up (timers are off).
			if nc != sess {
				sess.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: 2, Type: wire.OpCloseSession}))
				io.Copy(io.Discard, sess)
			}
			sess.Close()
		}
		if out := fourLetter(t, srv, "ruok"); out != "imok" {
			t.Fatalf("server unwell after %q: ruok = %q", data, out)
		}
	})
}
