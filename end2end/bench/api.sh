#!/usr/bin/env bash
# Benchmark: authenticated `GET /v1/account` against a bare axum JSON route in the same server
# and run, on SQLite and on PostgreSQL, with rate limits lifted. Reports requests per second and
# p99 latency (wrk, from Debian's packages). Not a test: run it by hand and read the table.
#
#   end2end/bench/api.sh [seconds=10] [connections=32]
#
# API_BENCH_MODE=instructions counts instead: the server runs under valgrind's callgrind, and
# each route answers BENCH_REQUESTS (default 2000) requests on one kept-alive connection after
# 200 uncounted ones. It reports machine instructions per request, which repeat to within a
# fraction of a percent whatever else the machine runs, where requests per second on two shared
# cores move by a quarter from run to run. The ratio bare/account is the share of the bare
# route's throughput the account read can reach when the server's CPU is what limits both.
#
# SWITCHBOARD_BIN: the server binary to measure (default: this tree's release build, built
# first). BASELINE_BIN: another build measured in the same run, engine by engine, just before
# this one, so that both see the same machine. BENCH_PORT: the port (default 3917).
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${1:-10}
CONNECTIONS=${2:-32}
PORT=${BENCH_PORT:-3917}
PG_ADMIN=${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
MODE=${API_BENCH_MODE:-wrk}
REQUESTS=${BENCH_REQUESTS:-2000}

[ "$MODE" = instructions ] || command -v wrk >/dev/null || { sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd=sudo; $sudo_cmd apt-get install -y -qq wrk >/dev/null; }
if [ -z "${SWITCHBOARD_BIN:-}" ]; then
  cargo build --release -q -p server --bin switchboard
  SWITCHBOARD_BIN=${CARGO_TARGET_DIR:-target}/release/switchboard
fi
WORK=$(mktemp -d)
SERVER=
trap '[ -z "$SERVER" ] || kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT

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

# url, header, n: n requests, one after another, on one kept-alive connection.
send() {
  python3 - "$@" <<'PY'
import http.client, sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
headers = dict([sys.argv[2].split(": ", 1)]) if sys.argv[2] else {}
conn = http.client.HTTPConnection(url.hostname, url.port)
for _ in range(int(sys.argv[3])):
    conn.request("GET", url.path, headers=headers)
    answer = conn.getresponse()
    answer.read()
    assert answer.status == 200, answer.status
PY
}

# url, header -> machine instructions per request, counted by callgrind over $REQUESTS requests
# that follow 200 uncounted ones.
count() {
  send "$1" "${2:-}" 200
  callgrind_control -z "$SERVER" >/dev/null 2>&1
  callgrind_control -i on "$SERVER" >/dev/null 2>&1
  send "$1" "${2:-}" "$REQUESTS"
  callgrind_control -i off "$SERVER" >/dev/null 2>&1
  rm -f "$WORK"/callgrind.out.*
  callgrind_control -d "$SERVER" >/dev/null 2>&1
  local ir
  ir=$(awk '/^totals:/ { print $2; exit }' "$(ls -t "$WORK"/callgrind.out.* | head -n1)")
  echo $((ir / REQUESTS))
}

# engine, label, binary: one server, its two routes, its line of the table.
bench() {
  local engine=$1 label=$2 bin=$3 name=""
  case $engine in
    sqlite) export DATABASE_URL="sqlite:$WORK/bench-$label.db" ;;
    postgres)
      name="swb_bench_$$_$label"
      psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name"
      export DATABASE_URL="${PG_ADMIN%/*}/$name" ;;
  esac
  local under=()
  if [ "$MODE" = instructions ]; then
    # The workers look at the queue once an hour, so that what is counted is the requests.
    under=(valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$WORK/callgrind.out.%p")
    export SWITCHBOARD_JOBS__POLL_INTERVAL_MS=3600000 SWITCHBOARD_JOBS__HEARTBEAT_MS=3600000 \
      SWITCHBOARD_JOBS__DEAD_AFTER_MS=7200000
  fi
  SWITCHBOARD_PII_KEY=$(head -c 32 /dev/urandom | base64) SWITCHBOARD_MARKET__DEFAULT_DIRECTORY_SIZE=0 \
  SWITCHBOARD_ADDR=127.0.0.1:$PORT SWITCHBOARD_RATE_LIMITS__ENABLED=false SWITCHBOARD_BENCH_ROUTES=true \
    RUST_LOG=warn "${under[@]}" "$bin" serve >"$WORK/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 1200); do curl -fs "http://127.0.0.1:$PORT/readyz" >/dev/null && break; sleep 0.1; done
  local app_token account account_token
  app_token=$(sed -n 's/^  token: \([^ ]*\).*/\1/p' "$WORK/server.log" | head -n1)
  [ -n "$app_token" ] || app_token=$("$bin" apps create --name Bench --environment sandbox --json | sed 's/.*"token":"\([^"]*\)".*/\1/')
  account=$(curl -fs -H "Authorization: Bearer $app_token" -H 'Content-Type: application/json' \
    -d '{"email":"bench@example.com","first_name":"Ben","last_name":"Ch","phone":"5125550123","date_of_birth":"1980-01-01"}' \
    "http://127.0.0.1:$PORT/v1/app/accounts" | sed 's/.*"uuid":"\([^"]*\)".*"account_number".*/\1/')
  account_token=$(curl -fs -X POST -H "Authorization: Bearer $app_token" \
    "http://127.0.0.1:$PORT/v1/app/accounts/$account/token" | sed 's/.*"token":"\([^"]*\)".*/\1/')
  if [ "$MODE" = instructions ]; then
    local bare_ir acct_ir
    bare_ir=$(count "http://127.0.0.1:$PORT/bench/bare")
    acct_ir=$(count "http://127.0.0.1:$PORT/v1/account" "Authorization: Bearer $account_token")
  else
    local bare_rps bare_p99 acct_rps acct_p99
    read -r bare_rps bare_p99 < <(measure "http://127.0.0.1:$PORT/bench/bare")
    read -r acct_rps acct_p99 < <(measure "http://127.0.0.1:$PORT/v1/account" "Authorization: Bearer $account_token")
  fi
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
  SERVER=
  [ -z "$name" ] || psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS $name"
  if [ "$MODE" = instructions ]; then
    awk -v e="$engine" -v l="$label" -v b="$bare_ir" -v a="$acct_ir" \
      'BEGIN { printf "%-10s %-9s %14d %14d %7.0f%%\n", e, l, b, a, 100 * b / a }'
  else
    awk -v e="$engine" -v l="$label" -v b="$bare_rps" -v bp="$bare_p99" -v a="$acct_rps" -v ap="$acct_p99" \
      'BEGIN { printf "%-10s %-9s %12.0f %8.2f %12.0f %8.2f %7.0f%%\n", e, l, b, bp, a, ap, 100 * a / b }'
  fi
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$MODE" = instructions ]; then
  printf '%-10s %-9s %14s %14s %8s\n' engine build "bare instr/req" "acct instr/req" "bare/acct"
else
  printf '%-10s %-9s %12s %8s %12s %8s %8s\n' engine build "bare req/s" "p99 ms" "acct req/s" "p99 ms" "acct/bare"
fi
for engine in sqlite postgres; do
  [ -z "${BASELINE_BIN:-}" ] || bench "$engine" baseline "$BASELINE_BIN"
  bench "$engine" this "$SWITCHBOARD_BIN"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
