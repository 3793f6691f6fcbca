#!/usr/bin/env bash
# Builds the release site (and, unless --frontend-only, the server): cargo-leptos builds the
# server and the enrollment flow's bundle (/pkg/switchboard.{js,wasm}, with the stylesheet and
# static files); then each other flow gets its own bundle (/pkg/flow-<scope>.{js,wasm}), built
# with that flow's feature only, so that a flow page downloads its own flow's code and no
# other's. Then each bundle is optimized for size without the exports the flows never call
# (frontend/strip-exports.mjs). Everything precompressed (brotli, gzip), as served. Needs
# binaryen's wasm-opt first on PATH (end2end/node_modules/.bin). Usage: frontend/build.sh
# [--frontend-only]
set -euo pipefail
cd "$(dirname "$0")/.."
only=()
if [ "${1:-}" = "--frontend-only" ]; then only=(--frontend-only); fi
cargo leptos build --release --precompress "${only[@]}"
for flow in update-payment-method billing documents renewal; do
  # A site of its own (cargo-leptos empties the site it builds), then its bundle beside the
  # enrollment flow's under its own name.
  LEPTOS_SITE_ROOT="target/site-flows/$flow" \
    cargo leptos build --release --precompress --frontend-only --lib-features "$flow"
  for ext in js wasm; do
    for suffix in "" .br .gz; do
      cp "target/site-flows/$flow/pkg/switchboard.$ext$suffix" "target/site/pkg/flow-$flow.$ext$suffix"
    done
  done
done
node frontend/strip-exports.mjs target/site/pkg/*.wasm
