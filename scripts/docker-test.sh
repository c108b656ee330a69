#!/bin/sh
# docker-test.sh runs the Docker packaging tests (test/docker, build tag
# docker): it builds warden:dockertest with scripts/docker-build.sh, runs
# deploy/docker/compose.yaml's 3-member ensemble under a unique project
# name (write, read, kill the leader, write and read again) and checks the
# ZOO_* environment contract of the image, then removes every container,
# network and volume it created. About a minute once Go's build cache is
# warm.
#
# It needs go, a running Docker engine (20.10+) and docker-compose or the
# docker compose plugin, and fails, saying which is missing, without them.
# Run it on the Docker host: clients reach the containers by their IPs.
set -eu
cd "$(dirname "$0")/.."

missing=""
command -v go >/dev/null 2>&1 || missing="$missing\n  go (https://go.dev/dl/)"
if ! command -v docker >/dev/null 2>&1; then
	missing="$missing\n  the docker client and engine (Docker Engine 20.10 or later)"
elif ! docker info >/dev/null 2>&1; then
	missing="$missing\n  a running Docker engine this user may use ('docker info' fails: is dockerd running? is the user in the docker group?)"
fi
if ! command -v docker-compose >/dev/null 2>&1 && ! docker compose version >/dev/null 2>&1; then
	missing="$missing\n  docker-compose (1.29+) or the docker compose plugin"
fi
if [ -n "$missing" ]; then
	printf "docker-test.sh: FAIL: cannot test the Docker packaging; missing:$missing\n" >&2
	exit 1
fi

exec go test -tags docker -count=1 -timeout 6m -v ./test/docker/ "$@"
