package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// EnsembleConfig is a parsed dynamic configuration, the text GetConfig
// and Reconfig return (ZooKeeper's QuorumVerifier format):
//
//	server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181
//	server.2=10.0.0.2:2888:3888:participant;10.0.0.2:2181
//	server.3=10.0.0.3:2888:3888:observer;2181
//	version=100000003
type EnsembleConfig struct {
	// Version is the "version=" line, hexadecimal in the text: the zxid
	// that committed the configuration (0 for a static one). Pass it as
	// fromConfig to make a reconfig conditional.
	Version int64
	// Servers are the server.N lines, in id order.
	Servers []ConfigServer
}

// ConfigServer is one server.N line of an EnsembleConfig.
type ConfigServer struct {
	ID int64
	// QuorumHost is the host of the (first) quorum address.
	QuorumHost string
	// Observer is set for ":observer" members.
	Observer bool
	// ClientHost and ClientPort are the client address after ';'.
	// ClientPort is 0 when the line has none; ClientHost is "" when the
	// line gives a port alone (the server listens on every address).
	ClientHost string
	ClientPort int
}

// ParseConfig parses the text of /zookeeper/config. Lines other than
// server.N and version (blank, comments, other keys) are ignored; a
// server.N or version line that does not parse is an error naming it.
// Empty data (a standalone server) is an empty configuration.
func ParseConfig(data []byte) (EnsembleConfig, error) {
	var cfg EnsembleConfig
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case key == "version":
			v, err := strconv.ParseUint(value, 16, 64)
			if err != nil {
				return EnsembleConfig{}, fmt.Errorf("client: configuration line %q: version is not hexadecimal", line)
			}
			cfg.Version = int64(v)
		case strings.HasPrefix(key, "server."):
			s, err := parseServerLine(key, value)
			if err != nil {
				return EnsembleConfig{}, fmt.Errorf("client: configuration line %q: %v", line, err)
			}
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	slices.SortStableFunc(cfg.Servers, func(a, b ConfigServer) int { return cmp.Compare(a.ID, b.ID) })
	return cfg, nil
}

// parseServerLine parses "server.N" = "host:port:port[:role][|...][;[host:]port]".
func parseServerLine(key, value string) (ConfigServer, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(key, "server."), 10, 64)
	if err != nil || id < 0 {
		return ConfigServer{}, errors.New("the server id is not a number")
	}
	s := ConfigServer{ID: id}
	quorum, clientPart, hasClient := strings.Cut(value, ";")
	first, _, _ := strings.Cut(quorum, "|")
	host, rest, err := splitHost(strings.TrimSpace(first))
	if err != nil {
		return ConfigServer{}, err
	}
	ports := strings.Split(rest, ":")
	if len(ports) < 2 || len(ports) > 3 || !validPort(ports[0]) || !validPort(ports[1]) {
		return ConfigServer{}, errors.New("want host:quorumPort:electionPort[:role]")
	}
	if len(ports) == 3 {
		switch strings.ToLower(ports[2]) {
		case "participant":
		case "observer":
			s.Observer = true
		default:
			return ConfigServer{}, fmt.Errorf("unknown role %q (want participant or observer)", ports[2])
		}
	}
	s.QuorumHost = host
	if !hasClient {
		return s, nil
	}
	clientPart = strings.TrimSpace(clientPart)
	port := clientPart
	if strings.Contains(clientPart, ":") {
		h, p, err := splitHost(clientPart)
		if err != nil {
			return ConfigServer{}, err
		}
		s.ClientHost, port = h, p
	}
	if !validPort(port) {
		return ConfigServer{}, fmt.Errorf("bad client port %q", port)
	}
	s.ClientPort, _ = strconv.Atoi(port)
	return s, nil
}

// splitHost splits "host:rest" or "[v6]:rest" at the host's end.
func splitHost(s string) (host, rest string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 || net.ParseIP(s[1:end]) == nil {
			return "", "", fmt.Errorf("%q: want [IPv6 address]:port", s)
		}
		return s[1:end], s[end+2:], nil
	}
	host, rest, ok := strings.Cut(s, ":")
	if !ok || host == "" || strings.ContainsAny(host, ",/[] \t") {
		return "", "", fmt.Errorf("%q: want host:port", s)
	}
	return host, rest, nil
}

func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n <= 65535
}

// ClientAddrs returns the servers' client addresses as host:port, in id
// order, for Connect or UpdateServers. A server without a client address
// is left out; a wildcard client host (none, 0.0.0.0 or ::) is replaced by
// the server's quorum host.
func (c EnsembleConfig) ClientAddrs() []string {
	var out []string
	for _, s := range c.Servers {
		if s.ClientPort == 0 {
			continue
		}
		host := s.ClientHost
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			host = s.QuorumHost
		}
		out = append(out, net.JoinHostPort(host, strconv.Itoa(s.ClientPort)))
	}
	return out
}

// ConnectString returns ClientAddrs joined with commas.
func (c EnsembleConfig) ConnectString() string { return strings.Join(c.ClientAddrs(), ",") }

// trackEnsemble is WithEnsembleTracking's loop: read the configuration
// with a watch, apply it, wait for the watch, again, until the Conn ends.
func (c *Conn) trackEnsemble() {
	defer c.wg.Done()
	for {
		// Close terminates the Conn before stopping its goroutines, so the
		// call returns (ErrClosed) without a context of its own.
		data, _, ch, err := c.GetConfigW(context.Background())
		if err != nil {
			if c.ended() {
				return
			}
			// After a connection loss the next call waits for the next
			// connection. After another error, try again on the next one.
			if !errors.Is(err, ErrConnectionLoss) {
				c.log.Warn("ensemble tracking: cannot read the configuration", "err", err)
				if !c.waitReconnect() {
					return
				}
			}
			continue
		}
		c.applyConfig(data)
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return
			}
		case <-c.stopCh:
			return
		}
	}
}

// ended reports whether the Conn is dead (expired, auth failed, closed).
func (c *Conn) ended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.termErr != nil || c.closing
}

// waitReconnect waits until the current connection is gone and a new one
// is up; false when the Conn ends first.
func (c *Conn) waitReconnect() bool {
	c.mu.Lock()
	l, term := c.cur, c.termCh
	c.mu.Unlock()
	if l != nil {
		select {
		case <-l.deadCh:
		case <-term:
			return false
		}
	}
	<-c.ready() // also closed when the Conn ends
	return !c.ended()
}

// applyConfig updates the server list from configuration data when its
// client addresses differ from the list.
func (c *Conn) applyConfig(data []byte) {
	cfg, err := ParseConfig(data)
	if err != nil {
		c.log.Warn("ensemble tracking: configuration ignored", "err", err)
		return
	}
	addrs := cfg.ClientAddrs()
	if len(addrs) == 0 {
		return
	}
	cur := c.Servers()
	same := len(cur) == len(addrs) && !slices.ContainsFunc(addrs, func(a string) bool {
		return !slices.ContainsFunc(cur, func(b string) bool { return sameAddr(a, b) })
	})
	if same {
		return
	}
	c.log.Info("ensemble tracking: new server list", "version", fmt.Sprintf("%x", cfg.Version), "servers", addrs)
	if err := c.UpdateServers(strings.Join(addrs, ",")); err != nil {
		c.log.Warn("ensemble tracking: server list not updated", "err", err)
	}
}
