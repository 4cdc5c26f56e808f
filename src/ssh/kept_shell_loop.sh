# shellcheck shell=bash
# The kept shell (kept_shell.h): its loop, after the lines kept_shell_script() writes
# (bash only; $1, the hello tag; $tpush_d, the guardian's directory).
#
# The shell's own variables and its function, all named tpush_..., are unset
# before the command runs. Its stderr is /dev/null (bash's notices about its
# jobs go there); each job gets the channel's stderr from fd 3. `wait` returns
# when a job stops, too: the loop waits until it is gone. tpush_state is
# which login files exist and what they hold, read with the `read` builtin
# (no fork; bash reads a regular file in blocks, a few syscalls for a few
# kB): any difference from the start and the command is declined. Contents,
# not times: file times move in clock ticks (a few ms; nanosecond fields
# too), so an edit in the tick the shell started in has the time the file
# had, and one written with its old time (cp -p, rsync -t, tar) never looks
# newer; ctime and size would need stat(1), a fork per command. A variable
# holds no NUL byte, so a file is read as its NUL-separated pieces, each
# length-prefixed: bash drops NULs and runs what follows them, so an edit
# after one counts too. (The directory must be writable: the claims below
# are made there.) The login files are those whose change would make a new
# login differ from the kept shell: the environment sshd and PAM set up, the
# rc files sshd runs, and what bash reads when sshd starts it (or, below the
# top shell level, $BASH_ENV).
#
# Then the command's claim: a file made with noclobber (O_EXCL), so that of
# the kept shell and a later login running the same command (with_claim())
# only the first runs it. The shell removes its own claims 64 commands at a
# time (with one `rm`, a fork and an exec that the commands in between do not
# pay), never the one of the command it is running: the client sends a
# command only once it knows how the one before ended.
# shellcheck disable=SC2154 # tpush_d: set by guardian_start(), in the lines before
# shellcheck disable=SC1007 # `tpush_a= tpush_i=0`: empty values, on purpose
exec 3>&2 2>/dev/null
tpush_t=$tpush_d/shell-$$
: > "$tpush_t" || exit 0
tpush_state() {
  tpush_x=
  for tpush_f in /etc/environment "$HOME/.pam_environment" "$HOME/.ssh/environment" "$HOME/.ssh/rc" /etc/ssh/sshrc /etc/bash.bashrc "$HOME/.bashrc" ${BASH_ENV:+"$BASH_ENV"}; do
    if [ -e "$tpush_f" ]; then
      tpush_x+=1
      { while IFS= read -r -d '' tpush_v; do tpush_x+="${#tpush_v}:$tpush_v,"; done
        tpush_x+="${#tpush_v}:$tpush_v."; } < "$tpush_f"
    else tpush_x+=0; fi
  done
}
tpush_state; tpush_x0=$tpush_x tpush_a= tpush_i=0
set -m
printf '%sready %s\n' "$1" "$tpush_d"
while read -r tpush_n tpush_p tpush_e tpush_k; do
  tpush_c=
  while [ "$tpush_n" -gt 0 ] && IFS= read -r tpush_l; do tpush_c+=$tpush_l$'\n'; tpush_n=$((tpush_n - 1)); done
  tpush_state
  if [ "$tpush_x" != "$tpush_x0" ]; then printf '%sstale\n' "$tpush_e"; printf '%sstale\n' "$tpush_e" >&3; exit 0; fi
  # shellcheck disable=SC2086 # the claims' names (c and hex digits), split on purpose
  if [ "$tpush_i" -ge 64 ]; then (cd "$tpush_d" && IFS=' ' && command rm -f -- $tpush_a) </dev/null >/dev/null; tpush_a= tpush_i=0; fi
  tpush_o=$-; set -C
  { : > "$tpush_d/c$tpush_k"; } && tpush_r=0 || tpush_r=1
  case $tpush_o in *C*) ;; *) set +C;; esac
  if [ "$tpush_r" != 0 ]; then printf '%sclaimed\n' "$tpush_e"; printf '%sclaimed\n' "$tpush_e" >&3; exit 0; fi
  tpush_a+=" c$tpush_k" tpush_i=$((tpush_i + 1))
  ( trap - INT TERM QUIT HUP
    printf '%s%s\n' "$tpush_p" "$BASHPID" >&2
    read -r tpush_s < "/proc/$BASHPID/stat" && printf '%s\n' "$tpush_s" > "$tpush_d/j$$"
    set +m --; exec 3>&-
    eval "unset -f tpush_state; unset tpush_a tpush_c tpush_d tpush_e tpush_f tpush_g tpush_i tpush_j tpush_k tpush_l tpush_n tpush_o tpush_p tpush_r tpush_s tpush_t tpush_v tpush_w tpush_x tpush_x0; $tpush_c" ) </dev/null 2>&3 &
  tpush_j=$!
  while :; do wait "$tpush_j"; tpush_r=$?; kill -0 "$tpush_j" 2>/dev/null || break; done
  if kill -0 -- "-$tpush_j" 2>/dev/null; then tpush_w=$tpush_r+; else tpush_w=$tpush_r; fi
  printf '%s%s\n' "$tpush_e" "$tpush_w"; printf '%s%s\n' "$tpush_e" "$tpush_w" >&3
  [ "$tpush_w" = "$tpush_r" ] || exit 0
done
