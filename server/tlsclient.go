package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/wardenzk/warden/internal/tlsconf"
)

// certReloadInterval is how often certificate files are checked for
// changes (docs/security.md: Warden always reloads them).
const certReloadInterval = 5 * time.Second

// setupClientTLS loads the client port's TLS material when zoo.cfg asks
// for TLS (secureClientPort or client.portUnification): ssl.* keys that
// Warden cannot honour, a missing key store, or stores that do not load
// stop the start.
func (s *Server) setupClientTLS() error {
	if !s.cfg.ClientTLS() {
		return nil
	}
	src, err := s.loadTLS(tlsconf.ClientPrefix, "clients", "secureClientPort or client.portUnification")
	if err != nil {
		return err
	}
	settings := src.Settings()
	s.clientTLS = src.ServerConfig()
	s.clientTLSSource = src
	s.handshakeDetection = settings.HandshakeDetectionTimeout
	s.handshakes.limit = int64(s.cfg.OutstandingHandshakeLimit)
	return nil
}

// loadTLS reads one family of ssl keys (prefix) and loads its stores, for
// what ("clients" or "members"), which zoo.cfg asked for with keys.
func (s *Server) loadTLS(prefix, what, keys string) (*tlsconf.Source, error) {
	settings, err := tlsconf.Read(s.cfg.Lookup, prefix)
	if err != nil {
		return nil, fmt.Errorf("server: TLS for %s: %w", what, err)
	}
	if !settings.Configured() {
		return nil, fmt.Errorf("server: %s asks for TLS for %s, but %skeyStore.location is not set: "+
			"name the key store holding this server's certificate and private key", keys, what, prefix)
	}
	for _, w := range settings.Warnings {
		s.log.Warn("TLS setting", "for", what, "note", w)
	}
	src, err := tlsconf.NewSource(settings, s.log.With("tls", what))
	if err != nil {
		return nil, fmt.Errorf("server: TLS for %s: %w", what, err)
	}
	return src, nil
}

// watchCerts reloads the client port's certificates when their files
// change, until the server closes.
func (s *Server) watchCerts() {
	if s.clientTLSSource != nil {
		s.watchSource(s.clientTLSSource)
	}
}

// watchSource reloads src's certificates when their files change, until
// the server closes.
func (s *Server) watchSource(src *tlsconf.Source) {
	ctx, cancel := context.WithCancel(context.Background())
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		src.Watch(ctx, certReloadInterval)
	}()
	go func() {
		defer s.wg.Done()
		<-s.closed
		cancel()
	}()
}

// subjectDN is the x509 identity of a client certificate: its subject as
// Java's X500Principal.getName() writes it, as ZooKeeper's
// X509AuthenticationProvider takes it.
func subjectDN(c *x509.Certificate) string { return tlsconf.SubjectDN(c) }
