# shellcheck shell=sh
# tpush --sudo (fanout/sudo_password.h): a worker's command under sudo. sudo
# asks on stderr with the run's own prompt and reads the password from the
# channel's stdin, which tpush writes to only then (and never again there if
# sudo asks a second time); no password is ever in an argument or the
# environment. The root shell, the user's login shell as without --sudo (its
# path is its $0), first prints the run's mark on stderr, so tpush knows sudo
# let the command run. It runs the command in a shell of its own, as sshd runs
# one without --sudo, in the background so that it can take signals while it
# waits: the INT, TERM or HUP that tpush sends the user's process group
# reaches only sudo, which passes it to the root shell alone, and the root
# shell sends it on to the whole group as root, once, so the command and all
# it started get it, as they do without --sudo. (sudo passes on no signal that
# comes from its own group.) On a terminal (--tty) ^C already reaches the
# whole group: INT is only waited through. A background command starts with
# INT and QUIT ignored (POSIX, without job control), so they are put back to
# their defaults by `env --default-signal`, else by perl; a worker with
# neither runs it with them ignored (TERM and HUP still stop it). One line,
# filled in by with_sudo(): @PROMPT@, @MARK@ and @COMMAND@, each shell-quoted.
# shellcheck disable=SC2016 # $0, $1, $2, $s, $c, $r and $SIG are the root shell's or perl's, not this one's
sudo -S -p @PROMPT@ -- "${SHELL:-/bin/sh}" -c 'printf "%s\n" "$1" >&2; if [ -t 0 ]; then trap : INT; else trap "trap \"\" INT; kill -s INT 0" INT; fi; for s in TERM HUP; do trap "trap \"\" $s; kill -s $s 0" "$s"; done; set -- "$0" -c "$2" "${0##*/}"; if env --default-signal=INT true 2>/dev/null; then set -- env --default-signal=INT,QUIT "$@"; elif command -v perl >/dev/null 2>&1; then set -- perl -e "\$SIG{INT}=\$SIG{QUIT}=q(DEFAULT);exec(@ARGV)||exit(127)" "$@"; fi; "$@" <&0 & c=$!; while wait "$c"; r=$?; kill -0 "$c" 2>/dev/null; do :; done; exit "$r"' "${SHELL:-/bin/sh}" @MARK@ @COMMAND@
