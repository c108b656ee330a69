package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FormatMembership writes servers as ZooKeeper writes a dynamic
// configuration (QuorumVerifier.toString, the data of /zookeeper/config):
// one line per server, in id order,
//
//	server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181
//
// then "version=<hex>" with no final newline. A server without a client
// port prints no client part.
func FormatMembership(servers []Server, version int64) string {
	sorted := slices.Clone(servers)
	slices.SortFunc(sorted, func(x, y Server) int { return compareInt64(x.ID, y.ID) })
	var b strings.Builder
	for _, s := range sorted {
		b.WriteString(ServerLine(s))
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "version=%x", version)
	return b.String()
}

// ServerLine writes one server as a dynamic configuration line,
// "server.N=host:quorumPort:electionPort:role[;clientHost:clientPort]".
func ServerLine(s Server) string {
	role := "participant"
	if s.Observer {
		role = "observer"
	}
	line := fmt.Sprintf("server.%d=%s:%d:%d:%s", s.ID, hostText(s.Host), s.PeerPort, s.ElectionPort, role)
	if s.ClientPort > 0 {
		host := s.ClientHost
		if host == "" {
			host = "0.0.0.0"
		}
		line += fmt.Sprintf(";%s:%d", hostText(host), s.ClientPort)
	}
	return line
}

// ParseServerLine parses one "server.N=spec" assignment, as reconfig's
// joining servers and new members give them. The error says what is wrong
// with the line.
func ParseServerLine(line string) (Server, error) {
	key, value, ok := strings.Cut(line, "=")
	if !ok {
		return Server{}, fmt.Errorf("%q is not server.N=host:quorumPort:electionPort[:role][;[clientHost:]clientPort]", line)
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	idText, ok := strings.CutPrefix(key, "server.")
	if !ok {
		return Server{}, fmt.Errorf("%q: only server.N lines may be given", key)
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id < 0 {
		return Server{}, fmt.Errorf("%q: server id %q is not a number", key, idText)
	}
	s, msg := parseServer(id, value)
	if msg != "" {
		return Server{}, fmt.Errorf("%s: %s", key, msg)
	}
	return s, nil
}

// ParseMembers parses a whole membership: "server.N=..." lines separated
// by newlines or commas, as reconfig's newMembers and a dynamic config
// file give it. A "version=" line is ignored; any other key is an error.
// The servers come back in id order; an id given twice is an error.
func ParseMembers(text string) ([]Server, error) {
	var out []Server
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' || r == '\r' }) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(strings.TrimSpace(line), "version=") {
			continue
		}
		s, err := ParseServerLine(line)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o Server) bool { return o.ID == s.ID }) {
			return nil, fmt.Errorf("server.%d is given twice", s.ID)
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y Server) int { return compareInt64(x.ID, y.ID) })
	return out, nil
}

// ConflictingAddress returns a description of the first address two
// different servers share (quorum, election or client host:port), or ""
// (ZooKeeper's QuorumServer.checkAddressDuplicate).
func ConflictingAddress(servers []Server) string {
	seen := map[string]int64{}
	for _, s := range servers {
		addrs := []string{
			fmt.Sprintf("%s:%d", s.Host, s.PeerPort),
		}
		if s.ElectionPort > 0 {
			addrs = append(addrs, fmt.Sprintf("%s:%d", s.Host, s.ElectionPort))
		}
		for _, a := range addrs {
			if other, ok := seen[a]; ok && other != s.ID {
				return fmt.Sprintf("server.%d and server.%d both use %s", other, s.ID, a)
			}
			seen[a] = s.ID
		}
	}
	return ""
}
