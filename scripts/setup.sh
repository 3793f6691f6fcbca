#!/usr/bin/env bash
# Installs what building (and, with --test, testing) Switchboard needs, skipping whatever is
# already there. Safe to run again. Used by scripts/serve.sh and scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_LEPTOS_VERSION=0.3.10
WANT_TEST=0
[ "${1:-}" = "--test" ] && WANT_TEST=1

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

export PATH="$HOME/.cargo/bin:$PATH"

# Three independent parts run side by side: the two cargo installs keep the cores busy where
# one alone leaves one idle (its last crates and links run on one core), while the downloads
# of the system and test packages wait on the network. Each part's output goes to its own log,
# shown when it fails.
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT

rust_target() {
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    say "Adding the wasm32 target"
    rustup target add wasm32-unknown-unknown
  fi
}

cargo_leptos() {
  if ! have_cargo_leptos; then
    say "Installing cargo-leptos $CARGO_LEPTOS_VERSION (a few minutes, once)"
    # Its own release profile asks for fat LTO in one codegen unit at opt-level 3, which takes
    # most of the install's time on two cores; the tool spends its time waiting on cargo and
    # wasm-opt, and built with light, parallel code generation a flow's build takes as long
    # (measured: 14.4 s against 14.9 s), for a quarter less compiling. It links OpenSSL, which
    # it would otherwise compile from source: Debian's is as good (openssl_dev, below).
    OPENSSL_NO_VENDOR=1 CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false \
      CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
      cargo install cargo-leptos --version "$CARGO_LEPTOS_VERSION" --locked
  fi
}

# The wasm-bindgen CLI must match the wasm-bindgen crate in Cargo.lock exactly.
wasm_bindgen_cli() {
  local version
  version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
  if ! wasm-bindgen --version 2>/dev/null | grep -q " $version"; then
    say "Installing wasm-bindgen-cli $version (about 2 minutes, once)"
    CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install wasm-bindgen-cli --version "$version"
  fi
}

# Node packages: Playwright's driver (no browser download) and binaryen's wasm-opt, which
# release builds use (Debian's binaryen produces WASM that fails in browsers).
node_packages() {
  if [ ! -x end2end/node_modules/.bin/wasm-opt ] || [ end2end/package-lock.json -nt end2end/node_modules/.package-lock.json ]; then
    say "Installing node packages of end2end/"
    (cd end2end && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

test_services() {
  if [ ! -x /usr/bin/chromium ]; then
    say "Installing Chromium from Debian"
    apt_install chromium
  fi
  if ! command -v pg_isready >/dev/null; then
    say "Installing PostgreSQL"
    apt_install postgresql
  fi
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    say "Starting PostgreSQL"
    as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
  if ! command -v redis-server >/dev/null; then
    say "Installing Redis"
    apt_install redis-server
  fi
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    say "Starting Redis"
    as_root mkdir -p /var/lib/redis /var/log/redis
    as_root redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/switchboard-tests.log
    for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
  fi
  # Independent counterparts of the webhook and e-mail tests: the Standard Webhooks reference
  # verifier and a local SMTP server.
  if ! python3 -c "import standardwebhooks, aiosmtpd" 2>/dev/null; then
    say "Installing the Python test counterparts (standardwebhooks, aiosmtpd)"
    command -v pip3 >/dev/null || apt_install python3-pip
    pip3 install -q standardwebhooks aiosmtpd 2>/dev/null \
      || pip3 install -q --break-system-packages standardwebhooks aiosmtpd
  fi
  # The card processor's stand-in (localstripe, pinned, in a venv of its own under target/).
  ./end2end/localstripe.sh install
  # The schema-driven API fuzzer of the test command (end2end/fuzz.sh), pinned, in a venv of
  # its own under target/.
  local schemathesis_version=4.32.5
  if ! target/schemathesis/bin/st --version 2>/dev/null | grep -qx "st, version $schemathesis_version"; then
    say "Installing schemathesis $schemathesis_version into target/schemathesis"
    python3 -c "import venv, ensurepip" 2>/dev/null || apt_install python3-venv
    rm -rf target/schemathesis
    python3 -m venv target/schemathesis
    target/schemathesis/bin/pip install -q "schemathesis==$schemathesis_version"
  fi
}

# Runs "$@" in the background, its output in the log named $1.
parts=()
part() {
  local name=$1
  ("$@") >"$LOGS/$name.log" 2>&1 &
  parts+=("$name:$!")
}

have_cargo_leptos() { cargo leptos --version 2>/dev/null | grep -q " $CARGO_LEPTOS_VERSION"; }

openssl_dev() {
  if ! have_cargo_leptos && ! pkg-config --exists openssl 2>/dev/null; then
    say "Installing OpenSSL's headers (libssl-dev)"
    apt_install libssl-dev pkg-config
  fi
}

rust_target
openssl_dev
part wasm_bindgen_cli
part node_packages
[ "$WANT_TEST" = 1 ] && part test_services
cargo_leptos
failed=0
for p in "${parts[@]}"; do
  name=${p%%:*}
  if wait "${p#*:}"; then
    cat "$LOGS/$name.log"
  else
    echo "setup: $name failed:" >&2
    cat "$LOGS/$name.log" >&2
    failed=1
  fi
done
exit "$failed"
