#!/usr/bin/env bash
# Set-up of a fresh machine: Node 24 LTS and pnpm from the npm registry when missing or older, then the
# workspace's dependencies. The README's first command and .ci/run both start here.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=24.21.0
PNPM_VERSION=10.34.9

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(node_major)" -lt 24 ]; then
  # Install over the node on PATH (for Debian's /usr/bin/node the prefix is /usr). --force: npm would
  # otherwise refuse to replace a node binary it did not install.
  prefix="$(dirname "$(dirname "$(command -v node 2>/dev/null || echo /usr/bin/node)")")"
  npm install -g --force --prefix "$prefix" "node@$NODE_VERSION" >/dev/null
  hash -r
fi
if [ "$(node_major)" -lt 24 ]; then
  echo "setup: Node 24 is required, and $(command -v node) is $(node --version 2>/dev/null || echo missing)" >&2
  exit 1
fi
echo "node $(node --version)"

if ! command -v pnpm >/dev/null 2>&1; then
  # An explicit prefix: once node is the npm package, npm's default prefix would be inside it.
  npm install -g --prefix /usr/local "pnpm@$PNPM_VERSION" >/dev/null
  hash -r
fi
echo "pnpm $(pnpm --version)"

if [ "${CI:-}" = "true" ]; then
  pnpm install --frozen-lockfile
else
  pnpm install
fi
