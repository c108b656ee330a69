package server

import (
	"errors"

	"github.com/wardenzk/warden/internal/transport"
)

func (s *Server) tcpTransport(snaps transport.Snapshots) (transport.Transport, error) {
	return nil, errors.New("TODO")
}
