package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// TLS on the quorum port (doc.go, "# TLS"): what an accepted connection
// speaks, the TLS handshakes of both sides, and their failures in plain
// words.

// tlsRecordHandshake is the first byte of what a TLS client sends: the
// content type of a handshake record. A hello frame starts with the high
// byte of its length, which is 0 (a hello is far below 16 MiB).
const tlsRecordHandshake = 0x16

// Why a connection that mixes TLS and plaintext is refused.
const (
	// reasonPlainOnTLS is sent, in plaintext, to a plaintext dialer on a
	// TLS-only quorum port, and logged by both sides.
	reasonPlainOnTLS = "this member's quorum port accepts only TLS (sslQuorum=true without portUnification) and the peer dialled in plaintext: " +
		"set sslQuorum=true on the peer, or portUnification=true on this member while TLS is being enabled"
	// reasonTLSOnPlain is logged by a plaintext-only quorum port that a
	// peer opened with a TLS handshake.
	reasonTLSOnPlain = "peer started a TLS handshake but this member's quorum port accepts only plaintext: " +
		"the peer has sslQuorum=true; set portUnification=true (or sslQuorum=true) on this member, or sslQuorum=false on the peer"
)

// tlsError is a TLS handshake that failed. Its reason says, in plain
// words, what went wrong and what to check; it is also the key of the
// log limiter, so it never holds details that change from one attempt to
// the next (those are in err).
type tlsError struct {
	reason string
	err    error // crypto/tls's error; nil when the transport refused by itself
}

func (e *tlsError) Error() string {
	if e.err == nil {
		return "transport: TLS: " + e.reason
	}
	return fmt.Sprintf("transport: TLS: %s: %v", e.reason, e.err)
}

func (e *tlsError) Unwrap() error { return e.err }

// sniffedConn is an accepted connection whose first byte was read to
// tell TLS from plaintext; reads get that byte back first. One goroutine
// reads it at a time.
type sniffedConn struct {
	net.Conn
	first   byte
	pending bool // first has not been read back yet
}

func (c *sniffedConn) Read(p []byte) (int, error) {
	if c.pending && len(p) > 0 {
		p[0], c.pending = c.first, false
		return 1, nil
	}
	return c.Conn.Read(p)
}

// acceptSecure decides, by its first byte, what the accepted connection
// raw speaks, and runs the TLS handshake when it is TLS. It returns the
// connection to read and write the peer protocol on (raw, or raw inside
// TLS) and whether it is TLS. A plaintext connection is returned even on
// a TLS-only port: the caller refuses its hello with reasonPlainOnTLS, so
// the dialer learns why. The caller has set the handshake deadline on raw
// and closes raw.
func (t *TCP) acceptSecure(raw net.Conn) (c net.Conn, isTLS bool, err error) {
	sc := &sniffedConn{Conn: raw, pending: true}
	var first [1]byte
	if _, err := io.ReadFull(raw, first[:]); err != nil {
		return nil, false, err
	}
	sc.first = first[0]
	if sc.first != tlsRecordHandshake {
		return sc, false, nil
	}
	if t.cfg.ServerTLS == nil {
		return nil, true, &tlsError{reason: reasonTLSOnPlain}
	}
	tc := tls.Server(sc, t.cfg.ServerTLS)
	if err := tc.Handshake(); err != nil {
		if reason := acceptTLSReason(err); reason != "" {
			return nil, true, &tlsError{reason: reason, err: err}
		}
		return nil, true, err
	}
	return tc, true, nil
}

// dialSecure runs the TLS handshake on the connection raw dialled to the
// peer, when DialTLS gives a configuration for it. It returns the
// connection to speak the peer protocol on (raw, or raw inside TLS) and
// the TLS configuration used, nil for plaintext. The caller has set the
// handshake deadline on raw and closes raw.
func (p *peer) dialSecure(raw net.Conn) (net.Conn, *tls.Config, error) {
	if p.t.cfg.DialTLS == nil {
		return raw, nil, nil
	}
	cfg := p.t.cfg.DialTLS(p.id, p.host)
	if cfg == nil {
		return raw, nil, nil
	}
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = p.host
	}
	tc := tls.Client(raw, cfg)
	if err := tc.Handshake(); err != nil {
		if reason := dialTLSReason(err, p.host, hasClientCert(cfg)); reason != "" {
			return nil, cfg, &tlsError{reason: reason, err: err}
		}
		return nil, cfg, err
	}
	return tc, cfg, nil
}

// hasClientCert reports whether a client configuration may present a
// certificate.
func hasClientCert(cfg *tls.Config) bool {
	return len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil
}

// plainFailure reports whether err is a failure that is not the TLS
// handshake's own: a timeout (logged as a missing handshake) or the
// connection closed by this member.
func plainFailure(err error) bool {
	if nerr, ok := errors.AsType[net.Error](err); ok && nerr.Timeout() {
		return true
	}
	return errors.Is(err, net.ErrClosed)
}

// acceptTLSReason says in plain words why the TLS handshake of an
// accepted connection failed, or returns "" for failures logged as for a
// plaintext handshake (a timeout, the connection closed or cut).
func acceptTLSReason(err error) string {
	if plainFailure(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ""
	}
	if reason := certReason(err, ""); reason != "" {
		return reason
	}
	if alert, ok := remoteAlert(err); ok {
		switch alert {
		case "tls: bad certificate", "tls: unknown certificate authority", "tls: certificate unknown",
			"tls: expired certificate", "tls: unsupported certificate", "tls: revoked certificate":
			return fmt.Sprintf("peer refused this member's certificate (%s): check that ssl.quorum.keyStore here is valid, names this member's host "+
				"and is signed by a CA in the peer's ssl.quorum.trustStore", alert)
		}
		return alertReason(alert)
	}
	msg := err.Error()
	switch {
	// crypto/tls has no error values for these two; TestTCPTLSRefused
	// pins their text.
	case strings.Contains(msg, "didn't provide a certificate"):
		// Also what a crypto/tls client does whose certificate is not
		// signed by one of the CAs this member asks for.
		return "peer presented no certificate, or none signed by a CA in this member's ssl.quorum.trustStore: " +
			"sslQuorum needs ssl.quorum.keyStore on every member, signed by a CA every member trusts"
	case strings.Contains(msg, "no certificates configured"):
		return "this member has no certificate to present: check ssl.quorum.keyStore here"
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return "peer opened with a TLS record but did not continue with a TLS handshake: not a Warden peer?"
	}
	return "TLS handshake failed: check ssl.quorum.* on both members"
}

// dialTLSReason says in plain words why the TLS handshake with a peer
// at host failed, or returns "" for failures logged as for a plaintext
// handshake (a timeout, the transport closing). hasCert says whether this
// member has a certificate to present.
func dialTLSReason(err error, host string, hasCert bool) string {
	if plainFailure(err) {
		return ""
	}
	if reason := certReason(err, host); reason != "" {
		return reason
	}
	if alert, ok := remoteAlert(err); ok {
		return refusedCertReason(alert, hasCert)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return "peer closed the connection during the TLS handshake: its quorum port may accept only plaintext " +
			"(sslQuorum=false there, without portUnification)"
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return "peer answered the TLS handshake with something that is not TLS: its quorum port is not TLS, or the address is not a Warden quorum port"
	}
	return "TLS handshake failed: check ssl.quorum.* on both members"
}

// replyTLSReason says why the reply to the hello could not be read on a
// TLS connection, when the peer sent an alert: with TLS 1.3 a client's
// handshake ends before the server has checked the client's certificate,
// so a refused certificate shows only here. It returns "" otherwise.
// hasCert says whether this member has a certificate to present.
func replyTLSReason(err error, hasCert bool) string {
	if alert, ok := remoteAlert(err); ok {
		return refusedCertReason(alert, hasCert)
	}
	return ""
}

// refusedCertReason is why a peer that sent alert during the handshake
// refused this member's connection; hasCert says whether this member has
// a certificate to present.
func refusedCertReason(alert string, hasCert bool) string {
	switch alert {
	// With TLS 1.2, crypto/tls refuses a missing certificate with a
	// handshake failure.
	case "tls: certificate required", "tls: handshake failure", "tls: bad certificate", "tls: unknown certificate authority",
		"tls: certificate unknown", "tls: expired certificate", "tls: unsupported certificate", "tls: revoked certificate":
		if !hasCert {
			return fmt.Sprintf("peer requires a certificate and this member presented none (%s): sslQuorum needs ssl.quorum.keyStore on every member", alert)
		}
	}
	switch alert {
	case "tls: certificate required":
		// crypto/tls sends no certificate when the peer's list of trusted
		// CAs does not hold the one that signed it.
		return "peer requires a certificate signed by a CA it trusts, and this member's is not, so none was sent: " +
			"check that ssl.quorum.keyStore here is signed by a CA in the peer's ssl.quorum.trustStore"
	case "tls: unknown certificate authority":
		return "peer does not trust this member's certificate: its CA is not in the peer's ssl.quorum.trustStore (check ssl.quorum.keyStore here)"
	case "tls: expired certificate":
		return "peer says this member's certificate has expired or is not valid yet: renew ssl.quorum.keyStore here, and check both members' clocks"
	case "tls: bad certificate", "tls: certificate unknown", "tls: unsupported certificate", "tls: revoked certificate":
		return fmt.Sprintf("peer refused this member's certificate (%s): check ssl.quorum.keyStore here and ssl.quorum.trustStore on the peer", alert)
	case "tls: unrecognized name":
		// What crypto/tls answers when it has no certificate at all.
		return "peer has no certificate to present (tls: unrecognized name): check ssl.quorum.keyStore on the peer"
	}
	return alertReason(alert)
}

// alertReason is why a handshake failed when the peer sent an alert that
// is not about certificates.
func alertReason(alert string) string {
	switch alert {
	case "tls: internal error":
		return "peer failed its side of the TLS handshake (tls: internal error): see its log, and check ssl.quorum.keyStore there"
	case "tls: handshake failure":
		return "peer ended the TLS handshake (tls: handshake failure): with TLS 1.2 this is also how it refuses a member that sent no certificate " +
			"(crypto/tls sends none that the peer's CAs did not sign); check ssl.quorum.keyStore here against the peer's ssl.quorum.trustStore, " +
			"and that both members allow a common TLS version and cipher suite"
	}
	return fmt.Sprintf("peer ended the TLS handshake (%s): check that both members allow a common TLS version and cipher suite "+
		"(ssl.quorum.protocol, ssl.quorum.enabledProtocols, ssl.quorum.ciphersuites)", alert)
}

// remoteAlert returns the alert the peer sent, as crypto/tls names it
// ("tls: bad certificate"), if err is one.
func remoteAlert(err error) (string, bool) {
	if oerr, ok := errors.AsType[*net.OpError](err); ok && oerr.Op == "remote error" && oerr.Err != nil {
		return oerr.Err.Error(), true
	}
	return "", false
}

// certReason says why the peer's certificate did not verify, or returns
// "" when err is not about it. host is the peer's host when this member
// dialled it, "" when it accepted the connection.
func certReason(err error, host string) string {
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); !ok {
		if _, ok := errors.AsType[x509.HostnameError](err); !ok {
			return ""
		}
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return "peer's certificate is not signed by a CA in this member's quorum trust store: check ssl.quorum.keyStore on the peer and ssl.quorum.trustStore here"
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return fmt.Sprintf("peer's certificate does not name the host %s: its ssl.quorum.keyStore must match the host of its server line "+
			"(or set ssl.quorum.hostnameVerification=false)", host)
	}
	if cerr, ok := errors.AsType[x509.CertificateInvalidError](err); ok {
		switch cerr.Reason {
		case x509.Expired:
			return "peer's certificate has expired or is not valid yet: renew ssl.quorum.keyStore on the peer, and check both members' clocks"
		case x509.IncompatibleUsage:
			role := "server"
			if host == "" {
				role = "client"
			}
			return fmt.Sprintf("peer's certificate may not authenticate a TLS %s: quorum certificates need both the serverAuth and clientAuth extended key usages", role)
		}
	}
	return "peer's certificate does not verify: check ssl.quorum.keyStore on the peer and ssl.quorum.trustStore here"
}
