package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"

	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/internal/tlsconf"
	"github.com/wardenzk/warden/internal/transport"
)

// tcpTransport builds the peer transport on this member's quorum port.
func (s *Server) tcpTransport(snaps transport.Snapshots) (transport.Transport, error) {
	self, _ := s.cfg.Self()
	host := self.Host
	if s.cfg.LookupBool("quorumListenOnAllIPs") {
		host = ""
	}
	peers := make(map[uint64]string)
	for _, m := range s.cfg.Servers {
		if m.ID != self.ID {
			peers[node.MemberID(m.ID).RaftID()] = net.JoinHostPort(m.Host, strconv.Itoa(m.PeerPort))
		}
	}
	tc := transport.TCPConfig{
		Ensemble:  ensembleIdentity(s.cfg),
		ID:        node.MemberID(self.ID).RaftID(),
		Listen:    net.JoinHostPort(host, strconv.Itoa(self.PeerPort)),
		Peers:     peers,
		Snapshots: snaps,
		Logger:    s.log,
		PeerName:  func(id uint64) string { return "server." + node.MemberOf(id).String() },
	}
	if err := s.quorumTLS(&tc); err != nil {
		return nil, err
	}
	t, err := transport.NewTCP(tc)
	if err != nil {
		return nil, fmt.Errorf("server: quorum port %d: %w (is another server using it? check server.%d in zoo.cfg)", self.PeerPort, err, self.ID)
	}
	return t, nil
}

// ensembleIdentity is the ensemble identity of the peer handshake. With
// reconfigEnabled=true the membership changes at run time, and a joining
// member's server lines differ from the others' until its addition
// commits, so the identity names no members (transport.DynamicEnsemble)
// and the transport's peer set alone decides who may connect. Otherwise
// it is EnsembleIdentity of the server lines. reconfigEnabled must be the
// same on every member: a static and a dynamic member refuse each other,
// saying so.
func ensembleIdentity(cfg Config) string {
	if cfg.ReconfigEnabled {
		return transport.DynamicEnsemble
	}
	return EnsembleIdentity(cfg.Servers)
}

// quorumTLS sets up TLS between members as zoo.cfg asks: sslQuorum dials
// peers over TLS, and the quorum port then accepts only TLS unless
// portUnification lets plaintext peers in too (for turning TLS on one
// member at a time). The ssl.quorum.* stores are reloaded when their
// files change. A setting Warden cannot honour stops the start.
func (s *Server) quorumTLS(tc *transport.TCPConfig) error {
	ssl, unified := s.cfg.SSLQuorum(), s.cfg.QuorumPortUnification()
	if !ssl && !unified {
		s.log.Info("using insecure (non-TLS) quorum communication")
		return nil
	}
	src, err := s.loadTLS(tlsconf.QuorumPrefix, "members", "sslQuorum or portUnification")
	if err != nil {
		return err
	}
	tc.ServerTLS = src.ServerConfig()
	tc.PortUnification = unified
	if ssl {
		tc.DialTLS = func(_ uint64, host string) *tls.Config { return src.ClientConfig(host) }
	}
	s.watchSource(src)
	s.log.Info("quorum TLS", "sslQuorum", ssl, "portUnification", unified)
	return nil
}
