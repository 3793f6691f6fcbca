#!/usr/bin/env bash
# Installs what is missing, then builds and serves Switchboard on http://127.0.0.1:3000 with the
# embedded defaults (SQLite under ./data, in-process rate limits). Extra arguments go to
# `cargo leptos serve` (for example --release).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export PATH="$PWD/end2end/node_modules/.bin:$HOME/.cargo/bin:$PATH"
exec cargo leptos serve "$@"
