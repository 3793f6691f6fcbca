#!/usr/bin/env bash
# The card processor's stand-in for the tests: a stateful copy of its REST API that also serves
# a stand-in of its browser script under /js.stripe.com/v3/. Pinned, in a venv of its own under
# target/, listening on 127.0.0.1:$LOCALSTRIPE_PORT (default 8420).
#
#   end2end/localstripe.sh install   # installs it (once; again when the pinned version changes)
#   end2end/localstripe.sh start     # installs if needed, starts it unless it already answers
#   end2end/localstripe.sh stop      # stops the one this script started
#   end2end/localstripe.sh status    # exit 0 when it answers
#
# Its state lives in memory only: a restart forgets every customer and payment method.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=1.15.10
PORT="${LOCALSTRIPE_PORT:-8420}"
VENV=target/localstripe
PIDFILE="$VENV/localstripe-$PORT.pid"
LOG="$VENV/localstripe-$PORT.log"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# The stand-in's browser script, and the line that marks it as made to define only `Stripe`.
script() { compgen -G "$VENV/lib/python3*/site-packages/localstripe/localstripe-v3.js" | head -n 1; }
SCOPED='// Scoped by end2end/localstripe.sh: only `Stripe` is global.'

pinned() {
  # The pinned version's metadata folder (not `pip show | grep -q`, whose early exit fails the
  # pipe and so reinstalled it on every run).
  [ -x "$VENV/bin/localstripe" ] \
    && compgen -G "$VENV/lib/python3*/site-packages/localstripe-$VERSION.dist-info" >/dev/null
}

installed() { pinned && [ "$(head -n 1 "$(script)")" = "$SCOPED" ]; }

# The stand-in's browser script declares its card component as a top-level `class Element`,
# which in a classic script shadows the DOM's `Element` for every script of the page, the
# flows' WASM glue too (its `instanceof Element` checks then fail and hydration stops). The
# processor's real script defines only its `Stripe` global: so does the stand-in's, once its
# body runs in a function of its own (where `Stripe = ...` still sets the global).
scope_script() {
  local js
  js=$(script)
  [ "$(head -n 1 "$js")" = "$SCOPED" ] && return 0
  { printf '%s\n(function () {\n' "$SCOPED"; cat "$js"; printf '\n})();\n'; } >"$js.scoped"
  mv "$js.scoped" "$js"
}

answers() {
  # Any HTTP answer will do: the API answers 401 without a key.
  curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/v1/customers"
}

install() {
  installed && return 0
  if ! pinned; then
    say "Installing the card processor's stand-in (localstripe $VERSION) into $VENV"
    python3 -c "import venv, ensurepip" 2>/dev/null || {
      echo "python3-venv is missing (apt-get install python3-venv)" >&2
      exit 1
    }
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "localstripe==$VERSION"
  fi
  scope_script
}

start() {
  install
  if answers; then
    return 0
  fi
  say "Starting the card processor's stand-in on 127.0.0.1:$PORT"
  # setsid: the test command's Ctrl-C or exit must not leave it half-stopped.
  setsid "$VENV/bin/localstripe" --port "$PORT" >"$LOG" 2>&1 < /dev/null &
  echo $! >"$PIDFILE"
  for _ in $(seq 1 60); do
    answers && return 0
    sleep 0.5
  done
  echo "The card processor's stand-in did not start; its log ($LOG) ends with:" >&2
  tail -n 20 "$LOG" >&2 || true
  exit 1
}

stop() {
  [ -f "$PIDFILE" ] || return 0
  local pid
  pid=$(cat "$PIDFILE")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  rm -f "$PIDFILE"
}

case "${1:-start}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) answers ;;
  *)
    echo "usage: $0 install|start|stop|status" >&2
    exit 2
    ;;
esac
