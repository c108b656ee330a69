package server

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/wire"
)

// This file is authentication on a client connection: addauth (opcode
// 100), SASL (102), the x509 identity of a TLS client certificate, and
// enforced authentication (enforce.auth.enabled,
// sessionRequireClientSASLAuth). docs/security.md describes it.

// authFailed counts and logs a failed authentication with the peer's
// address, as ZooKeeper counts auth_failed_count; the audit log gets an
// "authenticate:<scheme>" failure record too (beyond ZooKeeper, whose
// audit log has no authentication records).
func (c *conn) authFailed(scheme, why string) {
	c.srv.stats.authFailed.Add(1)
	c.log.Warn("authentication failed", "scheme", scheme, "reason", why, "session", sessionHex(c.sessionID()))
	if a := c.srv.audit; a != nil {
		a.write(auditEvent{session: sessionHex(c.sessionID()), user: auditUsers(c.caller().IDs), ip: c.ip,
			operation: auditAuthenticate + ":" + scheme, result: auditFailure})
	}
}

// authPacket handles addauth. Unknown schemes fail the connection, as in
// ZooKeeper: the -115 reply, then close.
func (c *conn) authPacket(r *reply, body []byte) bool {
	var p wire.AuthPacket
	fail := func(why string) bool {
		c.authFailed(p.Scheme, why)
		r.exec = func() []byte { return replyFrame(r.xid, 0, wire.ErrAuthFailed, nil) }
		r.closeAfter = true
		c.enqueue(r)
		return false
	}
	if err := wire.Unmarshal(body, &p, c.srv.maxBuffer); err != nil {
		// ZooKeeper closes the connection without a reply.
		c.log.Info("undecodable auth packet; closing the connection", "err", err)
		c.close("undecodable auth packet")
		return false
	}
	schemes := c.srv.cfg.ProviderSchemes()
	switch {
	case !schemes[p.Scheme]:
		return fail("no authentication provider for the scheme")
	case p.Scheme == "digest":
		id := c.srv.cfg.DigestAlg.ID(string(p.Auth))
		c.addAuth(wire.ID{Scheme: "digest", ID: id})
		if sd := c.srv.cfg.SuperDigest; sd != "" && id == sd {
			c.addAuth(wire.ID{Scheme: "super", ID: ""})
		}
	case p.Scheme == "ip":
		c.addAuth(wire.ID{Scheme: "ip", ID: c.ip})
	case p.Scheme == "x509":
		// ZooKeeper's provider re-checks the connection's certificate.
		if c.x509ID == "" {
			return fail("the connection has no verified client certificate")
		}
		c.addX509(c.x509ID)
	case p.Scheme == "ensemble":
		if !c.ensembleNameOK(string(p.Auth)) {
			// ZooKeeper closes the connection without an answer.
			c.authFailed(p.Scheme, "the client asked for another ensemble ("+string(p.Auth)+"): check its connect string")
			c.close("wrong ensemble name")
			return false
		}
	default:
		return fail("no authentication provider for the scheme")
	}
	r.exec = func() []byte { return replyFrame(r.xid, 0, wire.CodeOK, nil) }
	return c.enqueue(r)
}

// ensembleNameOK is EnsembleAuthenticationProvider: an empty name, or any
// name when zookeeper.ensembleAuthName is not set, passes; otherwise the
// name must be one of its comma-separated names.
func (c *conn) ensembleNameOK(name string) bool {
	names, ok := c.srv.cfg.Lookup("ensembleAuthName")
	if name == "" || !ok {
		return true
	}
	for n := range strings.SplitSeq(names, ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

// addX509 adds the identity of a verified client certificate (its subject
// as Java's X500Principal.getName() writes it), and super first when it is
// X509AuthenticationProvider.superUser, as ZooKeeper does.
func (c *conn) addX509(dn string) {
	if su := c.srv.cfg.X509SuperUser; su != "" && dn == su {
		c.addAuth(wire.ID{Scheme: "super", ID: dn})
	}
	c.addAuth(wire.ID{Scheme: "x509", ID: dn})
}

// saslPacket steps a SASL DIGEST-MD5 exchange against the users of the
// JAAS server section.
func (c *conn) saslPacket(r *reply, body []byte) bool {
	var q wire.GetSASLRequest
	required := slices.Contains(c.srv.cfg.RequiredAuthSchemes(), "sasl")
	fail := func(why string) bool {
		c.authFailed("sasl", why)
		if c.srv.cfg.AllowSASLFailedClients && !required {
			// allowSaslFailedClients: the connection goes on without the
			// sasl identity; ZooKeeper then answers the token it has.
			r.exec = func() []byte { return replyFrame(r.xid, 0, wire.CodeOK, &wire.SetSASLResponse{}) }
			return c.enqueue(r)
		}
		code := wire.ErrAuthFailed
		if required {
			code = wire.ErrSessionClosedRequiresSASL
		}
		// ZooKeeper sends a (null-token) SetSASLResponse body with the error.
		r.exec = func() []byte {
			return wire.AppendRecords(nil, &wire.ReplyHeader{Xid: r.xid, Err: code}, &wire.SetSASLResponse{})
		}
		r.closeAfter = true
		c.enqueue(r)
		return false
	}
	if err := wire.Unmarshal(body, &q, c.srv.maxBuffer); err != nil {
		return fail("undecodable SASL packet")
	}
	if c.srv.saslUsers == nil {
		return fail("SASL requested but no JAAS server section is configured (java.security.auth.login.config)")
	}
	if c.sasl == nil {
		c.sasl = auth.NewDigestMD5Server(c.srv.saslUsers, "zk-sasl-md5")
	}
	challenge, done, err := c.sasl.Step(q.Token)
	if err != nil {
		return fail(err.Error())
	}
	if done {
		id := c.sasl.AuthorizationID()
		c.addAuth(wire.ID{Scheme: "sasl", ID: id})
		if c.srv.cfg.SASLSuperUser(id) {
			c.addAuth(wire.ID{Scheme: "super", ID: ""})
		}
	}
	r.exec = func() []byte {
		return replyFrame(r.xid, 0, wire.CodeOK, &wire.SetSASLResponse{Token: challenge})
	}
	return c.enqueue(r)
}

// authenticated reports whether the connection may send requests other
// than auth and sasl: always, unless authentication is enforced; then once
// it holds an id of one of the required schemes.
func (c *conn) authenticated() bool {
	required := c.srv.cfg.RequiredAuthSchemes()
	if len(required) == 0 {
		return true
	}
	for _, id := range c.caller().IDs {
		if slices.Contains(required, id.Scheme) {
			return true
		}
	}
	return false
}

// refuseUnauthenticated answers a request of a connection that has not
// authenticated as enforced: SESSIONCLOSEDREQUIRESASLAUTH (-124), then the
// connection closes, as ZooKeeper 3.7+ does. The session itself is not
// closed (ZooKeeper leaves it to expire).
func (c *conn) refuseUnauthenticated(r *reply) bool {
	ids := c.caller().IDs
	schemes := make([]string, len(ids))
	for i, id := range ids {
		schemes[i] = id.Scheme
	}
	c.log.Warn("client has not authenticated with a required scheme; closing the connection",
		"has", schemes, "required", c.srv.cfg.RequiredAuthSchemes(), "session", sessionHex(c.sessionID()))
	r.exec = func() []byte { return replyFrame(r.xid, 0, wire.ErrSessionClosedRequiresSASL, nil) }
	r.closeAfter = true
	c.enqueue(r)
	return false
}

// checkAuth loads the SASL users and refuses, at start, what would leave
// the server weaker than zoo.cfg asks. skipACL=yes (allowed only with
// warden.allowSkipACL) is logged loudly.
func (s *Server) checkAuth() error {
	cfg := &s.cfg
	if cfg.JAASConfigFile != "" {
		f, err := os.Open(cfg.JAASConfigFile)
		if err != nil {
			return fmt.Errorf("server: read JAAS file for SASL (java.security.auth.login.config): %w", err)
		}
		defer f.Close()
		jaas, err := auth.ParseJAAS(f)
		if err != nil {
			return fmt.Errorf("server: JAAS file %s: %w", cfg.JAASConfigFile, err)
		}
		if s.saslUsers, err = auth.ServerUsers(jaas, cfg.SASLServerContext); err != nil {
			return fmt.Errorf("server: JAAS file %s: %w", cfg.JAASConfigFile, err)
		}
	}
	if slices.Contains(cfg.RequiredAuthSchemes(), "sasl") && len(s.saslUsers) == 0 {
		return fmt.Errorf("server: SASL authentication is required but JAAS file %q has no users in section %s: "+
			"add user_<name>=\"<password>\" options to a DigestLoginModule entry there", cfg.JAASConfigFile, cfg.SASLServerContext)
	}
	if cfg.SkipACL {
		s.log.Error("skipACL=yes with warden.allowSkipACL=true: ACLs are NOT checked; every client may read, change and delete every znode")
	}
	return nil
}
