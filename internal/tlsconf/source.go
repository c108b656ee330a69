package tlsconf

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Source owns the loaded key and trust stores of one key family and hands
// out tls.Configs that always use the stores loaded last: a Reload (or a
// change Watch notices) takes effect for the next handshake, without
// rebuilding listeners or dialers. Connections already established keep
// the certificates they were made with.
//
// All methods are safe for concurrent use.
type Source struct {
	settings Settings
	log      *slog.Logger
	now      func() time.Time // clock for certificate validity
	dns      resolver         // lookups for host name verification

	// mu serialises loads.
	mu sync.Mutex
	// lastFailed is the fingerprint of the files whose load failed last,
	// so that Watch warns once per bad version; zero after a good load.
	lastFailed [sha256.Size]byte

	// cur is what handshakes use. Invariant: non-nil once NewSource
	// returns; replaced whole, never modified.
	cur atomic.Pointer[material]
}

// material is one loaded version of the stores.
type material struct {
	// certs are the key store's entries (usually one), leaf first.
	// Invariant: every leaf is valid at load time and matches its key.
	certs []tls.Certificate
	// roots are the trust store's certificates; nil when no trust store
	// is configured, which makes crypto/x509 use the system's CAs.
	roots *x509.CertPool
	// fingerprint covers the bytes of the store and password files.
	fingerprint [sha256.Size]byte
	// server is the tls.Config a server handshake uses (no per-connection
	// host name check); shared, never modified.
	server *tls.Config
}

// NewSource loads the stores s names. A key store is optional (a dialer
// may present no certificate), but a server handshake fails without one;
// check s.Configured first. log receives the reload lines of Watch and
// Reload; nil means slog.Default().
func NewSource(s Settings, log *slog.Logger) (*Source, error) {
	if s.MinVersion == 0 || s.MaxVersion == 0 {
		return nil, fmt.Errorf("tlsconf: NewSource needs Settings from tlsconf.Read: %w", ErrSetting)
	}
	if log == nil {
		log = slog.Default()
	}
	src := &Source{settings: s, log: log, now: time.Now, dns: net.DefaultResolver}
	if _, err := src.load(true); err != nil {
		return nil, err
	}
	return src, nil
}

// Settings returns the settings the Source was made from.
func (s *Source) Settings() Settings { return s.settings }

// ServerConfig returns a tls.Config for a listener: it presents the key
// store's certificate, asks peers for one as <prefix>clientAuth says and
// verifies it against the trust store (and against the peer's address when
// ClientHostnameVerification is on), within the configured versions and
// cipher suites. Each handshake takes the certificates loaded at that
// moment (GetConfigForClient). Session tickets are off, so that every
// connection is verified against the current trust store.
func (s *Source) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:             s.settings.MinVersion,
		MaxVersion:             s.settings.MaxVersion,
		CipherSuites:           s.settings.CipherSuites,
		SessionTicketsDisabled: true,
		GetConfigForClient:     s.configForClient,
	}
}

func (s *Source) configForClient(hello *tls.ClientHelloInfo) (*tls.Config, error) {
	m := s.cur.Load()
	if len(m.certs) == 0 {
		return nil, fmt.Errorf("tlsconf: no certificate to present: %skeyStore.location is not set", s.settings.Prefix)
	}
	if !s.settings.ClientHostnameVerification || s.settings.ClientAuth == ClientAuthNone {
		return m.server, nil
	}
	var addr netip.Addr
	if hello.Conn != nil {
		if ap, err := netip.ParseAddrPort(hello.Conn.RemoteAddr().String()); err == nil {
			addr = ap.Addr()
		}
	}
	cfg := m.server.Clone()
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return nil // clientAuth=want and no certificate: nothing to check
		}
		if err := verifyPeer(hello.Context(), s.dns, s.settings.AllowReverseDNSLookup, addr, "", cs.PeerCertificates[0]); err != nil {
			return fmt.Errorf("tlsconf: client host name verification (%sclientHostnameVerification): %w", s.settings.Prefix, err)
		}
		return nil
	}
	return cfg, nil
}

// ClientConfig returns a tls.Config for dialing a peer known as
// serverName (a host name or IP address; for the quorum, the host of the
// peer's server.N line). It presents the key store's certificate when the
// peer asks for one and verifies the peer's chain against the trust store,
// and, when HostnameVerification is on, that the certificate names
// serverName. Both use the certificates loaded at handshake time.
func (s *Source) ClientConfig(serverName string) *tls.Config {
	var addr netip.Addr
	name := serverName
	if a, err := netip.ParseAddr(trimBrackets(serverName)); err == nil {
		addr, name = a, ""
	}
	cfg := &tls.Config{
		MinVersion:   s.settings.MinVersion,
		MaxVersion:   s.settings.MaxVersion,
		CipherSuites: s.settings.CipherSuites,
		// Verification is done in VerifyConnection, against the trust
		// store loaded at handshake time, which RootCAs cannot follow.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			return s.verifyServer(addr, name, cs)
		},
		GetClientCertificate: s.clientCertificate,
	}
	if name != "" {
		cfg.ServerName = name
	}
	return cfg
}

func trimBrackets(host string) string {
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		return host[1 : len(host)-1]
	}
	return host
}

func (s *Source) clientCertificate(req *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	m := s.cur.Load()
	for i := range m.certs {
		if req.SupportsCertificate(&m.certs[i]) == nil {
			return &m.certs[i], nil
		}
	}
	if len(m.certs) > 0 {
		return &m.certs[0], nil
	}
	return &tls.Certificate{}, nil // no key store: send no certificate
}

func (s *Source) verifyServer(addr netip.Addr, name string, cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tlsconf: the server sent no certificate")
	}
	m := s.cur.Load()
	opts := x509.VerifyOptions{
		Roots:         m.roots,
		Intermediates: x509.NewCertPool(),
		CurrentTime:   s.now(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	leaf := cs.PeerCertificates[0]
	if _, err := leaf.Verify(opts); err != nil {
		return fmt.Errorf("tlsconf: server certificate %q: %w", SubjectDN(leaf), err)
	}
	if !s.settings.HostnameVerification {
		return nil
	}
	if !addr.IsValid() && name == "" {
		return fmt.Errorf("tlsconf: no server name to verify the certificate against (%shostnameVerification is on)", s.settings.Prefix)
	}
	if err := verifyPeer(context.Background(), s.dns, s.settings.AllowReverseDNSLookup, addr, name, leaf); err != nil {
		return fmt.Errorf("tlsconf: server host name verification (%shostnameVerification): %w", s.settings.Prefix, err)
	}
	return nil
}

// Reload reads the store files again and, when they load, uses them for
// new handshakes. When they do not, the previous certificates stay in use
// and the error says why. It logs like Watch.
func (s *Source) Reload() error {
	_, err := s.load(true)
	return err
}

// Watch checks the store and password files every interval (10 s when
// interval <= 0) and reloads them when their contents change, until ctx
// is done. It logs one Info line per reload and one Warn line per changed
// version that does not load (the previous certificates stay in use).
// Run it in its own goroutine.
func (s *Source) Watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = s.load(false)
		}
	}
}

// load reads the files and, if forced or changed, builds and installs a
// new material. It reports whether it installed one.
func (s *Source) load(force bool) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	files, fp, err := s.readFiles()
	old := s.cur.Load()
	if err == nil && !force && old != nil && fp == old.fingerprint {
		return false, nil
	}
	var m *material
	if err == nil {
		m, err = s.build(files, fp)
	}
	if err != nil {
		if old != nil && (force || fp != s.lastFailed) {
			s.log.Warn("tlsconf: certificate files do not load; keeping the previous certificates",
				"keys", s.settings.Prefix, "err", err)
		}
		s.lastFailed = fp
		return false, err
	}
	s.lastFailed = [sha256.Size]byte{}
	s.cur.Store(m)
	if old != nil {
		attrs := []any{"keys", s.settings.Prefix}
		if len(m.certs) > 0 {
			leaf := m.certs[0].Leaf
			attrs = append(attrs, "subject", SubjectDN(leaf), "notAfter", leaf.NotAfter.UTC().Format(time.RFC3339))
		}
		s.log.Info("tlsconf: reloaded certificates", attrs...)
	}
	return true, nil
}

// storeFiles are the key and trust store as read; nil when not configured.
type storeFiles struct {
	key, trust *storeFile
}

// readFiles reads both stores and returns a fingerprint of what it saw,
// errors included, so that an unchanged failure is not reported twice.
func (s *Source) readFiles() (storeFiles, [sha256.Size]byte, error) {
	h := sha256.New()
	put := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	var files storeFiles
	var firstErr error
	for _, st := range []struct {
		store Store
		kind  string
		dst   **storeFile
	}{
		{s.settings.KeyStore, "keyStore", &files.key},
		{s.settings.TrustStore, "trustStore", &files.trust},
	} {
		if st.store.Location == "" {
			put(nil)
			continue
		}
		f, field, err := readStore(st.store)
		if err != nil {
			put([]byte("error: " + err.Error()))
			if firstErr == nil {
				firstErr = s.fileError(st.kind, field, st.store, err)
			}
			continue
		}
		put(f.data)
		put([]byte(f.password))
		*st.dst = &f
	}
	var fp [sha256.Size]byte
	h.Sum(fp[:0])
	return files, fp, firstErr
}

func (s *Source) fileError(kind, field string, st Store, err error) error {
	e := &storeError{what: storeWhat(kind), path: st.Location, key: s.settings.key(kind + "." + field), err: err}
	if field == "passwordPath" {
		e.what += " password file"
		e.path = st.PasswordPath
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e.hint = "check " + e.key
	case errors.Is(err, fs.ErrPermission):
		e.hint = "let Warden's user read it"
	}
	return e
}

func storeWhat(kind string) string {
	if kind == "keyStore" {
		return "key store"
	}
	return "trust store"
}

// build parses the files into a material.
func (s *Source) build(files storeFiles, fp [sha256.Size]byte) (*material, error) {
	m := &material{fingerprint: fp}
	now := s.now()
	if f := files.key; f != nil {
		st := s.settings.KeyStore
		entries, err := parseKeyStore(st.Type, f.data, f.password)
		if err != nil {
			return nil, s.parseError("keyStore", st, err)
		}
		for _, e := range entries {
			c, err := certificate(e, now)
			if err != nil {
				return nil, s.parseError("keyStore", st, err)
			}
			m.certs = append(m.certs, c)
		}
	}
	if f := files.trust; f != nil {
		st := s.settings.TrustStore
		certs, err := parseTrustStore(st.Type, f.data, f.password)
		if err != nil {
			return nil, s.parseError("trustStore", st, err)
		}
		m.roots = x509.NewCertPool()
		for _, c := range certs {
			m.roots.AddCert(c)
		}
	}
	m.server = &tls.Config{
		Certificates:           m.certs,
		ClientAuth:             s.settings.ClientAuth.tlsClientAuth(),
		ClientCAs:              m.roots,
		MinVersion:             s.settings.MinVersion,
		MaxVersion:             s.settings.MaxVersion,
		CipherSuites:           s.settings.CipherSuites,
		SessionTicketsDisabled: true,
		Time:                   s.now,
	}
	return m, nil
}

// parseError names the file and the keys to look at.
func (s *Source) parseError(kind string, st Store, err error) error {
	e := &storeError{what: storeWhat(kind), path: st.Location, key: s.settings.key(kind + ".location"), err: err}
	pw := s.settings.key(kind + ".password")
	switch {
	case errors.Is(err, errWrongPassword):
		e.hint = "check " + pw + " (or the file named by " + s.settings.key(kind+".passwordPath") + ")"
	case errors.Is(err, errNeedPassword):
		e.hint = "set " + pw
	case errors.Is(err, errKeyNotSecret):
		e.hint = "remove " + pw + ", or encrypt the key: openssl pkcs8 -topk8 -v2 aes-256-cbc"
	case errors.Is(err, errNoKey):
		e.hint = "a key store needs a private key with its certificate chain (keytool -genkeypair; or, for PEM, the key and the certificates in one file)"
	case errors.Is(err, errNoCert):
		e.hint = "add the certificate chain of the private key"
	case errors.Is(err, errNoTrusted):
		e.hint = "add the certificates of the CAs that sign the peers' certificates"
	case errors.Is(err, errNotStore):
		e.hint = "check " + s.settings.key(kind+".type") + " (" + string(st.Type) + ")"
	}
	return e
}
