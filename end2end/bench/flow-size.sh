#!/usr/bin/env bash
# The flows' download: builds the release WASM and JS (precompressed, as served) and prints
# their brotli sizes against the 200 KB budget. Usage: end2end/bench/flow-size.sh [--built]
# (--built measures the release site already in target/site without building it again).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" != "--built" ]; then
  ./scripts/setup.sh >/dev/null
  export PATH="$PWD/end2end/node_modules/.bin:$HOME/.cargo/bin:$PATH"
  cargo leptos build --release --frontend-only --precompress >/dev/null 2>&1
fi
total=0
for f in target/site/pkg/switchboard.wasm target/site/pkg/switchboard.js; do
  raw=$(stat -c %s "$f")
  br=$(stat -c %s "$f.br")
  total=$((total + br))
  printf '%-32s %9d bytes, brotli %7d\n' "$(basename "$f")" "$raw" "$br"
done
printf 'WASM + JS, brotli: %d bytes (budget 200000)\n' "$total"
[ "$total" -le 200000 ]
