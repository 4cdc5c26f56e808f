# shellcheck shell=sh
# `tpush kill --tpu`: stops what holds the TPU devices, then removes the lock
# files; after the lines tpu_kill_script() writes (M, all_users, client, sig,
# ticks, esc, devices, lockfiles), process_library.sh and process_stop.sh.
# holders: the holders of the devices in "$@": lsof, else fuser, else every
# /proc/*/fd link.
# shellcheck disable=SC2154 # devices, lockfiles, ticks: set by the lines tpu_kill_script() writes first

holders() {
  [ $# -gt 0 ] || return 0
  if [ -z "${TPUSH_PROC_SCAN-}" ] && command -v lsof >/dev/null 2>&1; then
    lsof -w -t "$@" 2>/dev/null
  elif [ -z "${TPUSH_PROC_SCAN-}" ] && command -v fuser >/dev/null 2>&1; then
    # shellcheck disable=SC2020 # blanks and tabs alike become newlines, on purpose
    fuser "$@" 2>/dev/null | tr -s ' \t' '\n\n' | tr -cd '0-9\n'
  else
    devs_=$(printf '%s\n' "$@")
    # shellcheck disable=SC2012 # fd numbers and device paths, listed by one process (no readlink per fd)
    ls -l /proc/[0-9]*/fd 2>/dev/null | TPUSH_DEVS=$devs_ awk '
      BEGIN { n = split(ENVIRON["TPUSH_DEVS"], d, "\n"); for (k = 1; k <= n; k++) dev[d[k]] = 1 }
      /^\/proc\/[0-9]+\/fd:$/ { split($0, a, "/"); pid = a[3]; next }
      { i = index($0, " -> "); if (i && (substr($0, i + 4) in dev)) print pid }'
  fi | sort -un
}
held_targets() {
  targets=
  for p in $(holders "$@"); do consider "$p"; done
}
ancestors
client_ancestors
set --
for f in $devices; do [ -e "$f" ] && set -- "$@" "$f"; done
if [ $# -eq 0 ]; then
  echo "no TPU devices here ($devices)"
else
  held_targets "$@"
  if [ -z "$targets" ]; then
    echo "no process holds the TPU ($# devices)"
  else
    stop_targets
    i=0
    while held_targets "$@"; [ -n "$targets" ] && [ "$i" -lt "$ticks" ]; do
      sleep 0.5
      i=$((i + 5))
    done
    if [ -n "$targets" ]; then
      # shellcheck disable=SC2034 # s_, the start time, read so that c_ is the command alone
      while read -r p_ s_ c_; do
        [ -n "$p_" ] && printf 'still held %s %.200s\n' "$p_" "$c_"
      done <<EOF_
$targets
EOF_
      echo "TPU still in use: lock files left in place"
      exit 1
    fi
  fi
fi
removed=0
for l in $lockfiles; do
  [ -e "$l" ] || [ -L "$l" ] || continue
  if err_=$(rm -rf -- "$l" 2>&1) && ! [ -e "$l" ] && ! [ -L "$l" ]; then
    echo "removed $l"
    removed=1
  else
    echo "could not remove $l: ${err_##*: } (try --sudo)"
    status=1
  fi
done
[ "$removed" = 1 ] || [ "$status" != 0 ] || echo "no TPU lock files ($lockfiles)"
# shellcheck disable=SC2086 # status is 0 or 1
exit $status
