package config

import (
	"net"
	"strconv"
	"strings"
)

// addServer parses the value of "server.<id>":
//
//	host:peerPort:electionPort[:participant|:observer][;[clientHost:]clientPort]
//
// An IPv6 host is written in brackets: [::1]:2888:3888;[::1]:2181.
func (a *assignment) addServer(id string) error {
	sid, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return a.fail("server id %q is not a number", id)
	}
	s, msg := parseServer(sid, a.value)
	if msg != "" {
		return a.fail("%s (expected host:peerPort:electionPort[:participant|:observer][;[clientHost:]clientPort])", msg)
	}
	for i, old := range a.c.Servers {
		if old.ID == sid { // the same line given twice: the last one wins
			a.c.Servers[i] = s
			return nil
		}
	}
	a.c.Servers = append(a.c.Servers, s)
	return nil
}

// parseServer parses a server.N value; msg says what is wrong, "" when ok.
func parseServer(id int64, value string) (s Server, msg string) {
	s.ID = id
	serverPart, clientPart, hasClient := strings.Cut(value, ";")
	if strings.Contains(clientPart, ";") {
		return s, "more than one ';'"
	}
	if strings.Contains(serverPart, "|") {
		return s, "multiple addresses per server (multiAddress) are not supported"
	}
	parts, msg := splitHostPorts(serverPart)
	if msg != "" {
		return s, msg
	}
	if len(parts) < 3 || len(parts) > 4 {
		return s, "wrong number of fields"
	}
	if parts[0] == "" {
		return s, "missing host"
	}
	s.Host = parts[0]
	if s.PeerPort, msg = parsePort(parts[1]); msg != "" {
		return s, msg
	}
	if s.ElectionPort, msg = parsePort(parts[2]); msg != "" {
		return s, msg
	}
	if len(parts) == 4 {
		switch strings.ToLower(parts[3]) {
		case "observer":
			s.Observer = true
		case "participant":
		default:
			return s, "unrecognised peer type " + strconv.Quote(parts[3])
		}
	}
	if hasClient {
		cparts, msg := splitHostPorts(strings.TrimSpace(clientPart))
		if msg != "" {
			return s, msg
		}
		switch len(cparts) {
		case 1:
		case 2:
			s.ClientHost = cparts[0]
		default:
			return s, "client address must be [host:]port"
		}
		if s.ClientPort, msg = parsePort(cparts[len(cparts)-1]); msg != "" {
			return s, msg
		}
		if s.ClientHost == "0.0.0.0" || s.ClientHost == "::" {
			s.ClientHost = ""
		}
	}
	return s, ""
}

// splitHostPorts splits "host:a:b" at ':' after an optional bracketed IPv6
// host ("[::1]:a:b"), like ZooKeeper's ConfigUtils.splitWithLeadingHostname.
func splitHostPorts(s string) ([]string, string) {
	if !strings.HasPrefix(s, "[") {
		return strings.Split(s, ":"), ""
	}
	end := strings.Index(s, "]:")
	if end < 0 {
		return nil, "starts with '[' but has no matching ']:'"
	}
	host := s[1:end]
	if net.ParseIP(host) == nil {
		return nil, strconv.Quote(host) + " is not an IPv6 address"
	}
	return append([]string{host}, strings.Split(s[end+2:], ":")...), ""
}

func parsePort(s string) (int, string) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > 65535 {
		return 0, strconv.Quote(s) + " is not a port number"
	}
	return n, ""
}
