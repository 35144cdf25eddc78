#!/usr/bin/env bash
# Brings up the whole of Pressroom locally: installs and builds what it needs,
# uses PostgreSQL/NATS at DATABASE_URL/NATS_URL (default 127.0.0.1) when they
# answer or starts private ones under .data/, runs the migrations, starts the
# six services as separate processes and prints the gateway URL and demo key.
# Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec node packages/stack/dist/up.js
