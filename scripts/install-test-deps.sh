#!/bin/sh
# install-test-deps.sh installs the Debian packages the compatibility tier
# (go test -tags compat ./test/compat/...) needs: Apache ZooKeeper 3.8 and its Java and
# C clients, kazoo, and Curator. Idempotent: does nothing when all are present.
# Quiet on success; on failure prints apt-get's output and exits non-zero.
set -eu

PACKAGES="zookeeper zookeeper-bin python3-kazoo openssl libcurator-client-java libcurator-framework-java libcurator-recipes-java libcurator-discovery-java"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { $SUDO apt-get update -q && $SUDO env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends $missing; } >"$log" 2>&1; then
	cat "$log" >&2
	echo "install-test-deps: failed to install:$missing" >&2
	exit 1
fi
