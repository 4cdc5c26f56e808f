# shellcheck shell=sh
# `tpush logs -f`: follows FILE ($f, the last $n lines first; logs_command()
# sets both) until the sshd session process that runs us is gone: tpush closing
# the connection (Ctrl-C, timeout, exit) ends the remote tail within a second.
# shellcheck disable=SC2154 # f and n: set by the line logs_command() writes first

stat_of() {
  st_s=
  [ -r "/proc/$1/stat" ] && read -r st_s 2>/dev/null < "/proc/$1/stat" || return 1
  st_s=${st_s##*) }
  # shellcheck disable=SC2086 # the stat line's fields, split on purpose
  set -- $st_s
  st_ppid=$2
}
w=
a_=$$
while [ "$a_" -gt 1 ] 2>/dev/null && stat_of "$a_"; do
  comm=
  read -r comm 2>/dev/null < "/proc/$a_/comm"
  case $comm in sshd*) w=$a_; break;; esac
  a_=$st_ppid
done
if [ -z "$w" ]; then
  exec tail -n "$n" -F -- "$f"
fi
if tail --pid="$w" -n 0 /dev/null >/dev/null 2>&1; then
  exec tail -n "$n" -F --pid="$w" -- "$f"
fi
tail -n "$n" -F -- "$f" &
t=$!
trap 'kill $t 2>/dev/null' EXIT
while [ -d "/proc/$w" ] && kill -0 "$t" 2>/dev/null; do sleep 1; done
