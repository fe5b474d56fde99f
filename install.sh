#!/usr/bin/env bash
# Installs what sandgate needs on Debian/Ubuntu: bubblewrap and python3 from apt (when run as
# root; otherwise it prints the command to run), then npm dependencies and the build.
set -euo pipefail
cd "$(dirname "$0")"

need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
[ -x /usr/bin/python3 ] || need_apt+=(python3)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "sandgate: installing ${need_apt[*]} with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "sandgate: missing ${need_apt[*]}. Install with: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "sandgate: Node.js 20 or newer is required (found $(node --version))" >&2
  exit 1
fi

# `npm install` rather than `npm ci`: npm 11 leaves other platforms' optional packages (rollup's
# native builds) out of the lock file, which `npm ci` then refuses; install keeps the locked versions.
npm install --no-audit --no-fund
npm run build
