#!/usr/bin/env bash
# The schema-driven fuzzer of the test command: schemathesis (pinned, installed by
# `scripts/setup.sh --test` into target/schemathesis) over every operation of the server's own
# `/v1/openapi.json`, the app routes with an AppToken, the account routes with an AccountToken and
# the test-mode processor (and health) with a publishable key, against a server of its own: the
# given binary, started from its folder on a fresh SQLite database (a small address directory)
# with rate limits lifted (so that every generated request reaches its handler).
# Seeded and bounded, with every check: it fails on any 5xx, on any answer its operation does
# not document (status, content type, body shape), on any request the schema forbids that the
# server accepts and on any request the schema allows that the server refuses (400, 422...; the
# few rules that hang on the clock or on a card are named in end2end/schemathesis.toml). The
# flow events are fuzzed with a flow session's token as well, the one kind that records them.
#
#   end2end/fuzz.sh [BIN]    (default target/release/switchboard)
#
# FUZZ_PORT (default 3000), FUZZ_EXAMPLES (generated cases per operation and mode, default 40),
# FUZZ_SEED (default 1), FUZZ_MAX_TIME (seconds for each of the app's and the account's runs,
# default 75; the sandbox clock's, the flow session's and the processor's take 20, the demo
# account's 30).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$(realpath "${1:-target/release/switchboard}")
PORT=${FUZZ_PORT:-3000}
EXAMPLES=${FUZZ_EXAMPLES:-40}
SEED=${FUZZ_SEED:-1}
MAX_TIME=${FUZZ_MAX_TIME:-75}
ST=$ROOT/target/schemathesis/bin/st
BASE=http://127.0.0.1:$PORT

[ -x "$ST" ] || { echo "schemathesis is missing: run scripts/setup.sh --test" >&2; exit 1; }
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
  echo "Port $PORT is taken: stop the server running there first." >&2
  exit 1
fi

WORK=$(mktemp -d)
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

export DATABASE_URL="sqlite:$WORK/fuzz.db"
(cd "$(dirname "$BIN")" && exec env -u LEPTOS_OUTPUT_NAME -u LEPTOS_SITE_ROOT \
  SWITCHBOARD_LOG_FORMAT=human RUST_LOG=warn \
  SWITCHBOARD_RATE_LIMITS__ENABLED=false SWITCHBOARD_RATE_LIMITS__FAILED_AUTH_PER_MINUTE=0 \
  SWITCHBOARD_MARKET__DEFAULT_DIRECTORY_SIZE=5000 \
  "$BIN" serve --addr "127.0.0.1:$PORT") >"$WORK/server.log" 2>&1 &
server=$!
for _ in $(seq 1 600); do curl -fs "$BASE/readyz" >/dev/null && break; sleep 0.2; done
curl -fs "$BASE/readyz" >/dev/null || { grep -v "token:" "$WORK/server.log" >&2; exit 1; }

json_field() { python3 -c "import json, sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }
APP_TOKEN=$("$BIN" apps create --name Fuzz --environment sandbox --json | json_field token)
new_account() { # app token, e-mail -> the account's uuid
  curl -fs -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
    -d "{\"email\":\"$2\",\"first_name\":\"Fay\",\"last_name\":\"Zed\"}" "$BASE/v1/app/accounts" |
    json_field uuid
}
token_of() { # app token, account uuid -> an AccountToken
  curl -fs -X POST -H "Authorization: Bearer $1" "$BASE/v1/app/accounts/$2/token" |
    json_field token
}
ACCOUNT_TOKEN=$(token_of "$APP_TOKEN" "$(new_account "$APP_TOKEN" fuzz@example.com)")
PUBLISHABLE_KEY=$(curl -fs -X POST -H "Authorization: Bearer $ACCOUNT_TOKEN" \
  "$BASE/v1/account/billing/payment-session" | json_field publishable_key)
# Moving an account's clock runs every job of the account that falls due on the way, its
# webhook deliveries too: to each of the hundreds of endpoints the app's run registers, with
# their retries over the years moved. The sandbox's clock, demo data and simulations are fuzzed
# on accounts of another app, which has no endpoint. The clock moves an account of its own,
# which never enrolls: a move of years runs only what such an account has due. Demo data and
# simulations act on another, seeded once (active for a few cycles); a simulation never moves
# the clock past the present. So no request has years of work to do.
SANDBOX_APP_TOKEN=$("$BIN" apps create --name "Fuzz sandbox" --environment sandbox --json |
  json_field token)
CLOCK_TOKEN=$(token_of "$SANDBOX_APP_TOKEN" "$(new_account "$SANDBOX_APP_TOKEN" clock@example.com)")
DEMO_TOKEN=$(token_of "$SANDBOX_APP_TOKEN" "$(new_account "$SANDBOX_APP_TOKEN" demo@example.com)")
curl -fs -X POST -H "Authorization: Bearer $DEMO_TOKEN" "$BASE/v1/account/sandbox/seed-demo-data" \
  >/dev/null
# A flow session: its link, opened, names the session's token in the fragment of where it sends
# the page.
FLOW_LINK=$(curl -fs -H "Authorization: Bearer $SANDBOX_APP_TOKEN" -H 'Content-Type: application/json' \
  -d '{"scope":"enrollment"}' \
  "$BASE/v1/app/accounts/$(new_account "$SANDBOX_APP_TOKEN" flow@example.com)/flow-login" |
  json_field login_link)
FLOW_TOKEN=$(curl -fs -o /dev/null -w '%{redirect_url}' "$BASE/flow/login?${FLOW_LINK#*\?}" |
  sed -n 's/.*#session=//p')
[ -n "$FLOW_TOKEN" ] || { echo "The flow link opened no session" >&2; exit 1; }

status=0
run() { # name, token, path regex, seconds
  echo "--- $1"
  # From the scratch folder: schemathesis keeps a cache in its working directory.
  (cd "$WORK" && SCHEMATHESIS_HOOKS="$ROOT/end2end/fuzz_hooks.py" \
    "$ST" --config-file "$ROOT/end2end/schemathesis.toml" run "$BASE/v1/openapi.json" --url "$BASE" \
    --header "Authorization: Bearer $2" --include-path-regex "$3" --checks all \
    --max-examples "$EXAMPLES" --seed "$SEED" --max-time "$4" \
    --request-timeout 120 --workers 1 --generation-database none \
    --suppress-health-check all --output-truncate true --warnings off) \
    || status=1
}
run "AppToken: the app's routes" "$APP_TOKEN" '^/v1/app' "$MAX_TIME"
run "AccountToken: the account's routes" "$ACCOUNT_TOKEN" \
  '^/v1/account/(?!sandbox/(advance-clock|seed-demo-data|simulate)$)' "$MAX_TIME"
run "AccountToken of an account that never enrolls: the sandbox's clock" "$CLOCK_TOKEN" \
  '^/v1/account/sandbox/advance-clock$' 20
run "AccountToken of a demo account: demo data and simulations" "$DEMO_TOKEN" \
  '^/v1/account/sandbox/(seed-demo-data|simulate)$' 30
run "Flow session: the flow's events" "$FLOW_TOKEN" '^/v1/account/flow-events$' 20
run "Publishable key: the processor and health" "$PUBLISHABLE_KEY" '^/(processor|healthz|readyz)' 20

if [ "$status" != 0 ]; then
  echo "The fuzzed server's log ends with:" >&2
  grep -v "token:" "$WORK/server.log" | tail -n 40 >&2
fi
exit "$status"
