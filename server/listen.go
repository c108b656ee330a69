package server

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// This file is the client ports: clientPort (plaintext, or both plaintext
// and TLS with client.portUnification) and secureClientPort (TLS only),
// each with its own accept loop, and the TLS handshake of a connection.

// portMode is what a client listener speaks.
type portMode int

const (
	plainPort   portMode = iota // clientPort
	securePort                  // secureClientPort
	unifiedPort                 // clientPort with client.portUnification: sniffed per connection
)

// tlsRecordHandshake is the first byte of every TLS connection (a
// handshake record); no ZooKeeper request or four-letter word starts with
// it.
const tlsRecordHandshake = 0x16

// tlsHandshakeTimeout bounds a TLS handshake (Netty's default).
const tlsHandshakeTimeout = 10 * time.Second

// listener is one client port.
type listener struct {
	ln   net.Listener
	mode portMode
}

// listen opens the client ports zoo.cfg names: no plaintext listener
// unless clientPort is set (a zoo.cfg with only secureClientPort serves
// TLS only).
func (s *Server) listen(opts Options) error {
	open := func(given net.Listener, host string, port int, key string, mode portMode) error {
		ln := given
		if ln == nil {
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			var err error
			if ln, err = net.Listen("tcp", addr); err != nil {
				return fmt.Errorf("server: listen on %s: %w (is another server using the port? set %s in zoo.cfg)", addr, err, key)
			}
		}
		s.listenMu.Lock()
		s.listeners = append(s.listeners, listener{ln: ln, mode: mode})
		s.listenMu.Unlock()
		return nil
	}
	if opts.Listener != nil || s.cfg.ClientPort != 0 {
		mode := plainPort
		if s.cfg.ClientPortUnification() {
			mode = unifiedPort
		}
		if err := open(opts.Listener, s.cfg.ClientPortAddress, s.cfg.ClientPort, "clientPort", mode); err != nil {
			return err
		}
	}
	if opts.SecureListener != nil || s.cfg.SecureClientPort != 0 {
		if err := open(opts.SecureListener, s.cfg.SecureClientPortAddress, s.cfg.SecureClientPort, "secureClientPort", securePort); err != nil {
			s.closeListeners()
			return err
		}
	}
	return nil
}

func (s *Server) closeListeners() {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	for _, l := range s.listeners {
		l.ln.Close()
	}
}

// moveClientPort moves the plaintext client port to host:port (host ""
// for every interface) when a committed reconfig gives this member
// another client address, as ZooKeeper rebinds its client port: the new
// port is opened first, then the old one closed; connected clients stay.
func (s *Server) moveClientPort(host string, port int) {
	s.listenMu.Lock()
	i := slices.IndexFunc(s.listeners, func(l listener) bool { return l.mode != securePort })
	if i < 0 || s.isClosed() {
		s.listenMu.Unlock()
		return
	}
	old := s.listeners[i]
	cur, ok := old.ln.Addr().(*net.TCPAddr)
	if ok && cur.Port == port && (host == "" || cur.IP.Equal(net.ParseIP(host)) || cur.IP.String() == host) {
		s.listenMu.Unlock()
		return
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		s.listenMu.Unlock()
		s.log.Error("a reconfig gave this member another client address, but it cannot listen there; it keeps the old one", "addr", addr, "err", err)
		return
	}
	moved := listener{ln: ln, mode: old.mode}
	s.listeners[i] = moved
	s.wg.Add(1)
	s.listenMu.Unlock()
	go s.acceptLoop(moved)
	old.ln.Close()
	s.log.Info("client port moved by a reconfig", "from", old.ln.Addr().String(), "to", ln.Addr().String())
}

// isClosed reports whether Close was called.
func (s *Server) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// Addr returns the client address the server listens on: the plaintext
// client port, or the secure one when that is the only one.
func (s *Server) Addr() net.Addr {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	for _, l := range s.listeners {
		if l.mode != securePort {
			return l.ln.Addr()
		}
	}
	return s.secureAddrLocked()
}

// SecureAddr returns the address of the secure client port
// (secureClientPort), or nil when there is none.
func (s *Server) SecureAddr() net.Addr {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	return s.secureAddrLocked()
}

func (s *Server) secureAddrLocked() net.Addr {
	for _, l := range s.listeners {
		if l.mode == securePort {
			return l.ln.Addr()
		}
	}
	return nil
}

func (s *Server) acceptLoop(l listener) {
	defer s.wg.Done()
	var delay time.Duration
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscallEMFILE) {
				// Out of file descriptors or a transient error: back off.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; backing off", "err", err, "delay", delay)
				select {
				case <-time.After(delay):
				case <-s.closed:
					return
				}
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return // moved (moveClientPort)
			}
			s.log.Error("accept failed; no longer accepting connections", "addr", l.ln.Addr().String(), "err", err)
			return
		}
		delay = 0
		s.admit(nc, l.mode)
	}
}

// secure runs the TLS side of a new connection, on its own goroutine: on
// a unified port it first tells TLS from plaintext by the first byte; on a
// TLS connection it runs the handshake and takes the client certificate's
// identity. It returns the reader the connection goes on with, or false
// when the connection must close (the reason is logged).
func (c *conn) secure(mode portMode) (*bufio.Reader, bool) {
	br := bufio.NewReaderSize(c.nc, 4<<10)
	if mode == plainPort {
		return br, true
	}
	if mode == unifiedPort {
		c.nc.SetReadDeadline(time.Now().Add(c.srv.handshakeDetection))
		first, err := br.Peek(1)
		if err != nil {
			c.logReadError(err)
			return nil, false
		}
		if first[0] != tlsRecordHandshake {
			return br, true
		}
	}
	if !c.srv.handshakes.acquire() {
		c.srv.log.Warn("too many TLS handshakes in progress; closing the new connection (netty.server.outstandingHandshake.limit)",
			"remote", c.nc.RemoteAddr().String())
		return nil, false
	}
	defer c.srv.handshakes.release()
	// On a unified port the sniffed byte stays in br.
	tc := tls.Server(&bufferedConn{Conn: c.nc, r: br}, c.srv.clientTLS)
	tc.SetDeadline(time.Now().Add(tlsHandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		c.srv.stats.authFailed.Add(1)
		c.log.Warn("TLS handshake with a client failed; closing the connection", "err", err,
			"hint", handshakeHint(err))
		return nil, false
	}
	tc.SetDeadline(time.Time{})
	c.w = tc
	c.secureConn = true
	if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
		c.x509ID = subjectDN(certs[0])
		c.addX509(c.x509ID)
		c.log.Info("client authenticated by certificate", "x509", c.x509ID)
	}
	return bufio.NewReaderSize(tc, 4<<10), true
}

// bufferedConn is a connection whose first bytes were already read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// handshakeHint says what to check for a failed client handshake.
func handshakeHint(err error) string {
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &rec):
		return "the client did not speak TLS: point plaintext clients at clientPort, or set zookeeper.client.secure=true on the client"
	case strings.Contains(err.Error(), "didn't provide a certificate"):
		return "ssl.clientAuth=need: the client must present a certificate (set its keyStore)"
	}
	var ce *tls.CertificateVerificationError
	if errors.As(err, &ce) {
		return "the client's certificate is not trusted by ssl.trustStore (wrong CA, expired, or not yet valid)"
	}
	return "check the client's TLS settings against ssl.protocol, ssl.enabledProtocols and ssl.ciphersuites"
}

// handshakeLimiter bounds the TLS handshakes in progress
// (netty.server.outstandingHandshake.limit; ≤ 0 is no bound) and counts
// them for mntr's outstanding_tls_handshake.
type handshakeLimiter struct {
	limit int64
	n     atomic.Int64
}

func (h *handshakeLimiter) acquire() bool {
	if n := h.n.Add(1); h.limit > 0 && n > h.limit {
		h.n.Add(-1)
		return false
	}
	return true
}

func (h *handshakeLimiter) release() { h.n.Add(-1) }
