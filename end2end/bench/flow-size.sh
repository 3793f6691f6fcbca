#!/usr/bin/env bash
# The flows' download: builds the release site (one bundle per flow, precompressed, as served)
# and prints, for each flow, the brotli size of everything its page loads (its own WASM and JS,
# and the stylesheet) against the 150 KB budget; fails when one is over, or when a flow's
# bundle holds another flow. Usage: end2end/bench/flow-size.sh [--built] [--baseline <site dir>]
# (--built measures the release site already in target/site without building it again;
# --baseline shows each flow beside its first load in another release site, see flow-size.mjs).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = "--built" ]; then
  shift
else
  ./scripts/setup.sh >/dev/null
  export PATH="$PWD/end2end/node_modules/.bin:$HOME/.cargo/bin:$PATH"
  ./frontend/build.sh --frontend-only >/dev/null 2>&1
fi
node end2end/bench/flow-size.mjs "$@"
