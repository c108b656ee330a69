#!/bin/sh
# zkshim.sh starts `warden server` where a third-party test harness starts Apache
# ZooKeeper, so that the harness and its tests run unchanged against Warden.
# TestRealClient* (realclients_test.go) links it under the names harnesses call:
#
#   zkServer.sh start-foreground zoo.cfg      go-zookeeper (ZOOKEEPER_BIN_PATH); Java
#                                             system properties come in $SERVER_JVMFLAGS
#   java [opts] ... QuorumPeerMain zoo.cfg    kazoo.testing (first "java" on PATH)
#
# -Dzookeeper.* (but logging) and -Dreadonlymode.enabled system properties are appended to zoo.cfg,
# where Warden reads them; other JVM options are dropped. Any other java command runs the
# real java. The server is exec'ed (same pid, so the harness's kill reaches it) under
# setpriv --pdeathsig KILL so that it dies with the harness.
#
# Environment: WARDEN_BIN, the warden binary; REAL_JAVA, the java to fall back to.
set -eu
: "${WARDEN_BIN:?WARDEN_BIN must name the warden binary}"

cfg=
props=
add_prop() {
	case "$1" in
	-Dzookeeper.log.* | -Dzookeeper.root.logger=*) ;; # Java logging
	-Dzookeeper.* | -Dreadonlymode.enabled=*) props="$props ${1#-D}" ;;
	esac
}

if [ "${1-}" = start-foreground ]; then
	[ $# -eq 2 ] || { echo "zkshim: usage: zkServer.sh start-foreground zoo.cfg" >&2; exit 2; }
	cfg=$2
	for opt in ${SERVER_JVMFLAGS-}; do add_prop "$opt"; done
else
	main=
	for arg in "$@"; do
		if [ -n "$main" ]; then
			cfg=$arg
			break
		fi
		case "$arg" in
		org.apache.zookeeper.server.quorum.QuorumPeerMain) main=1 ;;
		-D*) add_prop "$arg" ;;
		esac
	done
	if [ -z "$main" ]; then
		exec "${REAL_JAVA:-/usr/bin/java}" "$@"
	fi
	[ -n "$cfg" ] || { echo "zkshim: QuorumPeerMain without a zoo.cfg" >&2; exit 2; }
fi

for p in $props; do
	printf '%s\n' "$p" >>"$cfg"
done
exec setpriv --pdeathsig KILL "$WARDEN_BIN" server "$cfg"
