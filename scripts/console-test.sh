#!/bin/sh
# console-test.sh runs the web console's browser tier: headless Chromium,
# driven from Go with chromedp, loads the console of an in-process server
# and uses it as a person would (go test -tags browser ./internal/console/...).
# Installs Debian's chromium when it is missing: quiet on success; on
# failure prints apt-get's output and exits non-zero. The test itself fails
# (it does not skip) when no Chromium can be found.
# Set WARDEN_CONSOLE_SCREENSHOTS=dir to save the console's screenshots there
# (docs/console/*.png are made this way).
set -eu
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then
		SUDO="sudo"
	fi
	log=$(mktemp)
	trap 'rm -f "$log"' EXIT
	if ! { $SUDO apt-get update -q && $SUDO env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends chromium; } >"$log" 2>&1; then
		cat "$log" >&2
		echo "console-test: failed to install chromium (the console's browser test needs it)" >&2
		exit 1
	fi
fi

go vet -tags browser ./internal/console/...
go test -tags browser -count=1 -timeout 5m ./internal/console/...
