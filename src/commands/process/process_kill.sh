# shellcheck shell=sh
# `tpush kill PATTERN`: after the lines kill_script() writes (M, pat, all_users,
# client, sig, ticks, esc), process_library.sh and process_stop.sh.
# shellcheck disable=SC2154 # pat: set by the lines kill_script() writes first; status: process_stop.sh

ancestors
client_ancestors
pids=$(match "$pat") || { echo "bad pattern: $pat" >&2; exit 2; }
for p in $pids; do consider "$p"; done
if [ -z "$targets" ]; then echo "nothing matched"; exit 0; fi
stop_targets
[ -n "$sent" ] || [ "$status" != 0 ] || echo "nothing left to stop (what matched ended by itself)"
# shellcheck disable=SC2086 # status is 0 or 1
exit $status
