package proc

import (
	"path/filepath"
	"strings"
)

// zooKeeperJars are the jars, in /usr/share/java, that run Apache
// ZooKeeper's server and Java client as Debian packages them (the
// zookeeper jar's manifest lacks netty and a logger; see
// shared/reference/reference-tools.md).
var zooKeeperJars = []string{
	"zookeeper", "zookeeper-jute", "netty-handler", "netty-codec", "netty-buffer", "netty-common",
	"netty-resolver", "netty-transport", "netty-transport-native-unix-common",
	"netty-transport-native-epoll", "slf4j-api", "slf4j-simple",
}

// ZooKeeperClasspath returns the classpath of Debian's Apache ZooKeeper
// followed by the named extra jars of /usr/share/java (names without
// ".jar", e.g. "curator-client").
func ZooKeeperClasspath(extra ...string) string {
	var parts []string
	for _, j := range append(append([]string(nil), zooKeeperJars...), extra...) {
		parts = append(parts, filepath.Join("/usr/share/java", j+".jar"))
	}
	return strings.Join(parts, ":")
}
