#!/usr/bin/env bash
# Benchmark: authenticated `GET /v1/account` against a bare axum JSON route in the same server
# and run, on SQLite and on PostgreSQL, with rate limits lifted. Reports requests per second and
# p99 latency (wrk, from Debian's packages). Not a test: run it by hand and read the table.
#
#   end2end/bench/api.sh [seconds=10] [connections=32]
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${1:-10}
CONNECTIONS=${2:-32}
PORT=3917
PG_ADMIN=${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}

command -v wrk >/dev/null || { sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd=sudo; $sudo_cmd apt-get install -y -qq wrk >/dev/null; }
cargo build --release -q -p server --bin switchboard
BIN=target/release/switchboard
WORK=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT

measure() { # url, header -> "rps p99_ms"
  local out
  out=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency ${2:+-H "$2"} "$1")
  local rps p99
  rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
  p99=$(awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms/, "", v) } else if (v ~ /s$/) { sub(/s/, "", v); v *= 1000 } print v }' <<<"$out")
  local non2xx
  non2xx=$(awk '/Non-2xx/ { print $NF }' <<<"$out")
  [ -z "$non2xx" ] || { echo "non-2xx answers: $non2xx" >&2; exit 1; }
  echo "$rps $p99"
}

printf '%-10s %-16s %12s %10s\n' engine route "req/s" "p99 ms"
for engine in sqlite postgres; do
  case $engine in
    sqlite) export DATABASE_URL="sqlite:$WORK/bench.db" ;;
    postgres)
      name="swb_bench_$$"
      psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name"
      export DATABASE_URL="${PG_ADMIN%/*}/$name" ;;
  esac
  SWITCHBOARD_PII_KEY=$(head -c 32 /dev/urandom | base64) SWITCHBOARD_MARKET__DEFAULT_DIRECTORY_SIZE=0 \
  SWITCHBOARD_ADDR=127.0.0.1:$PORT SWITCHBOARD_RATE_LIMITS__ENABLED=false SWITCHBOARD_BENCH_ROUTES=true \
    RUST_LOG=warn "$BIN" serve >"$WORK/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.1; done
  APP_TOKEN=$(sed -n 's/^  token: \([^ ]*\).*/\1/p' "$WORK/server.log" | head -n1)
  [ -n "$APP_TOKEN" ] || APP_TOKEN=$("$BIN" apps create --name Bench --environment sandbox --json | sed 's/.*"token":"\([^"]*\)".*/\1/')
  ACCOUNT=$(curl -fs -H "Authorization: Bearer $APP_TOKEN" -H 'Content-Type: application/json' \
    -d '{"email":"bench@example.com","first_name":"Ben","last_name":"Ch","phone":"5125550123","date_of_birth":"1980-01-01"}' \
    "http://127.0.0.1:$PORT/v1/app/accounts" | sed 's/.*"uuid":"\([^"]*\)".*"account_number".*/\1/')
  ACCOUNT_TOKEN=$(curl -fs -X POST -H "Authorization: Bearer $APP_TOKEN" \
    "http://127.0.0.1:$PORT/v1/app/accounts/$ACCOUNT/token" | sed 's/.*"token":"\([^"]*\)".*/\1/')
  read -r bare_rps bare_p99 < <(measure "http://127.0.0.1:$PORT/bench/bare")
  read -r acct_rps acct_p99 < <(measure "http://127.0.0.1:$PORT/v1/account" "Authorization: Bearer $ACCOUNT_TOKEN")
  printf '%-10s %-16s %12s %10s\n' "$engine" "bare route" "$bare_rps" "$bare_p99"
  printf '%-10s %-16s %12s %10s\n' "$engine" "GET /v1/account" "$acct_rps" "$acct_p99"
  awk -v a="$acct_rps" -v b="$bare_rps" -v e="$engine" 'BEGIN { printf "%-10s account/bare: %.0f%%\n", e, 100 * a / b }'
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
  [ "$engine" = postgres ] && psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $name"
done
