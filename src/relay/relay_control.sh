#!/bin/bash
# The control script of a relayed copy (relay_script.h says what it does), run on
# each worker as `exec bash -c SCRIPT tpush-relay ID KEEP AUTHORIZED_KEYS`: ID, 1
# to keep mtimes, the authorized_keys file ("" = ~/.ssh/authorized_keys). Reports
# go to stdout; nothing else is printed there.
# shellcheck disable=SC2015 # every `A && B || C` here means: C when A or B fails
set -u
shopt -s lastpipe
export LC_ALL=C
id=$1 keep=$2 ak_arg=${3-}
# shellcheck disable=SC2086 # the connection's four words, split on purpose
set -- $SSH_CONNECTION
d=/tmp/tpush-relay-$id/$3
ak=${ak_arg:-$HOME/.ssh/authorized_keys}
akdir=${ak%/*}
tag=tpush-relay-$id
# shellcheck disable=SC1007 # empty values, on purpose
hop= tmp= added= made_ak= made_dir= nl_added=
say() { printf '%s\n' "$*"; }
locked() {
  local status=0
  exec 9<"$akdir" && flock 9
  "$@" || status=$?
  exec 9<&-
  return $status
}
unauthorize() {
  if [ -n "$made_ak" ]; then
    grep -qvF " $tag" "$ak" 2>/dev/null || rm -f "$ak"
  fi
  if [ -f "$ak" ]; then
    sed -i --follow-symlinks "/ $tag\$/d" "$ak"
    [ -n "$nl_added" ] && [ -s "$ak" ] && truncate -s -1 "$ak"
  fi
  [ -n "$made_dir" ] && rmdir "$akdir" 2>/dev/null
  :
}
cleanup() {
  trap '' HUP INT TERM PIPE
  [ -n "$hop" ] && kill "$hop" 2>/dev/null
  [ -n "$tmp" ] && rm -f -- "$tmp"
  [ -n "$added" ] && locked unauthorize
  for f in "$d"/in.*; do release "$f"; done
  rm -rf "$d"
  rmdir "/tmp/tpush-relay-$id" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 141' PIPE
fail() { say "failed - $*"; exit 1; }

authorize() {
  if [ ! -e "$ak" ]; then
    made_ak=1
    : > "$ak" && chmod 600 "$ak" || return 1
  elif [ -s "$ak" ] && [ -n "$(tail -c 1 "$ak")" ]; then
    nl_added=1
    printf '\n' >> "$ak" || return 1
  fi
  grep -qF " $tag" "$ak" || printf '%s\n' "$1" >> "$ak"
}

# Setup: LENGTH, newline, then LENGTH bytes: the key, the
# authorized_keys line and the manifest, each field ended by a NUL.
IFS= read -r len || fail "no setup"
# shellcheck disable=SC2174 # /tmp exists: the one directory -p may make is the one -m is for
mkdir -p -m 700 "/tmp/tpush-relay-$id" && mkdir -m 700 "$d" || fail "cannot create $d"
umask 077
head -c "$len" > "$d/setup"
[ "$(stat -c %s "$d/setup")" = "$len" ] || fail "setup cut short"
n=0
read_setup() {
  local count
  IFS= read -r -d '' key && IFS= read -r -d '' line && IFS= read -r -d '' count || return 1
  while [ "$n" -lt "$count" ]; do
    IFS= read -r -d '' "kind[n]" && IFS= read -r -d '' "mode[n]" && IFS= read -r -d '' "mtime[n]" &&
      IFS= read -r -d '' "size[n]" && IFS= read -r -d '' "sum[n]" && IFS= read -r -d '' "path[n]" || return 1
    n=$((n + 1))
  done
}
read_setup < "$d/setup" || fail "setup unreadable"
line=${line//@EXPIRY@/$(date -d '+1 hour' +%Y%m%d%H%M)}
printf '%s' "$key" > "$d/key" && mkfifo "$d/in.1" "$d/in.2" "$d/in.3" "$d/fwd" || fail "cannot write $d"
if [ ! -d "$akdir" ]; then
  mkdir -m 700 "$akdir" && made_dir=1 || fail "cannot create $akdir"
fi
added=1
locked authorize "$line" || fail "cannot add the relay key to $ak"
umask 022
say ready

# SHA-256 of the file $1: OpenSSL's where there is one (several times faster
# than coreutils' on CPUs with SHA instructions), else sha256sum.
if command -v openssl > /dev/null 2>&1; then
  digest() { openssl dgst -sha256 -r < "$1"; }
else
  digest() { sha256sum < "$1"; }
fi

# Stores the stream on stdin: the manifest's files, in order.
# shellcheck disable=SC2154 # kind, mode, mtime, size, sum, path: arrays read_setup fills
store() {
  local i=0 p dir got
  while [ "$i" -lt "$n" ]; do
    p=${path[i]}
    if [ "${kind[i]}" = d ]; then
      if [ ! -d "$p" ]; then
        mkdir -p -- "$p" 2>"$d/err" && chmod "${mode[i]}" -- "$p" 2>"$d/err" || { say "failed $i $(head -n 1 "$d/err")"; return 1; }
      fi
    else
      dir=${p%/*}
      [ "$dir" = "$p" ] && dir=.
      [ -z "$dir" ] && dir=/
      mkdir -p -- "$dir" 2>"$d/err" || { say "failed $i $(head -n 1 "$d/err")"; return 1; }
      tmp=$dir/.${p##*/}.tpush-tmp-$id-$$
      head -c "${size[i]}" > "$tmp" 2>"$d/err" || { say "failed $i $(head -n 1 "$d/err")"; return 1; }
      got=$(stat -c %s -- "$tmp")
      [ "$got" = "${size[i]}" ] || { say "short $i $got"; return 2; }
      got=$(digest "$tmp")
      [ "${got%% *}" = "${sum[i]}" ] || { say "mismatch $i"; return 2; }
      chmod "${mode[i]}" -- "$tmp" 2>"$d/err" &&
        { [ "$keep" = 0 ] || touch -m -d "@${mtime[i]}" -- "$tmp" 2>"$d/err"; } &&
        mv -f -T -- "$tmp" "$p" 2>"$d/err" || { say "failed $i $(head -n 1 "$d/err")"; return 1; }
      tmp=
    fi
    i=$((i + 1))
  done
  say stored $((($(date +%s%N) - started) / 1000000))
}

# Lets go of any writer still opening or holding FIFO $1 (a sender of an
# attempt that ended), and removes it.
release() {
  [ -p "$1" ] || return 0
  : <> "$1"
  rm -f "$1" "$1.pid"
}

# go ATTEMPT - | go ATTEMPT ADDRESS PORT USER ALIAS KEYTYPE KEY: receive once
# from the attempt's own FIFO, passing the bytes on to the worker named (if
# any) as they arrive; its host key is the one given, and no other.
receive() {
  local in=$d/in.$1 started
  started=$(date +%s%N)
  [ -p "$in" ] || { say "failed - no attempt $1"; return; }
  if [ "$2" = - ]; then
    store < "$in"
  else
    printf '%s %s %s\n' "$5" "$6" "$7" > "$d/known"
    (
      ssh -F /dev/null -p "$3" -l "$4" -i "$d/key" -o IdentitiesOnly=yes -o IdentityAgent=none \
        -o BatchMode=yes -o UserKnownHostsFile="$d/known" -o GlobalKnownHostsFile=/dev/null \
        -o StrictHostKeyChecking=yes -o HostKeyAlias="$5" -o ConnectTimeout=10 \
        -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -o LogLevel=ERROR \
        -o Ciphers=^aes128-gcm@openssh.com,aes256-gcm@openssh.com -- "$2" "tpush-relay $1" \
        < "$d/fwd" > /dev/null 2> "$d/hop"
      status=$?
      [ "$status" = 0 ] || say "hop $status $(tail -n 1 "$d/hop")"
    ) &
    hop=$!
    tee -p "$d/fwd" < "$in" | store
    wait "$hop"
    hop=
  fi
  release "$in"
  say end
}

set -f  # an order's words are never file name patterns
while IFS= read -r cmd; do
  # shellcheck disable=SC2086 # an order's words, split on purpose (set -f above)
  set -- $cmd
  case ${1-} in
    go) shift; receive "$@" ;;
    quit) exit 0 ;;
  esac
done
