#!/usr/bin/env bash
# seek's VS Code extension: build, unit tests (node's test runner), the .vsix (@vscode/vsce),
# then the end-to-end tests in a real VS Code (code-server 4.100 from npm, Debian's
# chromium, puppeteer-core). Idempotent: npm installs are cached in node_modules and redone
# only when a package-lock.json changes.
#
#   editors/vscode/test/run-e2e.sh [--screenshots DIR]
#
# Needs node 20 (code-server 4.100's), npm, and as root apt-get for chromium, ripgrep and
# libkrb5-dev. SEEK_E2E_SEEK names the seek program (default: the repository's .venv).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
shots=""
if [ "${1:-}" = "--screenshots" ]; then shots="$(mkdir -p "$2" && cd "$2" && pwd)"; fi
say() { echo "vscode-e2e: $*"; }

if ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" != 20 ]; then
  say "SKIPPED: code-server 4.100 needs node 20 (found: $(node --version 2>/dev/null || echo none))"
  exit 0
fi

# System packages: the browser, ripgrep (VS Code's search; its npm package would download
# it) and the Kerberos headers a native module of code-server builds against.
need=()
command -v chromium >/dev/null || need+=(chromium)
command -v rg >/dev/null || need+=(ripgrep)
[ -e /usr/include/gssapi/gssapi.h ] || need+=(libkrb5-dev)
command -v g++ >/dev/null && command -v make >/dev/null || need+=(build-essential)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    say "SKIPPED: missing ${need[*]} and no root apt-get to install them"
    exit 0
  fi
fi

# @vscode/ripgrep's install looks in its cache folder before downloading from GitHub: a
# tarball of the system's rg there keeps the install on the registries.
tmp="$(node -p 'require("os").tmpdir()')"
cache="$tmp/vscode-ripgrep-cache-1.15.11"
asset="$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
if [ ! -s "$asset" ]; then
  mkdir -p "$cache"
  rgdir="$(mktemp -d)"
  cp "$(command -v rg)" "$rgdir/rg"
  tar czf "$asset.part" -C "$rgdir" rg && mv "$asset.part" "$asset"
  rm -rf "$rgdir"
fi

# npm ci only when the lock file changed since the last install here.
install() {
  local dir="$1" stamp="$1/node_modules/.seek-lock-sha"
  local sha
  sha="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$sha" ]; then
    say "npm ci in ${dir#"$repo"/}"
    (cd "$dir" && npm_config_yes=true npm_config_unsafe_perm=true npm ci --no-audit --no-fund --loglevel=error)
    echo "$sha" >"$stamp"
  fi
}
start=$(date +%s)
# Both at once: most of the time is waiting on the registry and building native modules.
install "$here" & first=$!
install "$here/test/e2e" & second=$!
failed=""
wait "$first" || failed=1
wait "$second" || failed=1
if [ -n "$failed" ]; then say "npm ci failed"; exit 1; fi
say "dependencies ready in $(($(date +%s) - start)) s"

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
  timeout 420 node --test --test-reporter=spec e2e.test.mjs
