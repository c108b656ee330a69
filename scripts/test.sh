#!/bin/sh
# test.sh runs every test Warden has, as CI does:
#   1. gofmt, go vet and staticcheck;
#   2. unit and in-process tests (go test ./...), with the race detector;
#   3. the fault tier: the CI slice of the torture harness (scripts/torture.sh,
#      test/torture): 3- and 5-member ensembles of real processes, each
#      member in its own network namespace, killed, paused, partitioned,
#      wiped and given a full disk while clients work; every history checked
#      (linearizability with porcupine); needs root, as CI has;
#   4. the console tier: the web console driven in headless Chromium
#      (scripts/console-test.sh; installs Debian's chromium when missing);
#   5. the Docker tier: the image built FROM scratch, a 3-member compose
#      ensemble written, read and broken, the ZOO_* environment contract
#      (scripts/docker-test.sh; needs the Docker engine and docker-compose,
#      and fails saying so when they are absent);
#   6. the compatibility tier: real clients (zkCli.sh, cli_mt, kazoo, Curator,
#      go-zookeeper) against a real `warden server` process and, side by side,
#      against Apache ZooKeeper 3.8 from Debian (installed here when missing),
#      the AdminServer's JSON included.
# Set WARDEN_SKIP_COMPAT=1 to skip step 6 (e.g. on a machine without apt).
set -eu
cd "$(dirname "$0")/.."

echo "== gofmt, go vet, staticcheck"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
go vet -tags compat ./test/compat/...
go vet -tags torture ./test/torture/...
go vet -tags browser ./internal/console/...
go vet -tags docker ./test/docker/...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags compat ./test/compat/... ./internal/auth/...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags torture ./test/torture/...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags browser ./internal/console/...
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 -tags docker ./test/docker/...

echo "== unit and in-process tests"
go test -race -count=1 -timeout 15m ./...

echo "== fault tier (test/torture: real members in network namespaces, seeded faults, checked histories)"
sh scripts/torture.sh

echo "== console tier (the web console in headless Chromium)"
sh scripts/console-test.sh

echo "== Docker tier (the image, a compose ensemble, the ZOO_* contract)"
sh scripts/docker-test.sh

if [ "${WARDEN_SKIP_COMPAT:-}" = "1" ]; then
	echo "== compatibility tier skipped (WARDEN_SKIP_COMPAT=1)"
	exit 0
fi
echo "== compatibility tier (real clients; Warden and Apache ZooKeeper side by side)"
sh scripts/install-test-deps.sh
go test -tags compat -count=1 -timeout 30m ./test/compat/...
