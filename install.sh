#!/usr/bin/env bash
# Installs what sandgate needs on Debian/Ubuntu: bubblewrap and python3 from apt (when run as
# root; otherwise it prints the command to run), a data-science default for sandboxed Python
# (numpy, pandas, matplotlib; --minimal skips it), then npm dependencies and the build.
set -euo pipefail
cd "$(dirname "$0")"

minimal=0
for arg in "$@"; do
  case $arg in
    --minimal) minimal=1 ;;
    -h|--help) echo "usage: ./install.sh [--minimal]   (--minimal: no numpy, pandas, matplotlib for sandboxed Python)"; exit 0 ;;
    *) echo "sandgate: unknown option $arg (usage: ./install.sh [--minimal])" >&2; exit 2 ;;
  esac
done

need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
[ -x /usr/bin/python3 ] || need_apt+=(python3)
# better-sqlite3 (the audit log) is built from source when no prebuilt binary can be downloaded.
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
command -v make >/dev/null 2>&1 || need_apt+=(make)
# Sandboxes import Debian's python3-* packages straight from the host's /usr (read-only).
data_science=()
if [ "$minimal" = 0 ]; then
  for module in numpy pandas matplotlib; do
    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import $module" >/dev/null 2>&1 || data_science+=("python3-$module")
  done
fi
if [ ${#data_science[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    need_apt+=("${data_science[@]}")
  else
    echo "sandgate: sandboxed Python will lack ${data_science[*]}; to add them: sudo apt-get install -y ${data_science[*]} (or rerun with --minimal to skip this)" >&2
  fi
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "sandgate: installing ${need_apt[*]} with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
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

# Node's own headers, when the host has those of this very version, spare node-gyp a download.
headers=$(awk '/define NODE_(MAJOR|MINOR|PATCH)_VERSION/ {printf "%s.", $3}' /usr/include/node/node_version.h 2>/dev/null || true)
if [ -z "${npm_config_nodedir:-}" ] && [ "v${headers%.}" = "$(node --version)" ]; then export npm_config_nodedir=/usr; fi

# `npm install` rather than `npm ci`, so a rerun keeps a built node_modules. The lock file lists every
# platform's optional packages (rollup's native builds): a lock written by an npm that left them out
# was rewritten by this install on every host, which showed package-lock.json as modified.
npm install --no-audit --no-fund
npm run build
