# shellcheck shell=sh
# `tpush kill PATTERN`: after the lines kill_script() writes (M, pat, all_users,
# client, sig, ticks, esc), process_library.sh and process_stop.sh.

ancestors
client_ancestors
pids=$(match "$pat") || { echo "bad pattern: $pat" >&2; exit 2; }
for p in $pids; do consider "$p"; done
if [ -z "$targets" ]; then echo "nothing matched"; exit 0; fi
stop_targets
[ -n "$sent" ] || [ "$status" != 0 ] || echo "nothing left to stop (what matched ended by itself)"
exit $status
