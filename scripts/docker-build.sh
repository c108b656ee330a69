#!/bin/sh
# docker-build.sh builds Warden's Docker image, warden:<tag> (default tag:
# the git describe of HEAD, or "dev"), from deploy/docker/Dockerfile.
#
#	scripts/docker-build.sh [tag]
#
# Nothing is pulled: the image is FROM scratch and the static binary is
# built here, on the host (CGO_ENABLED=0, -trimpath), into a temporary
# build context together with the files the empty base needs (passwd and
# group for the non-root user 1000:1000, nsswitch.conf, the empty /conf,
# /data, /datalog, /logs owned by that user, and /tmp). Needs go and docker.
set -eu
cd "$(dirname "$0")/.."

for tool in go docker; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "docker-build.sh: $tool is not installed; it is needed to build the image" >&2
		exit 1
	fi
done

tag=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)

ctx=$(mktemp -d "${TMPDIR:-/tmp}/warden-docker.XXXXXX")
trap 'rm -rf "$ctx"' EXIT INT TERM

echo "docker-build.sh: building the static binary"
CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags='-s -w' -o "$ctx/warden" ./cmd/warden

cp deploy/docker/Dockerfile "$ctx/Dockerfile"
cp -R deploy/docker/rootfs "$ctx/rootfs"
chmod 0644 "$ctx/rootfs/etc/passwd" "$ctx/rootfs/etc/group" "$ctx/rootfs/etc/nsswitch.conf"
mkdir -p "$ctx/dirs/conf" "$ctx/dirs/data" "$ctx/dirs/datalog" "$ctx/dirs/logs" "$ctx/rootfs/tmp"
chmod 0755 "$ctx/dirs/conf" "$ctx/dirs/data" "$ctx/dirs/datalog" "$ctx/dirs/logs"
chmod 0755 "$ctx/rootfs" "$ctx/rootfs/etc"
chmod 1777 "$ctx/rootfs/tmp"

# Without the buildx plugin a recent docker client refuses BuildKit; the
# classic builder builds this Dockerfile just as well.
if ! docker buildx version >/dev/null 2>&1; then
	DOCKER_BUILDKIT=0
	export DOCKER_BUILDKIT
fi

old=$(docker image inspect -f '{{.Id}}' "warden:$tag" 2>/dev/null || true)
echo "docker-build.sh: docker build -t warden:$tag"
docker build -q -t "warden:$tag" \
	--build-arg VERSION="$tag" \
	--build-arg REVISION="$revision" \
	--build-arg CREATED="$created" \
	"$ctx" >/dev/null
new=$(docker image inspect -f '{{.Id}}' "warden:$tag")
# A rebuild under the same tag leaves the previous image untagged: remove
# it (unless a container still uses it).
if [ -n "$old" ] && [ "$old" != "$new" ]; then
	docker rmi "$old" >/dev/null 2>&1 || true
fi
echo "docker-build.sh: built warden:$tag ($new)"
