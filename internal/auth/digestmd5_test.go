package auth

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestDigestMD5RFCVector checks the hash computation against the example
// exchange of RFC 2831 §4.
func TestDigestMD5RFCVector(t *testing.T) {
	p := digestParams{
		user: "chris", realm: "elwood.innosoft.com", password: "secret",
		nonce: "OA6MG9tEQGm2hh", cnonce: "OA6MHXh6VqTrRk", nc: "00000001", qop: "auth",
		digestURI: "imap/elwood.innosoft.com", utf8: true,
	}
	if got := p.response("AUTHENTICATE"); got != "d388dad90d4bbd760a152321f2143af7" {
		t.Errorf("response = %s, want d388dad90d4bbd760a152321f2143af7", got)
	}
	if got := p.response(""); got != "ea40f60335c427b5527b84dbabcdfffd" {
		t.Errorf("rspauth = %s, want ea40f60335c427b5527b84dbabcdfffd", got)
	}
}

// testClient is a DIGEST-MD5 client written from RFC 2831, independently of
// the server's code.
type testClient struct {
	user, password, authzid string
	cnonce, digestURI       string
	latin1                  bool // do not send charset; hash ISO 8859-1
	sentNonce, realm        string
}

func md5hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}

func toLatin1(s string) string {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}

func (c *testClient) value(method string) string {
	user, pass := c.user, c.password
	if c.latin1 {
		user, pass = toLatin1(user), toLatin1(pass)
	}
	inner := md5.Sum([]byte(user + ":" + c.realm + ":" + pass))
	a1 := string(inner[:]) + ":" + c.sentNonce + ":" + c.cnonce
	if c.authzid != "" {
		a1 += ":" + c.authzid
	}
	a2 := method + ":" + c.digestURI
	return md5hex([]byte(md5hex([]byte(a1)) + ":" + c.sentNonce + ":00000001:" + c.cnonce + ":auth:" + md5hex([]byte(a2))))
}

func (c *testClient) respond(challenge []byte) []byte {
	d, err := parseDirectives(challenge)
	if err != nil {
		panic(err)
	}
	c.sentNonce, c.realm = d["nonce"], d["realm"]
	user := c.user
	msg := ""
	if c.latin1 {
		user = toLatin1(user)
	} else {
		msg = "charset=utf-8,"
	}
	msg += fmt.Sprintf(`username="%s",realm="%s",nonce="%s",nc=00000001,cnonce="%s",digest-uri="%s",maxbuf=65536,response=%s,qop=auth`,
		user, c.realm, c.sentNonce, c.cnonce, c.digestURI, c.value("AUTHENTICATE"))
	if c.authzid != "" {
		msg += fmt.Sprintf(`,authzid="%s"`, c.authzid)
	}
	return []byte(msg)
}

var testUsers = map[string]string{"bob": "bobsecret", "super": "adminsecret", "jürgen": "pässwort"}

func newTestServer() *DigestMD5Server {
	s := NewDigestMD5Server(testUsers, SASLServerName)
	s.Rand = bytes.NewReader(bytes.Repeat([]byte{0xAB}, 24))
	return s
}

func TestDigestMD5Exchange(t *testing.T) {
	tests := []struct {
		name   string
		client testClient
	}{
		{"utf-8", testClient{user: "bob", password: "bobsecret"}},
		{"authzid", testClient{user: "super", password: "adminsecret", authzid: "someone"}},
		{"latin-1 without charset", testClient{user: "jürgen", password: "pässwort", latin1: true}},
		{"utf-8 non-ascii", testClient{user: "jürgen", password: "pässwort"}},
		{"uri host case", testClient{user: "bob", password: "bobsecret", digestURI: "zookeeper/ZK-SASL-MD5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.client
			c.cnonce = "OA6MHXh6VqTrRk"
			if c.digestURI == "" {
				c.digestURI = "zookeeper/zk-sasl-md5"
			}
			s := newTestServer()
			challenge, done, err := s.Step(nil)
			if err != nil || done {
				t.Fatalf("first Step = %v, %v", done, err)
			}
			want := `realm="zk-sasl-md5",nonce="q6urq6urq6urq6urq6urq6urq6urq6ur",qop="auth",charset=utf-8,algorithm=md5-sess`
			if string(challenge) != want {
				t.Errorf("challenge = %s\nwant        %s", challenge, want)
			}
			if s.AuthorizationID() != "" {
				t.Error("AuthorizationID before completion")
			}
			rspauth, done, err := s.Step(c.respond(challenge))
			if err != nil || !done {
				t.Fatalf("second Step = %v, %v", done, err)
			}
			if string(rspauth) != "rspauth="+c.value("") {
				t.Errorf("rspauth = %s, want rspauth=%s", rspauth, c.value(""))
			}
			if got := s.AuthorizationID(); got != c.user {
				t.Errorf("AuthorizationID = %q, want %q", got, c.user)
			}
			if _, _, err := s.Step(nil); !errors.Is(err, ErrSASLProtocol) {
				t.Errorf("Step after done = %v, want ErrSASLProtocol", err)
			}
		})
	}
}

func TestDigestMD5Failures(t *testing.T) {
	good := func() (*DigestMD5Server, string) {
		s := newTestServer()
		ch, _, err := s.Step([]byte{})
		if err != nil {
			t.Fatal(err)
		}
		c := testClient{user: "bob", password: "bobsecret", cnonce: "abc", digestURI: "zookeeper/zk-sasl-md5"}
		return s, string(c.respond(ch))
	}
	_, valid := good()
	nonce := "q6urq6urq6urq6urq6urq6urq6urq6ur"
	tests := []struct {
		name string
		edit func(string) string
		want error
	}{
		{"wrong password", func(string) string {
			c := testClient{user: "bob", password: "nope", cnonce: "abc", digestURI: "zookeeper/zk-sasl-md5"}
			return string(c.respond([]byte(`realm="zk-sasl-md5",nonce="` + nonce + `"`)))
		}, ErrSASLAuthFailed},
		{"unknown user", func(m string) string { return strings.Replace(m, `username="bob"`, `username="eve"`, 1) }, ErrSASLAuthFailed},
		{"tampered response", func(m string) string { return strings.Replace(m, "response=", "response=0", 1) }, ErrSASLAuthFailed},
		{"wrong nonce", func(m string) string { return strings.Replace(m, nonce, "x"+nonce[1:], 1) }, ErrSASLProtocol},
		{"nc 2", func(m string) string { return strings.Replace(m, "nc=00000001", "nc=00000002", 1) }, ErrSASLProtocol},
		{"qop auth-int", func(m string) string { return strings.Replace(m, "qop=auth", "qop=auth-int", 1) }, ErrSASLProtocol},
		{"qop auth-conf", func(m string) string { return strings.Replace(m, "qop=auth", `qop="auth-conf"`, 1) }, ErrSASLProtocol},
		{"wrong realm", func(m string) string { return strings.Replace(m, `realm="zk-sasl-md5"`, `realm="other"`, 1) }, ErrSASLProtocol},
		{"wrong service", func(m string) string { return strings.Replace(m, "zookeeper/zk-sasl-md5", "imap/zk-sasl-md5", 1) }, ErrSASLProtocol},
		{"wrong host", func(m string) string { return strings.Replace(m, "zookeeper/zk-sasl-md5", "zookeeper/host", 1) }, ErrSASLProtocol},
		{"no response", func(m string) string { return m[:strings.Index(m, ",response=")] }, ErrSASLProtocol},
		{"duplicate", func(m string) string { return m + `,username="bob"` }, ErrSASLProtocol},
		{"unterminated", func(m string) string { return m + `,authzid="x` }, ErrSASLProtocol},
		{"charset", func(m string) string { return strings.Replace(m, "charset=utf-8", "charset=iso-8859-1", 1) }, ErrSASLProtocol},
		{"garbage", func(string) string { return "hello" }, ErrSASLProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := good()
			_, done, err := s.Step([]byte(tt.edit(valid)))
			if done || !errors.Is(err, tt.want) {
				t.Fatalf("Step = %v, %v; want %v", done, err, tt.want)
			}
			if s.AuthorizationID() != "" {
				t.Error("AuthorizationID after failure")
			}
			if _, _, err := s.Step([]byte(valid)); !errors.Is(err, ErrSASLProtocol) {
				t.Errorf("Step after failure = %v, want ErrSASLProtocol", err)
			}
		})
	}
	t.Run("initial response", func(t *testing.T) {
		if _, _, err := newTestServer().Step([]byte("x")); !errors.Is(err, ErrSASLProtocol) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestParseDirectives(t *testing.T) {
	d, err := parseDirectives([]byte(` , Username = "a\"b\\c" ,, nc=00000001 ,qop=auth,`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"username": `a"b\c`, "nc": "00000001", "qop": "auth"}
	if fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", d, want)
	}
	for _, bad := range []string{"a", "=b", `a="b" c=d`, "a=b c"} {
		if _, err := parseDirectives([]byte(bad)); !errors.Is(err, ErrSASLProtocol) {
			t.Errorf("parseDirectives(%q) = %v, want ErrSASLProtocol", bad, err)
		}
	}
}

func FuzzDigestMD5Step(f *testing.F) {
	f.Add([]byte(`username="bob",nonce="x",cnonce="y",nc=00000001,digest-uri="zookeeper/zk-sasl-md5",response=00`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		s := newTestServer()
		if _, _, err := s.Step(nil); err != nil {
			t.Fatal(err)
		}
		if _, done, err := s.Step(msg); done || err == nil {
			t.Fatalf("random message authenticated: %q", msg)
		}
	})
}
