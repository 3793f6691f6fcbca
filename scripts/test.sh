#!/usr/bin/env bash
# Installs what is missing, then runs every test: formatting and lints, unit tests, the
# integration suite on SQLite and on PostgreSQL (and Redis, and the card processor's stand-in),
# the browser tests in Chromium against the release build, the schema-driven API fuzzer against
# the same build, and the flow bundles' size budget.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# Each step says when it starts (minutes:seconds into the run), so a slow step shows.
step() { printf '\n\033[1m==> [%d:%02d] %s\033[0m\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$*"; }

# What runs in the background, stopped however the run ends.
setup= fuzz= server= stripe=0
cleanup() {
  [ -z "$setup" ] || kill "$setup" 2>/dev/null || true
  if [ -n "$fuzz" ]; then pkill -P "$fuzz" 2>/dev/null || true; kill "$fuzz" 2>/dev/null || true; fi
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  [ "$stripe" = 0 ] || ./end2end/localstripe.sh stop || true
}
trap cleanup EXIT

# The installs (cargo-leptos and wasm-bindgen-cli compile for minutes; Chromium, the test services
# and the node packages download) run in the background while the code is checked and the
# tests are built, which fills the cores each leaves idle; the tests run once they are done.
step "Installing what is missing, in the background (its output follows the test build)"
export PATH="$PWD/end2end/node_modules/.bin:$HOME/.cargo/bin:$PATH"
rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown \
  || rustup target add wasm32-unknown-unknown
mkdir -p target
./scripts/setup.sh --test > target/setup.log 2>&1 &
setup=$!

step "Formatting"
cargo fmt --all -- --check

step "Lints"
cargo clippy --workspace --all-targets -- -D warnings
# The browser half of the flows compiles only for WASM.
cargo clippy -p frontend -p app --features app/hydrate --target wasm32-unknown-unknown -- -D warnings

step "Building the tests"
cargo test --workspace --no-run

step "Waiting for the installs"
installed=0
wait "$setup" || installed=$?
setup=
cat target/setup.log
[ "$installed" = 0 ] || exit "$installed"

# The card processor's stand-in, for the integration and browser tests of live apps: started
# like PostgreSQL and Redis.
./end2end/localstripe.sh start
stripe=1
export LOCALSTRIPE_URL=http://127.0.0.1:8420

step "Unit and integration tests (SQLite and PostgreSQL)"
cargo test --workspace

step "The release build: the server and the enrollment flow"
for port in 3000 3100; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "Port $port is taken: stop the server running there first." >&2
    exit 1
  fi
done
./frontend/build.sh --without-flows

# The fuzzer needs only the server, so it runs while the other flows build: their optimisation
# and linking keep one core busy, and the fuzzer's time is bounded, not its work.
step "API fuzzing (schemathesis, every check, seeded and bounded) against the release build, in the background"
rm -rf target/e2e && mkdir -p target/e2e/deploy target/e2e/fuzz
cp target/release/switchboard target/e2e/fuzz/
FUZZ_PORT=3100 ./end2end/fuzz.sh target/e2e/fuzz/switchboard > target/e2e/fuzz.log 2>&1 &
fuzz=$!

step "The release build: the other flows"
./frontend/build.sh --flows-only

step "Browser tests (Chromium) against the release build, deployed as the README says"
# What partners run: the binary and the site copied into a folder of their own, started from
# there with none of the build's variables.
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
if ! node end2end/run.mjs; then
  echo "The server's log (target/e2e/server.log) ends with:" >&2
  tail -n 40 target/e2e/server.log >&2
  exit 1
fi
kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
server=

step "API fuzzing: its results"
fuzzed=0
wait "$fuzz" || fuzzed=$?
fuzz=
cat target/e2e/fuzz.log
[ "$fuzzed" = 0 ] || exit "$fuzzed"

step "Flow bundle sizes (each flow's first load of the release build just tested, brotli, budget 150 KB each)"
./end2end/bench/flow-size.sh --built

step "Done"
