#!/usr/bin/env bash
# A short tour of tpush against 8 local "hosts": one throwaway OpenSSH sshd on a
# free high port that answers on 127.0.1.1 .. 127.0.1.8 (tests/farm/farm.py).
# Used by `make demo`.  Needs openssh-server; the farm is always stopped on exit.
#
#   TPUSH_BIN=build/tpush scripts/demo.sh      (TPUSH_BIN defaults to build/tpush)

set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TPUSH_BIN=${TPUSH_BIN:-$repo/build/tpush}
PYTHON=${PYTHON:-/usr/bin/python3}   # Debian's python3 (root's `python3` may be a pyenv shim)

if [[ ! -x $TPUSH_BIN ]]; then
  echo "demo: $TPUSH_BIN not found or not executable; build it first (make)" >&2
  exit 1
fi
if [[ ! -x /usr/sbin/sshd ]]; then
  echo "demo: /usr/sbin/sshd not found; install openssh-server" >&2
  exit 1
fi

farm_dir=$(mktemp -d "${TMPDIR:-/tmp}/tpush-demo.XXXXXX")
cleanup() {
  pkill -f -- "--persist-master $farm_dir/" 2>/dev/null || true  # if a step was cut short
  "$PYTHON" "$repo/tests/farm/farm.py" stop "$farm_dir" || true
  rm -rf "$farm_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$PYTHON" "$repo/tests/farm/farm.py" start "$farm_dir" --workers 8

# The farm's fake HOME holds the client key and a known_hosts for every worker.
# shellcheck source=/dev/null
source "$farm_dir/env"
unset SSH_AUTH_SOCK
export USER=${USER:-$(id -un)}
# Persist masters of the demo live in the demo's directory (beside the farm's own
# run/, the workers' runtime directory); the steps below choose --persist themselves
# (a run typed at a terminal would otherwise keep its sessions).
export XDG_RUNTIME_DIR=$farm_dir/client-run TPUSH_PERSIST=0
mkdir -m 700 "$XDG_RUNTIME_DIR"
HOSTS=$TPUSH_FARM_HOSTS
PORT=$TPUSH_FARM_PORT

tpush() { "$TPUSH_BIN" "$@"; }

bold=''; plain=''
if [[ -t 1 && -z ${NO_COLOR:-} ]]; then bold=$'\e[1m'; plain=$'\e[0m'; fi

# step "explanation" 'command text' — print the command, run it, show its exit code.
step() {
  printf '\n%s# %s%s\n' "$bold" "$1" "$plain"
  printf '%s$ %s%s\n' "$bold" "$2" "$plain"
  local rc=0
  eval "$2" || rc=$?
  printf '%s(exit %d)%s\n' "$bold" "$rc" "$plain"
}

echo
echo "8 workers: 127.0.1.1 .. 127.0.1.8, port $PORT; HOSTS=$HOSTS"
echo "HOME=$HOME (fake home with the farm's key and known_hosts)"

step "tpush version (and the libssh2 it uses)" \
  'tpush --version'

step "every worker runs the command; each line is prefixed with the worker's label" \
  'tpush -H "$HOSTS" "uname -r; nproc"'

step "a host expression with a range, a default port and user; output sorted by label" \
  'tpush -w "127.0.1.[1-8]" -p "$PORT" -l "$USER" '\''set -- $SSH_CONNECTION; echo "worker $TPUSH_WORKER of $TPUSH_NUM_WORKERS answers on $3"'\'' | sort'

step "labels by index instead of host name, and remote stderr kept on stderr" \
  'tpush --label index -w "127.0.1.[1-3]:$PORT" "echo to stdout; echo to stderr >&2"'

step "raw output without prefixes (-N)" \
  'tpush -N -w "127.0.1.[1-3]:$PORT" "echo \$TPUSH_WORKER"'

step "some commands fail: the summary lists them and tpush exits 1" \
  'tpush -H "$HOSTS" "test \$TPUSH_WORKER -lt 6 || exit 3"'

step "one host is down (nothing listens on 127.0.9.9:1): exit 255, the others still run; -S lists everyone" \
  'tpush -S --connect-timeout 3 -w "127.0.1.[1-3]:$PORT,127.0.9.9:1" "echo up"'

step "--persist: the first run keeps the sessions in a background tpush; the next run opens a channel on each, no login" \
  'tpush --persist 1m -H "$HOSTS" true; time tpush --persist 1m -H "$HOSTS" "echo again" | sort | head -3'

step "tpush disconnect ends that background tpush and lists the sessions it held" \
  'tpush -H "$HOSTS" disconnect'

echo
echo "demo done; stopping the farm"
