package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/client"
)

// configNode is where the ensemble's dynamic configuration lives.
const configNode = client.ConfigPath

func runConfig(ctx context.Context, s *Shell, inv *invocation) error {
	octx, cancel := s.opContext(ctx)
	defer cancel()
	var data []byte
	var st client.Stat
	var err error
	if inv.has("w") {
		var ch <-chan client.Event
		data, st, ch, err = s.Conn().GetConfigW(octx)
		s.forward(ch)
	} else {
		data, st, err = s.Conn().GetConfig(octx)
	}
	if err != nil {
		return opError(err, configNode)
	}
	text := "null"
	if data != nil {
		text = string(data)
	}
	if inv.has("c") {
		text = clientConfig(text)
	}
	if inv.json {
		v := map[string]any{"config": text}
		if inv.has("s") {
			v["stat"] = statJSON(st)
		}
		return writeJSON(s.out(), v)
	}
	var b strings.Builder
	b.WriteString(text + "\n")
	if inv.has("s") {
		writeStat(&b, st)
	}
	_, err = fmt.Fprint(s.out(), b.String())
	return err
}

// clientConfig is zkCli.sh's "config -c" (ConfigUtils.getClientConfigStr):
// the configuration's version, a space, then the client address of every
// server.N line, comma separated: "100000000 127.0.0.1:2181,0.0.0.0:2182".
//
// As in ZooKeeper: a line whose server part does not parse is left out; a
// server without a client address (no ";" part) still takes its place in
// the list, as an empty element; a client address that is a port alone
// is shown as 0.0.0.0:port; an IPv6 literal is shown the way Java prints
// it (0:0:0:0:0:0:0:1:2181, no brackets). ZooKeeper lists the servers in
// the order of a Java hash table, which depends on the JVM; this lists
// them in the order of the configuration.
func clientConfig(cfg string) string {
	// A Properties text: a key given twice keeps its last value.
	var keys []string
	values := map[string]string{}
	for _, line := range strings.Split(cfg, "\n") {
		k, v, ok := propertyLine(line)
		if !ok {
			continue
		}
		if _, seen := values[k]; !seen {
			keys = append(keys, k)
		}
		values[k] = v
	}
	var hosts []string
	for _, k := range keys {
		if !strings.HasPrefix(k, "server.") {
			continue
		}
		if addr, ok := clientAddr(values[k]); ok {
			hosts = append(hosts, addr)
		}
	}
	return values["version"] + " " + strings.Join(hosts, ",")
}

// propertyLine splits one line of a java.util.Properties text (the format
// of /zookeeper/config) into its trimmed key and value. Blank lines and
// comments ("#" or "!") have none. The key ends at the first '=', ':' or
// white space; escapes are not interpreted (the dynamic configuration has
// none).
func propertyLine(line string) (key, value string, ok bool) {
	line = strings.TrimLeft(line, " \t\f\r")
	if line == "" || line[0] == '#' || line[0] == '!' {
		return "", "", false
	}
	i := strings.IndexAny(line, "=: \t\f")
	if i < 0 {
		return strings.TrimSpace(line), "", true
	}
	key, rest := line[:i], strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = rest[1:]
	}
	return strings.TrimSpace(key), strings.TrimSpace(rest), true
}

// clientAddr parses the value of a server.N line, "host:port:port[:type]
// [|host:port:port[:type]...][;[clientHost:]clientPort]", the way
// QuorumServer does, and returns the client address as getClientConfigStr
// prints it ("" when the server has none). ok is false when the value does
// not parse: ZooKeeper leaves such a server out.
func clientAddr(v string) (string, bool) {
	parts := javaSplit(v, ";")
	if len(parts) == 0 || len(parts) > 2 {
		return "", false
	}
	for _, s := range javaSplit(parts[0], "|") {
		hp, ok := hostAndPort(s)
		if !ok || len(hp) < 3 || len(hp) > 4 || !isPort(hp[1]) || !isPort(hp[2]) {
			return "", false
		}
		if len(hp) == 4 && !strings.EqualFold(hp[3], "participant") && !strings.EqualFold(hp[3], "observer") {
			return "", false
		}
	}
	if len(parts) == 1 {
		return "", true
	}
	hp, ok := hostAndPort(parts[1])
	if !ok || len(hp) == 0 || len(hp) > 2 || !isPort(hp[len(hp)-1]) {
		return "", false
	}
	host := "0.0.0.0"
	if len(hp) == 2 {
		host = javaHost(hp[0])
	}
	port, _ := strconv.Atoi(hp[len(hp)-1])
	return host + ":" + strconv.Itoa(port), true
}

// hostAndPort is ConfigUtils.getHostAndPort: s split at ':', where a
// leading "[...]" (an IPv6 literal) is one part, without its brackets.
func hostAndPort(s string) ([]string, bool) {
	if !strings.HasPrefix(s, "[") {
		return javaSplit(s, ":"), true
	}
	i := strings.IndexByte(s, ']')
	if i < 0 || i+2 == len(s) {
		return nil, false
	}
	if i+2 < len(s) {
		return append([]string{s[1:i]}, javaSplit(s[i+2:], ":")...), true
	}
	return []string{strings.NewReplacer("[", "", "]", "").Replace(s)}, true
}

// javaSplit is Java's String.split: s itself when sep does not occur in
// it, else strings.Split without the trailing empty elements.
func javaSplit(s, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 65535
}

// javaHost is InetSocketAddress.getHostString of an address made from
// host: a name as it is, an IP literal in Java's form (IPv6 as eight
// groups of hex digits, an IPv4-mapped IPv6 address as IPv4).
func javaHost(host string) string {
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	groups := make([]string, 8)
	for i := range groups {
		groups[i] = strconv.FormatUint(uint64(ip[2*i])<<8|uint64(ip[2*i+1]), 16)
	}
	return strings.Join(groups, ":")
}
