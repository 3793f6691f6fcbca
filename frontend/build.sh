#!/usr/bin/env bash
# Builds the release site (and, unless --frontend-only, the server): cargo-leptos builds the
# server and the enrollment flow's bundle (/pkg/switchboard.{js,wasm}, with the stylesheet and
# static files); then each other flow gets its own bundle (/pkg/flow-<scope>.{js,wasm}), built
# with that flow's feature only, so that a flow page downloads its own flow's code and no
# other's. Each bundle is optimized for size without the exports the flows never call
# (frontend/strip-exports.mjs). Everything precompressed (brotli, gzip), as served. Needs
# binaryen's wasm-opt first on PATH (end2end/node_modules/.bin).
#
#   frontend/build.sh [--frontend-only]   everything (the server too unless --frontend-only)
#   frontend/build.sh --without-flows     the server and the enrollment flow only
#   frontend/build.sh --flows-only        the other flows, beside a site built before
set -euo pipefail
cd "$(dirname "$0")/.."
main=(--release --precompress)
build_main=1 build_flows=1
case "${1:-}" in
  --frontend-only) main+=(--frontend-only) ;;
  --without-flows) build_flows=0 ;;
  --flows-only) build_main=0 ;;
  "") ;;
  *) echo "usage: frontend/build.sh [--frontend-only | --without-flows | --flows-only]" >&2; exit 2 ;;
esac
if [ "$build_main" = 1 ]; then
  cargo leptos build "${main[@]}"
  node frontend/strip-exports.mjs target/site/pkg/switchboard.wasm
fi
[ "$build_flows" = 1 ] || exit 0
for flow in update-payment-method billing documents renewal; do
  # A site of its own (cargo-leptos empties the site it builds), then its bundle beside the
  # enrollment flow's under its own name.
  LEPTOS_SITE_ROOT="target/site-flows/$flow" \
    cargo leptos build --release --precompress --frontend-only --lib-features "$flow"
  node frontend/strip-exports.mjs "target/site-flows/$flow/pkg/switchboard.wasm"
  for ext in js wasm; do
    for suffix in "" .br .gz; do
      cp "target/site-flows/$flow/pkg/switchboard.$ext$suffix" "target/site/pkg/flow-$flow.$ext$suffix"
    done
  done
done
