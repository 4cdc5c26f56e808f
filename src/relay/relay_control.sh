#!/bin/bash
# The control script of a relayed copy (relay_script.h says what it does), run on
# each worker as `exec bash -c SCRIPT tpush-relay KEEP SILENCE`: 1 to keep mtimes,
# the seconds without an order after which it ends. Nothing on that command line
# names anything the script makes. Reports go to stdout; nothing else is printed
# there. Its hops log in with the agent tpush serves on its session
# (SSH_AUTH_SOCK, from sshd): no key file, no edit of authorized_keys.
#
# Everything it makes is the user's alone (umask 077), under names no one can
# guess, made new (never one that was there: a directory by mkdir, a file by the
# shell's own O_EXCL open), the directory's owner and mode checked. A name is
# known before the thing is made, so a signal in between never leaves one behind
# unknown, and only what is the user's and not a link is ever removed (mktemp,
# a child process, could be stopped between making a file and saying its name).
# Whatever ends it (quit, the end of stdin, HUP from the hang-up
# watchdog, INT, TERM, or no order for SILENCE seconds: tpush says "-" every few
# seconds, so a cut network ends it), it stops its own process group (the hop's
# ssh, a store under way), the writers of its FIFOs it recorded (tpush's feeds,
# a sender's login), and removes what it made.
# shellcheck disable=SC2015 # every `A && B || C` here means: C when A or B fails
# shellcheck disable=SC2154 # kind, mode, mtime, size, sum, path: arrays read_setup fills
set -u
shopt -s lastpipe
export LC_ALL=C
umask 077
keep=$1 silence=${2:-45}
# shellcheck disable=SC1007 # empty values, on purpose
d= receiving= ending=
say() { printf '%s\n' "$*"; }

# Stops the process file $1 names ("PID START": START is field 22 of
# /proc/PID/stat, its start time), if that pid is still the same process.
stop_recorded() {
  local pid start stat
  read -r pid start < "$1" 2>/dev/null || return 0
  read -r stat < "/proc/$pid/stat" 2>/dev/null || return 0
  stat=${stat##*) }
  set -f
  # shellcheck disable=SC2086 # the fields after the command's name, split on purpose
  set -- $stat
  set +f
  [ "${20-}" = "$start" ] && kill "$pid" 2>/dev/null
  :
}

# Lets go of every writer still opening or holding FIFO $1 (a sender of an
# attempt that ended, a feed from tpush), and removes it. A reader's end is held
# from before the name goes until after: a writer whose open had found the FIFO
# then completes (and meets the end of the pipe once that end is closed), and one
# that comes later finds no FIFO. Opened and closed at once, a writer that
# opened in between would wait for a reader forever.
release() {
  local hold=
  [ -p "$1" ] || return 0
  exec {hold}<> "$1"
  rm -f "$1"
  stop_recorded "$1.pid"
  stop_recorded "$1.feed"
  rm -f "$1.pid" "$1.feed" "$1.to" "$1.err"
  [ -z "$hold" ] || exec {hold}<&-
}

cleanup() {
  ending=1
  trap '' HUP INT TERM PIPE
  set +f  # the orders' loop turned patterns off: the FIFOs are found with one
  kill -s TERM -- "-$$" 2>/dev/null
  [ -n "$receiving" ] && wait "$receiving" 2>/dev/null
  if [ -n "$d" ] && [ -d "$d" ] && [ ! -L "$d" ] && [ -O "$d" ]; then
    for f in "$d"/in.*; do
      case $f in *.pid | *.feed) ;; *) release "$f" ;; esac
    done
    rm -rf -- "$d"
  fi
}
# Ends the shell with status $1, once. The watchdog's HUP and a TERM often come
# together, and bash cuts an EXIT trap short at an `exit` run inside it (a
# signal's trap running while the EXIT trap does): every way out goes through
# here, so a second signal finds `ending` set and lets the EXIT trap finish.
end_with() {
  [ -n "$ending" ] && return
  ending=1
  exit "$1"
}
trap cleanup EXIT
trap 'end_with 129' HUP
trap 'end_with 130' INT
trap 'end_with 143' TERM
trap 'end_with 141' PIPE
fail() { say "failed - $*"; end_with 1; }

# Sets the variable $1 to 16 random hex digits: the shell's own (bash 5.1's
# SRANDOM where there is one), no child process.
random_word() {
  printf -v "$1" '%08x%08x' "${SRANDOM:-$((RANDOM << 15 | RANDOM))}" "${SRANDOM:-$((RANDOM << 15 | RANDOM))}"
}

# Setup: LENGTH, newline, then LENGTH bytes: the hop's receiving command
# (relay_hop.sh, one line) and the manifest, each field ended by a NUL.
IFS= read -r len || fail "no setup"
base=${TMPDIR:-/tmp}
# Only the characters the forced command and the feeds may hold unquoted.
case $base in
  /*[!A-Za-z0-9._/-]* | [!/]* | *..*) fail "TMPDIR is $base: it must be a plain absolute path" ;;
esac
for _ in 1 2 3 4 5 6 7 8; do
  random_word r
  d=$base/tpush-relay.$r
  mkdir -m 700 -- "$d" 2> /dev/null && break
  [ -e "$d" ] || [ -L "$d" ] || fail "cannot make a directory in $base: $(mkdir -m 700 -- "$d" 2>&1)"
  d=
done
[ -n "$d" ] || fail "cannot make a directory in $base: every name tried was taken"
[ -d "$d" ] && [ ! -L "$d" ] && [ -O "$d" ] && [ "$(stat -c %a -- "$d")" = 700 ] || fail "$d is not a private directory of ours"
head -c "$len" > "$d/setup"
[ "$(stat -c %s "$d/setup")" = "$len" ] || fail "setup cut short"
n=0
read_setup() {
  local count
  IFS= read -r -d '' hop_command && IFS= read -r -d '' count || return 1
  while [ "$n" -lt "$count" ]; do
    IFS= read -r -d '' "kind[n]" && IFS= read -r -d '' "mode[n]" && IFS= read -r -d '' "mtime[n]" &&
      IFS= read -r -d '' "size[n]" && IFS= read -r -d '' "sum[n]" && IFS= read -r -d '' "path[n]" || return 1
    n=$((n + 1))
  done
}
read_setup < "$d/setup" || fail "setup unreadable"
rm -f -- "$d/setup"
case $hop_command in *"'"*) fail "setup: the hop's command holds a quote" ;; esac
mkfifo "$d/in.1" "$d/in.2" "$d/in.3" "$d/fwd" || fail "cannot write $d"
say "ready $d"

# SHA-256 of the file $1: OpenSSL's where there is one (several times faster
# than coreutils' on CPUs with SHA instructions), else sha256sum.
if command -v openssl > /dev/null 2>&1; then
  digest() { openssl dgst -sha256 -r < "$1"; }
else
  digest() { sha256sum < "$1"; }
fi

# Makes a temporary file of its own in directory $1 for a file named $2, and
# sets tmp to it: made new by the shell itself (noclobber: O_EXCL), so neither a
# file nor a link that was there is ever written through, and the user's alone.
# Fails, the reason in $d/err, when the directory takes no new file.
make_temp() {
  local cand r
  for _ in 1 2 3 4 5 6 7 8; do
    random_word r
    cand=$1/.$2.tpush-$r
    tmp=$cand
    set -C
    if : 2>| "$d/err" > "$cand"; then
      set +C
      return 0
    fi
    set +C
    tmp=
    [ -e "$cand" ] || [ -L "$cand" ] || return 1
  done
  echo "every name tried was taken" >| "$d/err"
  return 1
}

# Reports entry $1 of the manifest failed, with the first line of the error file
# $2 (else $d/err), and returns 1.
failed_at() {
  say "failed $1 $(head -n 1 "${2:-$d/err}")"
  return 1
}

# Reports the attempt stored: its milliseconds since it started.
say_stored() { say stored $((($(date +%s%N) - started) / 1000000)); }

# Makes the parents of file $1 of the manifest, as they were made: with umask
# 022, and its temporary file (make_temp; tmp names it).
prepare_file() {
  local p=${path[$1]} dir
  dir=${p%/*}
  [ "$dir" = "$p" ] && dir=.
  [ -z "$dir" ] && dir=/
  (umask 022 && mkdir -p -- "$dir") 2>"$d/err" && make_temp "$dir" "${p##*/}" || failed_at "$1"
}

# Renames file $1's temporary file over its target once its size and SHA-256
# are the manifest's, with the manifest's mode (and mtime, with KEEP).
place_file() {
  local got
  got=$(stat -c %s -- "$tmp")
  [ "$got" = "${size[$1]}" ] || { say "short $1 $got"; return 2; }
  got=$(digest "$tmp")
  [ "${got%% *}" = "${sum[$1]}" ] || { say "mismatch $1"; return 2; }
  chmod "${mode[$1]}" -- "$tmp" 2>"$d/err" &&
    { [ "$keep" = 0 ] || touch -m -d "@${mtime[$1]}" -- "$tmp" 2>"$d/err"; } &&
    mv -f -T -- "$tmp" "${path[$1]}" 2>"$d/err" || { failed_at "$1"; return; }
  tmp=
}

# Stores the stream on stdin: the manifest's files, in order, each first in a
# temporary file of its own beside the target, renamed over the target once
# checked (place_file).
store() {
  local i=0
  while [ "$i" -lt "$n" ]; do
    if [ "${kind[i]}" = d ]; then
      if [ ! -d "${path[i]}" ]; then
        (umask 022 && mkdir -p -- "${path[i]}") 2>"$d/err" && chmod "${mode[i]}" -- "${path[i]}" 2>"$d/err" || { failed_at "$i"; return; }
      fi
    else
      prepare_file "$i" || return 1
      head -c "${size[i]}" > "$tmp" 2>"$d/err" || { failed_at "$i"; return; }
      place_file "$i" || return
    fi
    i=$((i + 1))
  done
  say_stored
}

# Attempt $1 of a copy of one file, which the writer of its FIFO stores itself
# (relay_write.sh), passing the bytes on ($2: 1) or not (empty): the temporary
# file's name goes in $in.to before the FIFO is opened, and the writer's end is
# the FIFO's end of file; then the file is checked and placed as store() does.
store_direct() {
  prepare_file 0 || return 1
  printf '%s\n%s\n' "$2" "$tmp" > "$in.to"
  IFS= read -r _ < "$in"
  rm -f -- "$in.to"
  [ -s "$in.err" ] && { failed_at 0 "$in.err"; return; }
  place_file 0 || return
  say_stored
}

# go ATTEMPT - | go ATTEMPT ADDRESS PORT USER ALIAS KEYTYPE KEY DIRECTORY IDTYPE IDKEY:
# receive once from the attempt's own FIFO, passing the bytes on to the worker
# named (if any) as they arrive, into its FIFO in its DIRECTORY; its host key is
# the one given, and no other; the login is the user's, with the identity given,
# signed by the agent tpush serves (SSH_AUTH_SOCK). Runs in
# the background, so orders (and tpush's "-") are read meanwhile; a temporary
# file of a store cut short is removed however it ends.
receive() {
  local in=$d/in.$1 started hop=
  tmp=
  # The hang-up watchdog's HUP and the cleanup's TERM come together: the first
  # ends the receiver, the second must not end its EXIT trap before the rm
  # (end_with; the caller sets `ending` when this returns).
  trap 'ending=1; trap "" HUP INT TERM PIPE; [ -n "$tmp" ] && [ -O "$tmp" ] && [ ! -L "$tmp" ] && rm -f -- "$tmp"' EXIT
  trap 'end_with 143' TERM
  trap 'end_with 129' HUP
  trap 'end_with 141' PIPE  # a report to a tpush that is gone: without it, the temporary file would stay
  started=$(date +%s%N)
  [ -p "$in" ] || { say "failed - no attempt $1"; return; }
  if [ "$2" != - ]; then
    printf '%s %s %s\n' "$5" "$6" "$7" > "$d/known"
    printf '%s %s\n' "$9" "${10}" > "$d/id.pub"
    (
      [ -n "${SSH_AUTH_SOCK-}" ] || { say "hop 255 sshd forwarded no agent to the relay (AllowAgentForwarding no?)"; exit; }
      ssh -F /dev/null -p "$3" -l "$4" -i "$d/id.pub" -o IdentitiesOnly=yes \
        -o BatchMode=yes -o UserKnownHostsFile="$d/known" -o GlobalKnownHostsFile=/dev/null \
        -o StrictHostKeyChecking=yes -o HostKeyAlias="$5" -o ConnectTimeout=10 \
        -o ServerAliveInterval=5 -o ServerAliveCountMax=3 -o LogLevel=ERROR \
        -o Ciphers=^aes128-gcm@openssh.com,aes256-gcm@openssh.com \
        -- "$2" "exec /bin/sh -c '$hop_command' tpush-relay $1 $8" \
        > /dev/null 2> "$d/hop"
      status=$?
      [ "$status" = 0 ] || say "hop $status $(tail -n 1 "$d/hop")"
    ) < "$d/fwd" &
    hop=$!
  fi
  if [ "$n" = 1 ] && [ "${kind[0]}" = f ] && [ "${path[0]}" = "${path[0]%%$'\n'*}" ]; then
    store_direct "$1" "${hop:+1}"
  elif [ -n "$hop" ]; then
    tee -p "$d/fwd" < "$in" | store
  else
    store < "$in"
  fi
  [ -z "$hop" ] || wait "$hop"
  release "$in"
  say end
}

set -f  # an order's words are never file name patterns
while :; do
  IFS= read -r -t "$silence" cmd || {
    status=$?
    [ "$status" -gt 128 ] && end_with 124  # no word from tpush for $silence s: the link is gone
    end_with 0                             # the end of stdin: tpush closed the channel
  }
  # shellcheck disable=SC2086 # an order's words, split on purpose (set -f above)
  set -- $cmd
  case ${1-} in
    go)
      shift
      [ -n "$receiving" ] && wait "$receiving"
      { receive "$@"; ending=1; } &
      receiving=$!
      ;;
    quit)
      [ -n "$receiving" ] && wait "$receiving"
      receiving=
      end_with 0
      ;;
  esac
done
