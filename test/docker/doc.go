//go:build docker

// Package docker tests Warden's Docker packaging end to end (deploy/docker,
// docs/docker.md): it builds the image with scripts/docker-build.sh, starts
// deploy/docker/compose.yaml's 3-member ensemble under a unique project
// name, writes through one member and reads through another with a real
// client (go-zookeeper), kills a member and checks that the other two keep
// serving, and checks the environment contract of `warden container`
// (ZOO_CFG_EXTRA, ZOO_4LW_COMMANDS_WHITELIST, a mounted zoo.cfg kept).
//
// It needs a Docker engine and docker-compose (or the docker compose
// plugin), and runs only with the build tag, best through the script that
// says what is missing:
//
//	scripts/docker-test.sh
//	go test -tags docker -count=1 ./test/docker/
//
// Missing tools are a failure, not a skip. Nothing is pulled: the image is
// FROM scratch, tagged warden:dockertest and reused by the next run. Every
// container, network and volume the tests create is removed when they end,
// pass or fail. Clients reach the containers at their bridge-network IP
// addresses, so the tests must run on the Docker host.
package docker
