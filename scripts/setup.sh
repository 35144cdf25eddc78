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

# Render, run as root, starts its post-processing process as the user nobody, which loads its code
# from this checkout (services/render/README.md). A clone inside `mktemp -d` is 0700: it is opened
# for traversal only (o+x: no listing; what up.sh and the tests make secret is 0600 in 0700
# directories). A closed directory above the checkout is the machine's, and is named, not changed.
if [ "$(id -u)" -eq 0 ]; then
  nobody_reads() { setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$PWD/package.json"; }
  if ! nobody_reads && [ $((0$(stat -c %a .) & 1)) -eq 0 ]; then
    echo "setup: chmod o+x $PWD: render's post-processing process runs as the user nobody and loads its code from here"
    chmod o+x .
  fi
  if ! nobody_reads; then
    echo "setup: the user nobody, as which render (run as root) starts its post-processing process, cannot reach $PWD:" \
      "a directory above it is closed to others. Clone elsewhere, chmod o+x that directory, or run as another user." >&2
    exit 1
  fi
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
