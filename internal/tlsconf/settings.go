package tlsconf

import (
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Key families. ZooKeeper reads the same suffixes under two prefixes:
// ClientX509Util reads "ssl." (the client port), QuorumX509Util reads
// "ssl.quorum." (the quorum port). zoo.cfg may spell every key with or
// without a leading "zookeeper.".
const (
	ClientPrefix = "ssl."
	QuorumPrefix = "ssl.quorum."
)

// ErrSetting is wrapped by every error Read returns: a value Warden cannot
// honour. The message names the key and says what to write instead.
var ErrSetting = errors.New("tlsconf: invalid TLS setting")

// StoreType is the file format of a key or trust store.
type StoreType string

// The store formats Warden reads (ZooKeeper's KeyStoreFileType without
// BCFKS).
const (
	StoreJKS    StoreType = "JKS"
	StorePKCS12 StoreType = "PKCS12"
	StorePEM    StoreType = "PEM"
)

// Store is one key store or trust store as configured.
type Store struct {
	// Location is the file (<prefix>keyStore.location /
	// <prefix>trustStore.location); "" = not configured.
	Location string
	// Password unlocks the store (<prefix>…Store.password; default "").
	Password string
	// PasswordPath names a file holding the password
	// (<prefix>…Store.passwordPath); when set it wins over Password. The
	// file is read at every load, so it may change with the store; one
	// trailing "\n" is dropped, as ZooKeeper's SecretUtils does.
	PasswordPath string
	// Type is the format: from <prefix>…Store.type (any case), else from
	// Location's extension (.jks, .p12 or .pfx, .pem). Never "" when
	// Location is set.
	Type StoreType
}

// ClientAuth says whether a server asks peers for a certificate
// (<prefix>clientAuth).
type ClientAuth int

// The <prefix>clientAuth values. The zero value is ZooKeeper's default.
const (
	// ClientAuthNeed requires a certificate that verifies against the
	// trust store ("need", the default).
	ClientAuthNeed ClientAuth = iota
	// ClientAuthWant asks for a certificate and verifies it when one is
	// sent, but accepts peers without one ("want").
	ClientAuthWant
	// ClientAuthNone does not ask for a certificate ("none").
	ClientAuthNone
)

// String returns the zoo.cfg spelling: "need", "want" or "none".
func (a ClientAuth) String() string {
	switch a {
	case ClientAuthNeed:
		return "need"
	case ClientAuthWant:
		return "want"
	case ClientAuthNone:
		return "none"
	}
	return "ClientAuth(" + strconv.Itoa(int(a)) + ")"
}

// tlsClientAuth maps the setting onto crypto/tls.
func (a ClientAuth) tlsClientAuth() tls.ClientAuthType {
	switch a {
	case ClientAuthWant:
		return tls.VerifyClientCertIfGiven
	case ClientAuthNone:
		return tls.NoClientCert
	}
	return tls.RequireAndVerifyClientCert
}

// DefaultHandshakeDetectionTimeout is ZooKeeper's
// handshakeDetectionTimeoutMillis default.
const DefaultHandshakeDetectionTimeout = 5000 * time.Millisecond

// Settings is one key family (ClientPrefix or QuorumPrefix) as read from
// zoo.cfg, with ZooKeeper's defaults filled in. Read builds it; NewSource
// loads the stores it names.
type Settings struct {
	// Prefix is the family, ClientPrefix or QuorumPrefix; error messages
	// name keys with it.
	Prefix string
	// KeyStore holds this server's private key and certificate chain.
	KeyStore Store
	// TrustStore holds the CA certificates peers are verified against.
	// When Location is "" peers are verified against the system's CA
	// certificates, as Java uses its cacerts file.
	TrustStore Store
	// MinVersion and MaxVersion bound the TLS versions (tls.VersionTLS12
	// or tls.VersionTLS13), from <prefix>protocol, <prefix>enabledProtocols
	// and <prefix>ciphersuites. Default TLS 1.2 to 1.3.
	MinVersion, MaxVersion uint16
	// CipherSuites are the TLS 1.2 suites (<prefix>ciphersuites; default
	// ZooKeeper's list less the suites Go does not offer safely). TLS 1.3
	// always offers its three suites.
	CipherSuites []uint16
	// ClientAuth is what a server asks of its peers (default need).
	ClientAuth ClientAuth
	// HostnameVerification makes a dialing side check that the server's
	// certificate names the host it dialed (<prefix>hostnameVerification;
	// default true).
	HostnameVerification bool
	// ClientHostnameVerification makes a server check that a client's
	// certificate names the client's address. It is
	// <prefix>clientHostnameVerification (default true for the quorum,
	// false for clients) and HostnameVerification, as in ZooKeeper.
	ClientHostnameVerification bool
	// AllowReverseDNSLookup lets hostname verification look up the name of
	// an address when the certificate does not name the address itself
	// (<prefix>allowReverseDnsLookup; default true for the quorum, false
	// for clients).
	AllowReverseDNSLookup bool
	// HandshakeDetectionTimeout bounds how long a unified port waits for
	// a connection's first bytes to tell TLS from plaintext
	// (<prefix>handshakeDetectionTimeoutMillis; default 5000 ms; values
	// below 1 ms fall back to the default with a warning, as in ZooKeeper).
	HandshakeDetectionTimeout time.Duration
	// Warnings are settings accepted but worth a log line: ZooKeeper
	// options without effect in Warden, and values ZooKeeper would also
	// replace with a default. The caller logs them.
	Warnings []string
}

// Configured reports whether a key store is set: without one a server
// cannot present a certificate.
func (s Settings) Configured() bool { return s.KeyStore.Location != "" }

// Read reads one key family from lookup, which returns a zoo.cfg value by
// name (config.Config.Lookup fits: it accepts names with or without
// "zookeeper."). prefix is ClientPrefix or QuorumPrefix. Every key or value
// Warden cannot honour is an error wrapping ErrSetting that names the key;
// Read never falls back to something weaker than ZooKeeper would use.
// Read does not open files: NewSource does.
func Read(lookup func(string) (string, bool), prefix string) (Settings, error) {
	if prefix != ClientPrefix && prefix != QuorumPrefix {
		return Settings{}, fmt.Errorf("tlsconf: key family %q: use tlsconf.ClientPrefix or tlsconf.QuorumPrefix: %w", prefix, ErrSetting)
	}
	r := reader{lookup: lookup, prefix: prefix}
	quorum := prefix == QuorumPrefix
	s := Settings{
		Prefix:               prefix,
		ClientAuth:           ClientAuthNeed,
		HostnameVerification: true,
	}
	var err error
	if s.KeyStore, err = r.store("keyStore"); err != nil {
		return Settings{}, err
	}
	if s.TrustStore, err = r.store("trustStore"); err != nil {
		return Settings{}, err
	}
	if err := r.versionsAndSuites(&s); err != nil {
		return Settings{}, err
	}
	if v, ok := r.get("clientAuth"); ok {
		switch strings.ToLower(v) {
		case "", "need":
			s.ClientAuth = ClientAuthNeed
		case "want":
			s.ClientAuth = ClientAuthWant
		case "none":
			s.ClientAuth = ClientAuthNone
		default:
			return Settings{}, r.bad("clientAuth", v, "write need, want or none")
		}
	}
	if s.HostnameVerification, err = r.boolean("hostnameVerification", true); err != nil {
		return Settings{}, err
	}
	clientHost, err := r.boolean("clientHostnameVerification", quorum)
	if err != nil {
		return Settings{}, err
	}
	s.ClientHostnameVerification = s.HostnameVerification && clientHost
	if s.AllowReverseDNSLookup, err = r.boolean("allowReverseDnsLookup", quorum); err != nil {
		return Settings{}, err
	}
	s.HandshakeDetectionTimeout = DefaultHandshakeDetectionTimeout
	if v, ok := r.get("handshakeDetectionTimeoutMillis"); ok {
		ms, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return Settings{}, r.bad("handshakeDetectionTimeoutMillis", v, "write a number of milliseconds")
		}
		if ms < 1 {
			s.warn("%shandshakeDetectionTimeoutMillis=%d is below 1; using %d, as ZooKeeper does", prefix, ms, DefaultHandshakeDetectionTimeout.Milliseconds())
		} else {
			s.HandshakeDetectionTimeout = time.Duration(ms) * time.Millisecond
		}
	}
	for _, key := range []string{"crl", "ocsp"} {
		on, err := r.boolean(key, false)
		if err != nil {
			return Settings{}, err
		}
		if on {
			return Settings{}, r.bad(key, "true", "Warden does not check certificate revocation (CRL or OCSP); remove the key or set it to false, and revoke access by removing the certificate's CA from the trust store or by using short-lived certificates")
		}
	}
	if v, ok := r.get("context.supplier.class"); ok && v != "" {
		return Settings{}, r.bad("context.supplier.class", v, "Warden cannot run a Java SSLContext supplier; remove the key and configure the keyStore.* and trustStore.* keys")
	}
	if !quorum {
		// ClientX509Util only: the Netty provider of the client port.
		if v, ok := r.get("sslProvider"); ok {
			switch strings.ToUpper(v) {
			case "JDK":
			case "OPENSSL", "OPENSSL_REFCNT":
				s.warn("%ssslProvider=%s has no effect: Warden always uses Go's TLS", prefix, v)
			default:
				return Settings{}, r.bad("sslProvider", v, "write JDK, OPENSSL or OPENSSL_REFCNT (Warden uses Go's TLS whichever is named)")
			}
		}
	}
	// fips-mode is one key for both families. In ZooKeeper it swaps the
	// trust manager that verifies host names for the JVM's own, which skips
	// host names on the quorum. Warden verifies as the hostnameVerification
	// keys say in either mode.
	fips, err := r.booleanKey("fips-mode", false)
	if err != nil {
		return Settings{}, err
	}
	if fips && quorum && s.HostnameVerification {
		s.warn("fips-mode=true: ZooKeeper then skips host name verification on the quorum; Warden still verifies (set %shostnameVerification=false to match ZooKeeper)", prefix)
	}
	if s.TrustStore.Location == "" && s.KeyStore.Location != "" {
		s.warn("%strustStore.location is not set: peers are verified against the system's CA certificates, as Java uses its cacerts", prefix)
	}
	return s, nil
}

func (s *Settings) warn(format string, args ...any) {
	s.Warnings = append(s.Warnings, fmt.Sprintf(format, args...))
}

// key returns the full zoo.cfg name of suffix in this family.
func (s Settings) key(suffix string) string { return s.Prefix + suffix }

// reader reads the keys of one family.
type reader struct {
	lookup func(string) (string, bool)
	prefix string
}

// get returns the trimmed value of <prefix>suffix. zoo.cfg values are
// trimmed by ZooKeeper before they become system properties.
func (r reader) get(suffix string) (string, bool) {
	v, ok := r.lookup(r.prefix + suffix)
	return strings.TrimSpace(v), ok
}

func (r reader) bad(suffix, value, advice string) error {
	return fmt.Errorf("tlsconf: %s%s=%q: %s: %w", r.prefix, suffix, value, advice, ErrSetting)
}

// boolean reads <prefix>suffix as true or false (any case). ZooKeeper uses
// Boolean.parseBoolean, which reads every other value as false; Warden
// refuses them, since a typo would silently switch a check off.
func (r reader) boolean(suffix string, def bool) (bool, error) {
	return r.parseBool(r.prefix+suffix, def)
}

// booleanKey is boolean for a key outside the family.
func (r reader) booleanKey(key string, def bool) (bool, error) {
	return r.parseBool(key, def)
}

func (r reader) parseBool(key string, def bool) (bool, error) {
	v, ok := r.lookup(key)
	if !ok {
		return def, nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("tlsconf: %s=%q: write true or false (ZooKeeper reads anything but \"true\" as false): %w", key, v, ErrSetting)
}

// store reads <prefix><kind>.location, .password, .passwordPath, .type.
func (r reader) store(kind string) (Store, error) {
	var st Store
	st.Location, _ = r.get(kind + ".location")
	st.Password, _ = r.get(kind + ".password")
	st.PasswordPath, _ = r.get(kind + ".passwordPath")
	typ, _ := r.get(kind + ".type")
	if st.Location == "" {
		return st, nil
	}
	if typ != "" {
		switch strings.ToUpper(typ) {
		case "JKS":
			st.Type = StoreJKS
		case "PKCS12":
			st.Type = StorePKCS12
		case "PEM":
			st.Type = StorePEM
		case "BCFKS":
			return Store{}, r.bad(kind+".type", typ, "Warden cannot read Bouncy Castle FIPS stores; convert the store to PKCS12 (keytool -importkeystore -deststoretype PKCS12) and set the type to PKCS12")
		default:
			return Store{}, r.bad(kind+".type", typ, "write JKS, PKCS12 or PEM")
		}
		return st, nil
	}
	switch strings.ToLower(filepath.Ext(st.Location)) {
	case ".jks":
		st.Type = StoreJKS
	case ".p12", ".pfx":
		st.Type = StorePKCS12
	case ".pem":
		st.Type = StorePEM
	case ".bcfks":
		return Store{}, r.bad(kind+".location", st.Location, "Warden cannot read Bouncy Castle FIPS stores; convert the store to PKCS12 and name it .p12")
	default:
		return Store{}, r.bad(kind+".location", st.Location, "cannot tell the store's format from the file name; set "+r.prefix+kind+".type to JKS, PKCS12 or PEM")
	}
	return st, nil
}

// TLS 1.3 cipher suites. Go always enables all three when TLS 1.3 is on;
// ZooKeeper's default list names the same three.
var tls13Suites = []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256}

// defaultSuites is ZooKeeper's default list for Java 9+ (X509Util
// DEFAULT_CIPHERS_JAVA9: ECDHE with AES-GCM, then AES-CBC, then the TLS 1.3
// suites), less what Go does not offer safely: the CBC-SHA256 suites (in
// tls.InsecureCipherSuites: Go's CBC mode lacks Lucky13 countermeasures)
// and the CBC-SHA384 suites (not implemented by Go). Peers that speak TLS
// 1.2 all offer a GCM suite.
var defaultSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
}

// versionsAndSuites reads protocol, enabledProtocols and ciphersuites, and
// sets MinVersion, MaxVersion and CipherSuites the way Java's SSLEngine
// ends up negotiating with them.
func (r reader) versionsAndSuites(s *Settings) error {
	// <prefix>protocol picks Java's SSLContext; its default enabled
	// protocols are what ZooKeeper enables unless enabledProtocols is set.
	// Java 17 disables TLSv1 and TLSv1.1 (jdk.tls.disabledAlgorithms), so
	// a context for them has no usable protocol at all.
	versions := map[uint16]bool{tls.VersionTLS12: true, tls.VersionTLS13: true}
	if v, ok := r.get("protocol"); ok {
		switch strings.ToLower(v) {
		case "tls", "ssl", "tlsv1.3":
		case "tlsv1.2":
			versions = map[uint16]bool{tls.VersionTLS12: true}
		case "tlsv1", "tlsv1.1", "sslv3":
			return r.bad("protocol", v, "Java 17 disables this protocol and Warden does not offer it; write TLSv1.2 or TLSv1.3")
		default:
			return r.bad("protocol", v, "write TLSv1.3 (TLS 1.3 and 1.2, the default) or TLSv1.2 (TLS 1.2 only)")
		}
	}
	if v, ok := r.get("enabledProtocols"); ok {
		versions = map[uint16]bool{}
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			switch strings.ToLower(name) {
			case "tlsv1.2":
				versions[tls.VersionTLS12] = true
			case "tlsv1.3":
				versions[tls.VersionTLS13] = true
			case "tlsv1", "tlsv1.1", "sslv3", "sslv2hello":
				return r.bad("enabledProtocols", v, name+" is disabled in Java 17 and not offered by Warden; list TLSv1.2 and/or TLSv1.3")
			default:
				return r.bad("enabledProtocols", v, fmt.Sprintf("%q is not a protocol; list TLSv1.2 and/or TLSv1.3, comma-separated", name))
			}
		}
	}

	suites12 := slices.Clone(defaultSuites)
	has13 := true // the default list names all three TLS 1.3 suites
	if v, ok := r.get("ciphersuites"); ok {
		suites12 = nil
		var found13 []uint16
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			id, ok := suiteByName(name)
			if !ok {
				return r.bad("ciphersuites", v, fmt.Sprintf("%q is not a cipher suite Go's TLS offers; remove it (Warden offers: %s)", name, strings.Join(offeredSuiteNames(), ", ")))
			}
			if slices.Contains(tls13Suites, id) {
				if !slices.Contains(found13, id) {
					found13 = append(found13, id)
				}
				continue
			}
			if !slices.Contains(suites12, id) {
				suites12 = append(suites12, id)
			}
		}
		switch {
		case len(found13) == len(tls13Suites):
			has13 = true
		case len(found13) == 0:
			has13 = false
		default:
			return r.bad("ciphersuites", v, "Go's TLS 1.3 always offers TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 and TLS_CHACHA20_POLY1305_SHA256; list all three, or none to turn TLS 1.3 off")
		}
	}
	if versions[tls.VersionTLS13] && !has13 {
		// Java enables no TLS 1.3 suite, so it never negotiates TLS 1.3.
		delete(versions, tls.VersionTLS13)
		if versions[tls.VersionTLS12] {
			s.warn("%sciphersuites lists no TLS 1.3 suite: TLS 1.3 is off, as in ZooKeeper", r.prefix)
		}
	}
	if versions[tls.VersionTLS12] && len(suites12) == 0 {
		delete(versions, tls.VersionTLS12)
		if versions[tls.VersionTLS13] {
			s.warn("%sciphersuites lists no TLS 1.2 suite: TLS 1.2 is off, as in ZooKeeper", r.prefix)
		}
	}
	switch {
	case versions[tls.VersionTLS12] && versions[tls.VersionTLS13]:
		s.MinVersion, s.MaxVersion = tls.VersionTLS12, tls.VersionTLS13
	case versions[tls.VersionTLS12]:
		s.MinVersion, s.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	case versions[tls.VersionTLS13]:
		s.MinVersion, s.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	default:
		return fmt.Errorf("tlsconf: %sprotocol, %senabledProtocols and %sciphersuites leave no protocol with a cipher suite; every handshake would fail: %w", r.prefix, r.prefix, r.prefix, ErrSetting)
	}
	if s.MinVersion == tls.VersionTLS12 {
		s.CipherSuites = suites12
	}
	return nil
}

// suiteByName finds a suite Go offers safely by its IANA name, which is
// also Java's name ("SSL_" prefixes of Java's legacy names are read as
// "TLS_").
func suiteByName(name string) (uint16, bool) {
	if rest, ok := strings.CutPrefix(name, "SSL_"); ok {
		name = "TLS_" + rest
	}
	for _, cs := range tls.CipherSuites() {
		if cs.Name == name {
			return cs.ID, true
		}
	}
	return 0, false
}

func offeredSuiteNames() []string {
	var names []string
	for _, cs := range tls.CipherSuites() {
		names = append(names, cs.Name)
	}
	return names
}
