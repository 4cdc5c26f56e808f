#!/bin/sh
# The per-connection guardian (remote_group.h), started by guardian_start() as
# `sh -c THIS __tpush_helper__ SSHD_PID DIRECTORY &`. One line, sent without
# the file's newline (util::one_line).
#
# The watchdog's per-connection variant, for sessions a persist master keeps:
# one guardian per connection instead of a watchdog per command, so a command on a
# kept session costs the worker no process beyond its own. The guardian ($1:
# the sshd session process, $2: its directory) waits for the connection to end,
# then sends HUP to the group of each command registered in the directory that
# still runs: a file per login shell, named by its pid (or per kept shell,
# ssh/kept_shell.h, named j and its pid, rewritten for each command it runs)
# and holding the group leader's /proc/PID/stat line, whose pid (field 1) names
# the group and whose start time (field 22) tells a recycled pid from the
# leader itself. A group whose leader is gone but whose members are not
# keeps its pid from being reused, so it gets HUP too (the guardian itself is
# in the group of the command that started it: it ignores HUP, as it ignores
# the INT and TERM tpush sends to that group). Without GNU tail the
# wait ends at once with the connection still there: it leaves, and the next
# command starts another.
# shellcheck disable=SC2034 # x takes the rest of the line, so that p is its first field alone
trap '' INT TERM HUP; tail --pid="$1" -f /dev/null 2>/dev/null; if kill -0 "$1" 2>/dev/null; then rm -rf "$2"; exit 0; fi; start() { sed 's/.*) //' "$1" 2>/dev/null | cut -d' ' -f20; }; for f in "$2"/*; do p=${f##*/}; p=${p#j}; case $p in ''|*[!0-9]*) continue;; esac; read -r p x < "$f" || continue; case $p in ''|*[!0-9]*|0|1) continue;; esac; if [ -e "/proc/$p" ]; then [ "$(start "/proc/$p/stat")" = "$(start "$f")" ] || continue; fi; kill -s HUP -- "-$p" 2>/dev/null; done; rm -rf "$2"
