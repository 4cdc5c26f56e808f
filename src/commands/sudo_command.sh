# shellcheck shell=sh
# tpush --sudo (fanout/sudo_password.h): a worker's command under sudo. sudo
# asks on stderr with the run's own prompt and reads the password from the
# channel's stdin, which tpush writes to only then (and never again there if
# sudo asks a second time); no password is ever in an argument or the
# environment. The root shell, the user's login shell as without --sudo,
# first prints the run's mark on stderr, so tpush knows sudo let the command
# run, then runs the command as given (no positional parameters left) and
# waits for it. The INT, TERM or HUP that tpush sends the user's process
# group reaches only sudo, which passes it to the root shell alone: the shell
# sends it on to the whole group as root, once, so the command and all it
# started get it, as they do without --sudo. (sudo passes on no signal that
# comes from its own group.) One line, filled in by with_sudo(): @PROMPT@,
# @MARK@ and @COMMAND@, each shell-quoted.
# shellcheck disable=SC2016 # $1, $2, $s, $c and $r are the root shell's, not this one's
sudo -S -p @PROMPT@ -- "${SHELL:-/bin/sh}" -c 'printf "%s\n" "$1" >&2; for s in INT TERM HUP; do trap "trap \"\" $s; kill -s $s 0" "$s"; done; (eval "shift 2; $2") <&0 & c=$!; while wait "$c"; r=$?; kill -0 "$c" 2>/dev/null; do :; done; exit "$r"' sh @MARK@ @COMMAND@
