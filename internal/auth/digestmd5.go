package auth

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The SASL names ZooKeeper uses for DIGEST-MD5 (ZooKeeperSaslServer,
// ZooKeeperSaslClient, kazoo): clients connect with digest-uri
// "zookeeper/zk-sasl-md5", and the server offers the realm "zk-sasl-md5".
const (
	MechanismDigestMD5 = "DIGEST-MD5"
	SASLProtocol       = "zookeeper"
	SASLServerName     = "zk-sasl-md5"
)

var (
	// ErrSASLAuthFailed means the client is not who it claims: unknown user
	// or wrong password. ZooKeeper answers it with AUTHFAILED and closes.
	ErrSASLAuthFailed = errors.New("auth: SASL authentication failed")
	// ErrSASLProtocol means a malformed or out-of-order SASL message.
	ErrSASLProtocol = errors.New("auth: SASL protocol violation")
)

// DigestMD5Server is the server side of one SASL DIGEST-MD5 exchange
// (RFC 2831) with quality of protection "auth" only, as ZooKeeper runs it:
//
//	client                                server
//	  empty token              ─────────▶
//	                           ◀─────────  realm="zk-sasl-md5",nonce="…",qop="auth",
//	                                       charset=utf-8,algorithm=md5-sess
//	  username="bob",realm=…,  ─────────▶
//	  nonce=…,cnonce=…,nc=00000001,
//	  qop=auth,digest-uri="zookeeper/zk-sasl-md5",response=<hex>
//	                           ◀─────────  rspauth=<hex>       (done)
//
// A DigestMD5Server is used by one connection's goroutine; it is not safe
// for concurrent use. After an error it refuses every further step.
type DigestMD5Server struct {
	// Rand is the source of the nonce; nil means crypto/rand.Reader. Tests
	// set it before the first Step.
	Rand io.Reader

	users  map[string]string
	host   string
	state  digestState
	nonce  string
	authID string
}

type digestState int

const (
	digestStart digestState = iota
	digestChallenged
	digestDone
	digestFailed
)

// NewDigestMD5Server returns a server checking passwords in users (name →
// clear-text password, as in the JAAS Server section; see ServerUsers).
// host is the server name and realm: SASLServerName for ZooKeeper clients.
func NewDigestMD5Server(users map[string]string, host string) *DigestMD5Server {
	return &DigestMD5Server{users: users, host: host}
}

// Step consumes the client's next token and returns the server's reply.
// done is true once the client is authenticated; the challenge returned with
// it (rspauth) must still be sent to the client. An error wraps
// ErrSASLAuthFailed or ErrSASLProtocol; no reply is due then.
func (s *DigestMD5Server) Step(response []byte) (challenge []byte, done bool, err error) {
	switch s.state {
	case digestStart:
		challenge, err = s.challenge(response)
	case digestChallenged:
		challenge, err = s.verify(response)
	case digestDone:
		err = fmt.Errorf("%w: DIGEST-MD5 exchange already complete", ErrSASLProtocol)
	default:
		err = fmt.Errorf("%w: DIGEST-MD5 exchange already failed", ErrSASLProtocol)
	}
	if err != nil {
		s.state = digestFailed
		return nil, false, err
	}
	return challenge, s.state == digestDone, nil
}

// AuthorizationID returns the authenticated user name once Step reported
// done, "" before. Like ZooKeeper, it is the authentication id: an authzid
// sent by the client takes part in the hash but does not change identity.
func (s *DigestMD5Server) AuthorizationID() string {
	if s.state != digestDone {
		return ""
	}
	return s.authID
}

func (s *DigestMD5Server) challenge(initial []byte) ([]byte, error) {
	if len(initial) != 0 {
		return nil, fmt.Errorf("%w: DIGEST-MD5 must not have an initial response", ErrSASLProtocol)
	}
	r := s.Rand
	if r == nil {
		r = rand.Reader
	}
	raw := make([]byte, 24)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("auth: generating DIGEST-MD5 nonce: %w", err)
	}
	s.nonce = base64.StdEncoding.EncodeToString(raw)
	s.state = digestChallenged
	return fmt.Appendf(nil, `realm="%s",nonce="%s",qop="auth",charset=utf-8,algorithm=md5-sess`,
		quoteValue(s.host), s.nonce), nil
}

func (s *DigestMD5Server) verify(msg []byte) ([]byte, error) {
	d, err := parseDirectives(msg)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"username", "nonce", "cnonce", "nc", "digest-uri", "response"} {
		if _, ok := d[name]; !ok {
			return nil, fmt.Errorf("%w: DIGEST-MD5 response lacks %s", ErrSASLProtocol, name)
		}
	}
	utf8Mode := false
	if cs, ok := d["charset"]; ok {
		if !strings.EqualFold(cs, "utf-8") {
			return nil, fmt.Errorf("%w: unsupported charset %q", ErrSASLProtocol, cs)
		}
		utf8Mode = true
	}
	if d["nonce"] != s.nonce {
		return nil, fmt.Errorf("%w: nonce does not match the challenge", ErrSASLProtocol)
	}
	if d["nc"] != "00000001" {
		return nil, fmt.Errorf("%w: nonce count %q, want 00000001", ErrSASLProtocol, d["nc"])
	}
	qop, ok := d["qop"]
	if !ok {
		qop = "auth"
	}
	if qop != "auth" {
		return nil, fmt.Errorf("%w: qop %q is not supported (only auth; integrity and confidentiality are not offered)", ErrSASLProtocol, qop)
	}
	realm := d["realm"] // absent means the empty realm
	if _, given := d["realm"]; given && realm != s.host {
		return nil, fmt.Errorf("%w: realm %q is not %q", ErrSASLProtocol, realm, s.host)
	}
	uri := d["digest-uri"]
	serv, rest, _ := strings.Cut(uri, "/")
	uriHost, _, _ := strings.Cut(rest, "/")
	if serv != SASLProtocol || !strings.EqualFold(uriHost, s.host) {
		return nil, fmt.Errorf("%w: digest-uri %q, want %s/%s", ErrSASLProtocol, uri, SASLProtocol, s.host)
	}

	user := d["username"]
	if !utf8Mode {
		user = latin1ToString(user)
	}
	password, known := s.users[user]
	if !known {
		return nil, fmt.Errorf("%w: unknown user %q", ErrSASLAuthFailed, user)
	}
	p := digestParams{
		user: user, realm: realm, password: password, nonce: s.nonce, cnonce: d["cnonce"],
		nc: d["nc"], qop: qop, digestURI: uri, authzid: d["authzid"], utf8: utf8Mode,
	}
	want := p.response("AUTHENTICATE")
	if subtle.ConstantTimeCompare([]byte(strings.ToLower(d["response"])), []byte(want)) != 1 {
		return nil, fmt.Errorf("%w: wrong password for user %q", ErrSASLAuthFailed, user)
	}
	s.authID = user
	s.state = digestDone
	return []byte("rspauth=" + p.response("")), nil
}

// digestParams are the inputs of the RFC 2831 §2.1.2.1 response value.
type digestParams struct {
	user, realm, password  string
	nonce, cnonce, nc, qop string
	digestURI, authzid     string
	utf8                   bool // charset=utf-8 was negotiated
}

// response computes response-value (method "AUTHENTICATE", sent by the
// client) or rspauth (method "", sent back by the server):
//
//	A1 = H(user ":" realm ":" password) ":" nonce ":" cnonce [":" authzid]
//	A2 = method ":" digest-uri
//	value = HEX(H(HEX(H(A1)) ":" nonce ":" nc ":" cnonce ":" qop ":" HEX(H(A2))))
func (p digestParams) response(method string) string {
	secret := md5.Sum(p.encode(p.user + ":" + p.realm + ":" + p.password))
	a1 := append(secret[:], ":"+p.nonce+":"+p.cnonce...)
	if p.authzid != "" {
		a1 = append(a1, ":"+p.authzid...)
	}
	ha1 := md5.Sum(a1)
	ha2 := md5.Sum([]byte(method + ":" + p.digestURI))
	kd := md5.Sum([]byte(hex.EncodeToString(ha1[:]) + ":" + p.nonce + ":" + p.nc + ":" + p.cnonce + ":" +
		p.qop + ":" + hex.EncodeToString(ha2[:])))
	return hex.EncodeToString(kd[:])
}

// encode returns the bytes hashed for user, realm and password: UTF-8 when
// charset=utf-8 was negotiated, otherwise ISO 8859-1 when every character
// fits (RFC 2831 §2.1.2.1), else UTF-8.
func (p digestParams) encode(s string) []byte {
	if p.utf8 {
		return []byte(s)
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return []byte(s)
		}
		out = append(out, byte(r))
	}
	return out
}

// latin1ToString reads s as ISO 8859-1 bytes (unless it is valid UTF-8 with
// non-ASCII characters, which clients that ignore the charset rule send).
func latin1ToString(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii || utf8.ValidString(s) {
		return s
	}
	runes := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		runes[i] = rune(s[i])
	}
	return string(runes)
}

// quoteValue escapes '"' and '\' for a quoted-string.
func quoteValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// parseDirectives parses a digest-response: a comma-separated list of
// name=value, value a token or a quoted-string, blanks allowed around
// elements and empty elements ignored (RFC 2831 §7.1 #rule). Names are
// case-insensitive; each may appear once.
func parseDirectives(msg []byte) (map[string]string, error) {
	d := map[string]string{}
	s := string(msg)
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
	}
	for {
		skip()
		for i < len(s) && s[i] == ',' {
			i++
			skip()
		}
		if i >= len(s) {
			return d, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		name := strings.ToLower(s[start:i])
		skip()
		if name == "" || i >= len(s) || s[i] != '=' {
			return nil, fmt.Errorf("%w: malformed directive near %q", ErrSASLProtocol, s[start:])
		}
		i++
		skip()
		var value strings.Builder
		if i < len(s) && s[i] == '"' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				i++
				if c == '\\' && i < len(s) {
					value.WriteByte(s[i])
					i++
					continue
				}
				if c == '"' {
					closed = true
					break
				}
				value.WriteByte(c)
			}
			if !closed {
				return nil, fmt.Errorf("%w: unterminated quoted value of %s", ErrSASLProtocol, name)
			}
		} else {
			start := i
			for i < len(s) && s[i] != ',' && s[i] != ' ' && s[i] != '\t' {
				i++
			}
			value.WriteString(s[start:i])
		}
		if _, dup := d[name]; dup {
			return nil, fmt.Errorf("%w: directive %s given twice", ErrSASLProtocol, name)
		}
		d[name] = value.String()
		skip()
		if i < len(s) && s[i] != ',' {
			return nil, fmt.Errorf("%w: expected ',' after %s", ErrSASLProtocol, name)
		}
	}
}
