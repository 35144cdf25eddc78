#!/usr/bin/env bash
# Runs every test of Pressroom from a fresh clone: installs and builds, checks
# formatting (Prettier), types and lint, then runs the unit, integration and end-to-end tests with
# Node's test runner (one run, one summary). Tests need PostgreSQL at
# DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres); each
# suite makes its own database and its own nats-server on a free port.
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
./scripts/setup.sh

if ! node -e 'require("pg")' >/dev/null 2>&1; then echo "test: npm dependencies missing" >&2; exit 1; fi
if ! node packages/stack/dist/check-postgres.js; then
  echo "test: starting a private PostgreSQL for the tests under .data/test-postgres"
  DATABASE_URL="$(node packages/stack/dist/start-test-postgres.js)"
  export DATABASE_URL
  stop_postgres="node packages/stack/dist/stop-test-postgres.js"
fi

# The container images take the longest to build from nothing (20 minutes and more on a fresh machine): their build starts
# now, beside the checks and the tests that need no image. The suites that need them (containers, chromium-seccomp) call
# deploy/images.sh too, which waits on this build's lock and then finds every layer built.
images_log="${TMPDIR:-/tmp}/pressroom-images-$$.log"
PRESSROOM_BUILD_LOG="$images_log" setsid ./deploy/images.sh >>"$images_log" 2>&1 &
images_pid=$!
trap 'kill -- -"$images_pid" 2>/dev/null || true; ${stop_postgres:-}' EXIT

npx prettier --check --log-level warn . || { echo "test: files not formatted; run npm run format" >&2; exit 1; }
npx turbo run typecheck lint --output-logs=errors-only
# One file at a time by default: with two (TEST_CONCURRENCY=2; each stack's ports are leased to it alone,
# packages/stack/src/ports.ts), the hostile suite's memory bomb met its deadline before its memory limit on 2 cores.
mapfile -t files < <(find packages services test bench -path '*/node_modules' -prune -o -path '*/dist' -prune -o -name '*.test.ts' -print | sort)
node --import tsx --test --test-concurrency="${TEST_CONCURRENCY:-1}" "${files[@]}"
