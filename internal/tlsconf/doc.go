// Package tlsconf turns ZooKeeper's TLS settings into crypto/tls
// configurations: it reads the ssl.* keys of zoo.cfg, loads the JKS,
// PKCS12 and PEM key and trust stores they name, serves tls.Configs that
// follow certificate reloads, and computes the x509 ACL id of a client
// certificate exactly as Java does.
//
// # Key families
//
// ZooKeeper reads one set of key suffixes under two prefixes, each of
// which may also be written with "zookeeper." in front:
//
//	ssl.          the client port (secureClientPort, client.portUnification)
//	ssl.quorum.   the quorum port (sslQuorum, portUnification)
//
// Read takes one family (ClientPrefix or QuorumPrefix) and returns its
// Settings with ZooKeeper's defaults:
//
//	suffix                            default                 Warden
//	keyStore.location                 none                    required to serve TLS
//	keyStore.password                 ""                      also opens JKS keys
//	keyStore.passwordPath             none                    read at every (re)load
//	keyStore.type                     from the extension      JKS, PKCS12, PEM; BCFKS refused
//	trustStore.location               none (JVM cacerts)      none: the system's CAs
//	trustStore.password               ""
//	trustStore.passwordPath           none
//	trustStore.type                   from the extension      as keyStore.type
//	protocol                          TLSv1.3                 TLSv1.3, TLS, SSL: TLS 1.3+1.2;
//	                                                          TLSv1.2: 1.2 only; TLSv1, TLSv1.1,
//	                                                          SSLv3 refused (disabled in Java 17)
//	enabledProtocols                  protocol's default      TLSv1.2 and/or TLSv1.3
//	ciphersuites                      see below               IANA (= Java) names
//	clientAuth                        need                    need, want, none
//	hostnameVerification              true
//	clientHostnameVerification        quorum true, client     effective only with
//	                                  false (3.9.4)           hostnameVerification
//	allowReverseDnsLookup             quorum true, client     (3.9.5)
//	                                  false
//	handshakeDetectionTimeoutMillis   5000                    < 1: 5000, as ZooKeeper
//	crl, ocsp                         false                   true refused: no revocation checks
//	context.supplier.class            none                    refused: no Java classes
//	sslProvider (ssl. only)           JDK                     accepted, no effect (Go's TLS)
//	fips-mode (no prefix)             true (3.9), false (3.8) accepted, see below
//
// Not read here: ssl.authProvider (the auth provider's name, default
// x509), sslQuorum, portUnification, client.portUnification and the
// reload switches sslQuorumReloadCertFiles / client.certReload: Warden
// reloads both families whenever Watch runs.
//
// Store types come from the type key (any case) or else from the file
// name: .jks, .p12 (and .pfx, which ZooKeeper does not recognise), .pem.
// As in Java 9+, a JKS file named PKCS12 or the reverse loads by its
// contents. What each format holds:
//
//   - JKS (keystore-go): a key store's private key entries, each opened
//     with the store password as Java's key manager does; a trust store's
//     trusted certificate entries (key entries are not trust anchors);
//   - PKCS12 (go-pkcs12): a key store with one private key and its chain;
//     a trust store of certificates marked trusted the way keytool
//     -importcert marks them (Java ignores unmarked ones, so a trust store
//     made by openssl is empty to ZooKeeper and refused by Warden);
//   - PEM: one file with the PKCS#8 private key ("ENCRYPTED PRIVATE KEY",
//     PBES2, when a password is set) and the certificate chain; a trust
//     store of every certificate in the file.
//
// A store that does not load is an error wrapping ErrStore naming the
// file, the key that names it and what to fix: missing file, wrong
// password, no private key, key and certificate that do not belong
// together, an expired or not yet valid certificate.
//
// # Differences from ZooKeeper
//
// Warden never verifies less than ZooKeeper; where Go cannot do what a
// setting asks, Read or NewSource fails and says what to change.
//
//   - Booleans must be true or false: ZooKeeper reads any other value as
//     false, which would silently switch a check off.
//   - Cipher suites: the default is ZooKeeper's list less the
//     ECDHE-CBC-SHA256 suites (Go offers them only as insecure) and the
//     ECDHE-CBC-SHA384 suites (Go lacks them). A configured list may name
//     only suites Go offers safely (tls.CipherSuites). Go always offers all
//     three TLS 1.3 suites, so a list must name all three or none (none
//     turns TLS 1.3 off, as it does in Java).
//   - Revocation (crl, ocsp) is not checked, so turning it on is refused.
//   - Host names are verified with ZooKeeper's rules (subject alternative
//     names, else the most specific CN; "*" within one label), not Go's.
//     A dialed peer is checked against the name it was dialed by, then the
//     addresses that name resolves to (ZooKeeper checks the connected
//     address first; the accepted certificates are the same). An accepted
//     peer is checked against its address, then its reverse DNS names when
//     allowReverseDnsLookup is on.
//   - fips-mode: in FIPS mode (3.9's default) ZooKeeper verifies no host
//     names on the quorum. Warden always verifies as hostnameVerification
//     says; set ssl.quorum.hostnameVerification=false to match.
//   - protocol defaults: ZooKeeper 3.8 defaults to TLS 1.2 only, and 3.9's
//     client port (Netty) to the protocol key alone (TLS 1.3); Warden
//     enables TLS 1.3 and 1.2 as ZooKeeper's documentation states.
//   - An expired or not yet valid certificate in the key store is refused
//     at load (Java would present it and let the peer refuse it).
//   - Session resumption is off on both sides, so that every connection is
//     verified against the trust store loaded at that moment.
//   - A PKCS12 store holds one private key; a PKCS12 trust store holds
//     trusted certificates only; JKS passwords are Latin-1.
//   - Keys may be RSA, ECDSA or Ed25519 (ZooKeeper's PEM reader: RSA, EC and
//     DSA; Go's TLS has no DSA).
//
// # Reloading
//
// ZooKeeper reloads changed store files when sslQuorumReloadCertFiles or
// client.certReload is set; Warden's Watch does it for both families:
// it compares a SHA-256 of the store and password files' contents at every
// tick, and loads a changed version in full before switching to it, so a
// half-written file is retried at the next tick while the previous
// certificates stay in use. Reload does the same at once, for a signal
// handler or a test.
//
// # Usage
//
// The client port and the quorum each get a Source; the listener and the
// dialer use its tls.Configs, which follow reloads:
//
//	set, err := tlsconf.Read(cfg.Lookup, tlsconf.QuorumPrefix)
//	if err != nil {
//		return err // names the key and what to write instead
//	}
//	for _, w := range set.Warnings {
//		log.Warn(w)
//	}
//	src, err := tlsconf.NewSource(set, log)
//	if err != nil {
//		return err // names the file and what to fix
//	}
//	go src.Watch(ctx, 10*time.Second) // reload changed files until ctx ends
//
//	ln = tls.NewListener(ln, src.ServerConfig())
//	conn, err := tls.Dial("tcp", net.JoinHostPort(peer.Host, port), src.ClientConfig(peer.Host))
//
//	// After the handshake, the peer's x509 auth id (ZooKeeper's ACL id
//	// x509:<DN>):
//	state := tlsConn.ConnectionState()
//	if len(state.PeerCertificates) > 0 {
//		ids = append(ids, wire.ID{Scheme: "x509", ID: tlsconf.SubjectDN(state.PeerCertificates[0])})
//	}
//
// A unified port reads the first bytes itself (a TLS handshake starts
// with 0x16) within set.HandshakeDetectionTimeout, then wraps the
// connection with tls.Server(conn, src.ServerConfig()).
package tlsconf
