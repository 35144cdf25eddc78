#!/usr/bin/env bash
# Installs what Pressroom needs on a Debian machine and builds it:
# Chromium's headless shell and fonts for rendering, qpdf and Ghostscript for PDF post-processing
# (merge, encryption, PDF/A), poppler-utils for the tests' PDF checks,
# openssl for the local gRPC certificates (up.sh, the tests' stacks),
# python3 for the Python client's tests, nats-server and PostgreSQL when absent (private
# instances are started from them when none answers), the npm workspaces, then a turbo build.
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1

missing=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }
[ -x /usr/lib/chromium/chromium-headless-shell ] || missing+=(chromium-headless-shell)
have qpdf || missing+=(qpdf)
have gs || missing+=(ghostscript)
have pdftotext || missing+=(poppler-utils)
have openssl || missing+=(openssl)
have python3 || missing+=(python3)
have nats-server || missing+=(nats-server)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
if have fc-list; then
  fonts="$(fc-list : family)"
  grep -qi "Liberation Sans" <<<"$fonts" || missing+=(fonts-liberation2)
  grep -qi "Noto Sans CJK" <<<"$fonts" || missing+=(fonts-noto-cjk)
  grep -qi "Noto Color Emoji" <<<"$fonts" || missing+=(fonts-noto-color-emoji)
else
  missing+=(fontconfig fonts-liberation2 fonts-noto-cjk fonts-noto-color-emoji)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]} with apt-get"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm install rather than npm ci: npm 11 leaves other platforms' optional packages out of
# the lockfile and then refuses it in npm ci; npm install still follows the lockfile.
stamp=node_modules/.pressroom-lock
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "setup: installing npm dependencies"
  npm install --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi

echo "setup: building"
npx turbo run build --output-logs=errors-only
