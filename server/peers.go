package server

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/internal/transport"
)

// tcpTransport builds the peer transport on this member's quorum port.
func (s *Server) tcpTransport(snaps transport.Snapshots) (transport.Transport, error) {
	self, _ := s.cfg.Self()
	host := self.Host
	if v, ok := s.cfg.Lookup("quorumListenOnAllIPs"); ok && strings.EqualFold(v, "true") {
		host = ""
	}
	peers := make(map[uint64]string)
	for _, m := range s.cfg.Servers {
		if m.ID != self.ID {
			peers[node.MemberID(m.ID).RaftID()] = net.JoinHostPort(m.Host, strconv.Itoa(m.PeerPort))
		}
	}
	t, err := transport.NewTCP(transport.TCPConfig{
		Ensemble:  EnsembleIdentity(s.cfg.Servers),
		ID:        node.MemberID(self.ID).RaftID(),
		Listen:    net.JoinHostPort(host, strconv.Itoa(self.PeerPort)),
		Peers:     peers,
		Snapshots: snaps,
		Logger:    s.log,
		PeerName:  func(id uint64) string { return "server." + node.MemberOf(id).String() },
	})
	if err != nil {
		return nil, fmt.Errorf("server: quorum port %d: %w (is another server using it? check server.%d in zoo.cfg)", self.PeerPort, err, self.ID)
	}
	return t, nil
}
