# shellcheck shell=sh
# Signalling a target list (kill, kill --tpu), after process_library.sh; sets
# status=1 when something could not be stopped.
#   signal_all SIG VERB  -> sends SIG to every live target, prints "VERB PID COMMAND";
#                           rest = the ones signalled
#   wait_gone TICKS      -> polls every 0.1 s until rest is empty (0) or TICKS pass (1)
#   stop_targets         -> signal, grace, KILL, report survivors (uses sig ticks esc)
# shellcheck disable=SC2154 # esc, sig and ticks: set by the lines process_scripts.cpp writes first
# shellcheck disable=SC2034 # status and sent: read by process_kill.sh and process_tpu_kill.sh

status=0 sent=
signal_all() {
  rest=
  while read -r p_ s_ c_; do
    [ -n "$p_" ] || continue
    alive "$p_" "$s_" || continue
    if kill -s "$1" "$p_" 2>/dev/null; then
      printf '%s %s %.200s\n' "$2" "$p_" "$c_"
      sent=1
      rest="$rest$p_ $s_ $c_
"
    elif alive "$p_" "$s_"; then
      printf 'failed %s %.200s (not permitted; try --sudo)\n' "$p_" "$c_"
      status=1
    fi
  done <<EOF_
$targets
EOF_
}
wait_gone() {
  i_=0
  while :; do
    left_=
    while read -r p_ s_ c_; do
      [ -n "$p_" ] && alive "$p_" "$s_" && left_="$left_$p_ $s_ $c_
"
    done <<EOF_
$rest
EOF_
    rest=$left_
    [ -z "$rest" ] && return 0
    [ "$i_" -ge "$1" ] && return 1
    sleep 0.1
    i_=$((i_ + 1))
  done
}
stop_targets() {
  case $esc in
    none) signal_all "$sig" "sent $sig"; return;;
    kill) signal_all KILL killed;;
    *) signal_all "$sig" killed
       wait_gone "$ticks" && return
       targets=$rest
       signal_all KILL KILLed;;
  esac
  t_=$ticks
  [ "$t_" -ge 20 ] || t_=20
  wait_gone "$t_" && return
  while read -r p_ s_ c_; do
    [ -n "$p_" ] && printf 'survived %s %.200s\n' "$p_" "$c_"
  done <<EOF_
$rest
EOF_
  status=1
}
