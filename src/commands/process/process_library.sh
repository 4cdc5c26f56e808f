# shellcheck shell=sh
# Functions every process helper (kill, kill --tpu, ps) shares, run by `sh -c`
# after the lines process_scripts.cpp writes first (M, the helper marker, and
# the helper's own settings). Positional use: all_users (set = any owner).
#   stat_of PID        -> st_state st_ppid st_start (fails when PID is gone)
#   alive PID START    -> the process that had START still runs (not a zombie)
#   cmd_of PID         -> c_ (command line, NULs and newlines as spaces)
#   ancestors          -> anc: " $$ parent grandparent ... "
#   client_ancestors   -> + the tpush client that sent us and its ancestors, when it
#                         runs on this machine ($client, see KillSpec::client)
#   match ERE          -> candidate PIDs on stdout (pgrep -f, else a /proc scan)
#   consider PID       -> appends "PID START COMMAND" to targets unless it is us, an
#                         ancestor, a helper, a helper's child, a tpush client (its
#                         argv holds the pattern too: -w localhost), a kernel thread,
#                         a zombie, or (without all_users) someone else's
# shellcheck disable=SC2154 # client: set by the lines kill_script() and tpu_kill_script() write first

stat_of() {
  st_s=
  [ -r "/proc/$1/stat" ] && read -r st_s 2>/dev/null < "/proc/$1/stat" || return 1
  st_s=${st_s##*) }
  # shellcheck disable=SC2086 # the stat line's fields, split on purpose
  set -- $st_s
  st_state=$1 st_ppid=$2 st_start=${20}
}
alive() {
  stat_of "$1" || return 1
  case $st_state in Z|X|x) return 1;; esac
  [ "$st_start" = "$2" ]
}
cmd_of() {
  c_=$(tr '\000\n' '  ' 2>/dev/null < "/proc/$1/cmdline") || c_=
  c_=${c_% }
}
ancestors() {
  anc=" " a_=$$
  while [ "$a_" -gt 0 ] 2>/dev/null && stat_of "$a_"; do anc="$anc$a_ "; a_=$st_ppid; done
}
match() {
  if [ -z "${TPUSH_PROC_SCAN-}" ] && command -v pgrep >/dev/null 2>&1; then
    pgrep -f -- "$1"
    [ $? -le 1 ]
  else
    for d_ in /proc/[0-9]*; do
      cmd_of "${d_#/proc/}"
      [ -n "$c_" ] && printf '%s %s\n' "${d_#/proc/}" "$c_"
    done | TPUSH_PAT=$1 awk '{ p = $1; sub(/^[0-9]+ /, ""); if ($0 ~ ENVIRON["TPUSH_PAT"]) print p }'
  fi
}
# The tpush client that sent us ($client: "BOOT_ID PID START"), when it runs on this
# very machine (same boot id, same pid and start time), and its ancestors (timeout,
# a script, sudo) join anc: their command lines hold the pattern too.
client_ancestors() {
  # shellcheck disable=SC2086 # the client's three words, split on purpose
  set -- $client
  [ $# -eq 3 ] || return 0
  b_=
  read -r b_ 2>/dev/null < /proc/sys/kernel/random/boot_id || return 0
  [ "$b_" = "$1" ] && stat_of "$2" && [ "$st_start" = "$3" ] || return 0
  a_=$2
  while [ "$a_" -gt 0 ] 2>/dev/null && stat_of "$a_"; do anc="$anc$a_ "; a_=$st_ppid; done
}
targets=
consider() {
  case $anc in *" $1 "*) return;; esac
  stat_of "$1" || return
  case $st_state in Z|X|x) return;; esac
  [ -n "$all_users" ] || [ -O "/proc/$1" ] || return
  comm_=
  read -r comm_ 2>/dev/null < "/proc/$1/comm"
  [ "$comm_" != tpush ] || return
  t_start=$st_start t_ppid=$st_ppid
  cmd_of "$1"
  t_cmd=$c_
  [ -n "$t_cmd" ] || return
  case $t_cmd in *"$M"*) return;; esac
  cmd_of "$t_ppid"
  case $c_ in *"$M"*) return;; esac
  # A helper's child (another worker's pgrep, on a machine that is several
  # workers) outlives its parent only for a moment: with the parent gone, keep
  # the target only if it still runs.
  [ -n "$c_" ] || alive "$1" "$t_start" || return
  targets="$targets$1 $t_start $t_cmd
"
}
