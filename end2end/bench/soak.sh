#!/usr/bin/env bash
# Soak benchmark, not a test: the mixed partner workload of soak.mjs (accounts, enrollments
# through the API, flow pages, clock advances with their bills and auto-pay, usage and invoice
# reads, webhooks to a local receiver) against the release build for a set time, on SQLite (one
# process) and on PostgreSQL (two API instances and a worker). Reports throughput, p50/p99 per
# operation, errors, each process's memory (RSS after setup, halfway, at the end, peak) and the
# database's size. Rate limits are lifted: it measures the service, not the limiter.
#
#   end2end/bench/soak.sh [seconds=600] [users=8] [engines="sqlite postgres"]
#
# SWITCHBOARD_BIN (default: the release build, built if missing), SOAK_PORT (default 3104; the
# PostgreSQL run also uses +10 and +20, the webhook receiver +30), TEST_POSTGRES_URL.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${1:-600}
USERS=${2:-8}
ENGINES=${3:-sqlite postgres}
PORT=${SOAK_PORT:-3104}
PG_ADMIN=${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}

BIN=${SWITCHBOARD_BIN:-${CARGO_TARGET_DIR:-target}/release/switchboard}
[ -x "$BIN" ] || cargo build --release -q -p server --bin switchboard
BIN=$(realpath "$BIN")
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

export SWITCHBOARD_RATE_LIMITS__ENABLED=false SWITCHBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS=true \
  SWITCHBOARD_MARKET__DEFAULT_DIRECTORY_SIZE=5000 SWITCHBOARD_LOG_FORMAT=human RUST_LOG=warn

start() { # name, port, role -> pid in $STARTED
  "$BIN" serve --addr "127.0.0.1:$2" --role "$3" >"$WORK/$1.log" 2>&1 &
  STARTED=$!
  PIDS+=("$STARTED")
  for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:$2/readyz" >/dev/null && return; sleep 0.2; done
  echo "$1 did not start:" >&2
  tail -n 20 "$WORK/$1.log" >&2
  exit 1
}

rss_mb() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo 0; }

for engine in $ENGINES; do
  PIDS=()
  NAMES=()
  case $engine in
    sqlite)
      export DATABASE_URL="sqlite:$WORK/soak.db"
      start all "$PORT" all
      NAMES+=("all:$STARTED")
      BASES="http://127.0.0.1:$PORT"
      ;;
    postgres)
      name="swb_soak_$$"
      PGOPTIONS="-c client_min_messages=warning" psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name"
      export DATABASE_URL="${PG_ADMIN%/*}/$name"
      SWITCHBOARD_PII_KEY=$(head -c 32 /dev/urandom | base64)
      export SWITCHBOARD_PII_KEY
      start api-1 "$PORT" api
      NAMES+=("api-1:$STARTED")
      start api-2 "$((PORT + 10))" api
      NAMES+=("api-2:$STARTED")
      start worker "$((PORT + 20))" worker
      NAMES+=("worker:$STARTED")
      BASES="http://127.0.0.1:$PORT,http://127.0.0.1:$((PORT + 10))"
      ;;
  esac
  APP_TOKEN=$("$BIN" apps create --name Soak --environment sandbox --json |
    python3 -c "import json, sys; print(json.load(sys.stdin)['token'])")

  # Memory every 5 s, per process.
  (
    while true; do
      line=""
      for entry in "${NAMES[@]}"; do line+="${entry%%:*}=$(rss_mb "${entry##*:}") "; done
      echo "$line"
      sleep 5
    done
  ) >"$WORK/rss-$engine.txt" &
  sampler=$!

  echo "==> $engine: $USERS users for $DURATION s against $BASES"
  BASES=$BASES APP_TOKEN=$APP_TOKEN DURATION=$DURATION USERS=$USERS RECEIVER_PORT=$((PORT + 30)) \
    node end2end/bench/soak.mjs
  kill "$sampler" 2>/dev/null || true

  echo "memory (MB RSS): after setup | halfway | end | peak"
  samples=$(wc -l <"$WORK/rss-$engine.txt")
  for entry in "${NAMES[@]}"; do
    n=${entry%%:*}
    col() { sed -n "$1p" "$WORK/rss-$engine.txt" | tr ' ' '\n' | sed -n "s/^$n=//p"; }
    peak=$(tr ' ' '\n' <"$WORK/rss-$engine.txt" | sed -n "s/^$n=//p" | sort -n | tail -n1)
    echo "  $n: $(col 1) | $(col $(((samples + 1) / 2))) | $(col "$samples") | $peak"
  done
  case $engine in
    sqlite) echo "database: $(du -cb "$WORK"/soak.db* | awk 'END { printf "%.1f MB", $1 / 1048576 }')" ;;
    postgres)
      echo "database: $(psql -qtA "$PG_ADMIN" -c "SELECT pg_size_pretty(pg_database_size('$name'))")"
      ;;
  esac
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  if [ "$engine" = postgres ]; then
    psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $name"
    unset SWITCHBOARD_PII_KEY
  fi
done
