#!/usr/bin/env bash
# Installs what is missing, then runs every test: formatting and lints, unit tests, the
# integration suite on SQLite and on PostgreSQL (and Redis), the browser tests in Chromium
# against the release build, the schema-driven API fuzzer against the same build, and the flow
# bundle's size budget.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# Each step says when it starts (minutes:seconds into the run), so a slow step shows.
step() { printf '\n\033[1m==> [%d:%02d] %s\033[0m\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"; }

step "Installing what is missing"
./scripts/setup.sh --test
export PATH="$PWD/end2end/node_modules/.bin:$HOME/.cargo/bin:$PATH"

step "Formatting"
cargo fmt --all -- --check

step "Lints"
cargo clippy --workspace --all-targets -- -D warnings
# The browser half of the flows compiles only for WASM.
cargo clippy -p frontend -p app --features app/hydrate --target wasm32-unknown-unknown -- -D warnings

# The card processor's stand-in, for the integration and browser tests of live apps: started
# like PostgreSQL and Redis, stopped on exit (the browser tests' trap below stops it too).
./end2end/localstripe.sh start
export LOCALSTRIPE_URL=http://127.0.0.1:8420
trap './end2end/localstripe.sh stop' EXIT

step "Unit and integration tests (SQLite and PostgreSQL)"
cargo test --workspace

step "Browser tests (Chromium) against the release build, deployed as the README says"
if (exec 3<>/dev/tcp/127.0.0.1/3000) 2>/dev/null; then
  echo "Port 3000 is taken: stop the server running there first." >&2
  exit 1
fi
./frontend/build.sh
# What partners run: the binary and the site copied into a folder of their own, started from
# there with none of the build's variables.
rm -rf target/e2e && mkdir -p target/e2e/deploy
cp target/release/switchboard target/e2e/deploy/
cp -r target/site target/e2e/deploy/site
export DATABASE_URL="sqlite:$PWD/target/e2e/switchboard.db" SWITCHBOARD_BIN="$PWD/target/e2e/deploy/switchboard"
# The dashboard's browser test sends webhooks to a receiver on loopback; live apps' cards go
# through the card processor's stand-in.
(cd target/e2e/deploy && exec env -u LEPTOS_OUTPUT_NAME -u LEPTOS_SITE_ROOT SWITCHBOARD_LOG_FORMAT=human \
  SWITCHBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS=true \
  SWITCHBOARD_PAYMENT_PROCESSOR_API_BASE="$LOCALSTRIPE_URL" \
  SWITCHBOARD_PAYMENT_PROCESSOR_JS_URL="$LOCALSTRIPE_URL/js.stripe.com/v3/" \
  ./switchboard serve --addr 127.0.0.1:3000) \
  > target/e2e/server.log 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; ./end2end/localstripe.sh stop' EXIT
if ! node end2end/run.mjs; then
  echo "The server's log (target/e2e/server.log) ends with:" >&2
  tail -n 40 target/e2e/server.log >&2
  exit 1
fi
kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true

step "API fuzzing (schemathesis, seeded and bounded) against the release build"
./end2end/fuzz.sh target/e2e/deploy/switchboard

step "Flow bundle sizes (each flow's first load of the release build just tested, brotli, budget 200 KB each)"
./end2end/bench/flow-size.sh --built

step "Done"
