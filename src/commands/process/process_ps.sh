# shellcheck shell=sh
# `tpush ps [PATTERN]`: after the lines ps_script() writes (M, pat, has_pat,
# all_users) and process_library.sh.
# shellcheck disable=SC2154 # pat: set by the lines ps_script() writes first; targets: process_library.sh

ancestors
if [ -n "$has_pat" ]; then
  pids=$(match "$pat") || { echo "bad pattern: $pat" >&2; exit 2; }
else
  pids=
  for d in /proc/[0-9]*; do pids="$pids ${d#/proc/}"; done
fi
for p in $pids; do consider "$p"; done
hz=$(getconf CLK_TCK 2>/dev/null) || hz=100
[ -n "$hz" ] || hz=100
read -r up _ < /proc/uptime
up=${up%%.*}
out=$(while read -r p_ s_ c_; do
  [ -n "$p_" ] || continue
  if [ -z "$has_pat" ]; then
    case $c_ in "sshd: "*|sshd-session*|"(sd-pam)"*|*"systemd --user"*) continue;; esac
  fi
  e=$((up - s_ / hz))
  [ "$e" -ge 0 ] || e=0
  if [ "$e" -ge 86400 ]; then
    el=$(printf '%d-%02d:%02d:%02d' $((e / 86400)) $((e % 86400 / 3600)) $((e % 3600 / 60)) $((e % 60)))
  elif [ "$e" -ge 3600 ]; then
    el=$(printf '%02d:%02d:%02d' $((e / 3600)) $((e % 3600 / 60)) $((e % 60)))
  else
    el=$(printf '%02d:%02d' $((e / 60)) $((e % 60)))
  fi
  printf '%7s %11s %s\n' "$p_" "$el" "$c_"
done <<EOF_
$targets
EOF_
)
if [ -z "$out" ]; then
  if [ -n "$has_pat" ]; then echo "nothing matched"; else echo "no processes"; fi
  exit 0
fi
printf '%7s %11s %s\n' PID ELAPSED COMMAND
printf '%s\n' "$out" | sort -n
