package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wardenzk/warden/internal/auth"
)

// authProviderSchemes maps the ZooKeeper authentication provider classes
// Warden has built in to the scheme each provides. ZooKeeper loads the
// classes named by authProvider.N; Warden cannot load Java classes, so any
// other class stops the start (see validateSecurity).
var authProviderSchemes = map[string]string{
	"org.apache.zookeeper.server.auth.SASLAuthenticationProvider":     "sasl",
	"org.apache.zookeeper.server.auth.X509AuthenticationProvider":     "x509",
	"org.apache.zookeeper.server.auth.DigestAuthenticationProvider":   "digest",
	"org.apache.zookeeper.server.auth.IPAuthenticationProvider":       "ip",
	"org.apache.zookeeper.server.auth.EnsembleAuthenticationProvider": "ensemble",
}

// ProviderSchemes returns the authentication schemes the server offers, as
// ZooKeeper's ProviderRegistry holds them: ip always; digest unless
// DigestAuthenticationProvider.enabled=false; sasl when a JAAS file names
// the users (Warden's SASL needs no provider line, as ZooKeeper's SASL
// exchange does not); x509 when the client port speaks TLS (ZooKeeper also
// wants authProvider.x509=…X509AuthenticationProvider, without which it
// closes every connection that shows a certificate); and the schemes of the
// authProvider.N classes (a line naming DigestAuthenticationProvider
// enables digest even when DigestAuthenticationProvider.enabled=false, as
// ZooKeeper's registry loads every class named).
func (c *Config) ProviderSchemes() map[string]bool {
	s := map[string]bool{"ip": true}
	if c.DigestAuthEnabled {
		s["digest"] = true
	}
	if c.JAASConfigFile != "" {
		s["sasl"] = true
	}
	if c.ClientTLS() {
		s["x509"] = true
	}
	for _, class := range c.AuthProviders {
		if scheme, ok := authProviderSchemes[class]; ok {
			s[scheme] = true
		}
	}
	return s
}

// ClientTLS reports whether clients may connect over TLS: a
// secureClientPort, or client.portUnification on the client port.
func (c *Config) ClientTLS() bool {
	return c.SecureClientPort != 0 || c.ClientPortUnification()
}

// ClientPortUnification reports whether the plaintext client port also
// accepts TLS (client.portUnification).
func (c *Config) ClientPortUnification() bool {
	return c.ClientPort != 0 && c.LookupBool("client.portUnification")
}

// SSLQuorum reports whether members talk TLS to each other (sslQuorum).
func (c *Config) SSLQuorum() bool { return c.LookupBool("sslQuorum") }

// QuorumPortUnification reports whether the quorum port accepts both TLS
// and plaintext peers (portUnification), for turning TLS on or off one
// member at a time.
func (c *Config) QuorumPortUnification() bool { return c.LookupBool("portUnification") }

// RequiredAuthSchemes returns the schemes a connection must have
// authenticated with before any request other than auth and sasl
// (enforce.auth.enabled with enforce.auth.schemes, or the older
// sessionRequireClientSASLAuth, which means sasl and wins), or nil when
// authentication is not enforced.
func (c *Config) RequiredAuthSchemes() []string {
	switch {
	case c.SessionRequireClientSASLAuth:
		return []string{"sasl"}
	case c.EnforceAuthEnabled:
		return c.EnforceAuthSchemes
	}
	return nil
}

// SASLSuperUser reports whether a SASL authorization id is a super user:
// the value of superUser or of any superUser.<suffix> key, as ZooKeeper
// 3.8 reads them.
func (c *Config) SASLSuperUser(id string) bool {
	if id == "" {
		return false
	}
	for k, v := range c.Raw {
		k = canonicalKey(k)
		if (k == "superUser" || strings.HasPrefix(k, "superUser.")) && v == id {
			return true
		}
	}
	return false
}

// LookupBool reads a key as Java's Boolean.parseBoolean does: true only
// for "true" in any case; absent or anything else is false.
func (c *Config) LookupBool(name string) bool {
	v, _ := c.Lookup(name)
	return strings.EqualFold(strings.TrimSpace(v), "true")
}

// validateSecurity stops the start on a security setting Warden cannot
// honour: never a warning and a weaker server.
func (c *Config) validateSecurity() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("config: "+format+": %w", append(args, ErrInvalid)...)
	}
	if c.SkipACL && !c.AllowSkipACL {
		return bad("skipACL=yes turns off every ACL check, so any client may read and change every znode; " +
			"Warden refuses it unless warden.allowSkipACL=true is also set (remove skipACL, or add that key if the data is truly public)")
	}
	ns := make([]string, 0, len(c.AuthProviders))
	for n := range c.AuthProviders {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	for _, n := range ns {
		if _, ok := authProviderSchemes[c.AuthProviders[n]]; !ok {
			return bad("authProvider.%s=%s: Warden cannot load Java classes; its built-in providers are %s "+
				"(remove the line, or name one of those classes)", n, c.AuthProviders[n], providerClassList())
		}
	}
	if v, ok := c.Lookup("ssl.authProvider"); ok && strings.TrimSpace(v) != "x509" {
		return bad("ssl.authProvider=%s: Warden authenticates client certificates only with its built-in x509 provider (remove the key)", v)
	}
	if c.EnforceAuthEnabled && !c.SessionRequireClientSASLAuth && len(c.EnforceAuthSchemes) == 0 {
		return bad("enforce.auth.enabled is true but enforce.auth.schemes is empty: name the schemes clients must authenticate with (e.g. sasl or digest)")
	}
	have := c.ProviderSchemes()
	for _, s := range c.RequiredAuthSchemes() {
		if !have[s] {
			return bad("authentication scheme %s is required (enforce.auth.schemes or sessionRequireClientSASLAuth) but not available: %s",
				s, schemeHint(s))
		}
	}
	return nil
}

// schemeHint says how to make scheme available.
func schemeHint(scheme string) string {
	switch scheme {
	case "sasl":
		return "set java.security.auth.login.config to a JAAS file whose Server section lists the users"
	case "digest":
		return "DigestAuthenticationProvider.enabled is false"
	case "x509":
		return "configure TLS for clients (secureClientPort or client.portUnification, with ssl.keyStore and ssl.trustStore)"
	case "ensemble":
		return "add authProvider.1=org.apache.zookeeper.server.auth.EnsembleAuthenticationProvider"
	}
	return "Warden has no provider for it"
}

func providerClassList() string {
	names := make([]string, 0, len(authProviderSchemes))
	for class := range authProviderSchemes {
		names = append(names, class)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func setDigestAlg(a *assignment) error {
	alg, err := auth.ParseDigestAlg(a.value)
	if err != nil {
		return a.fail("%v", err)
	}
	a.c.DigestAlg = alg
	return nil
}
