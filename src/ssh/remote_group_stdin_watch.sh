#!/bin/sh
# The hang-up watch of a command run without a pty and without input
# (remote_group.h): the part of the login shell's prologue that
# with_group_report() writes after INT and TERM are ignored, with @MARKER@
# filled in. One line, sent without the file's newline (util::one_line).
#
# tpush sends no EOF on such a command's channel, so the pipe sshd writes the
# command's stdin into stays open until sshd closes it: when the login shell
# ends (sshd's own doing, so also with the network cut) or when the session
# ends (the connection lost, tpush hung up). The shell keeps that pipe on fd 3,
# gives the command /dev/null (what a command without input reads: EOF at
# once) and forks a subshell, a fork of itself and no new program, that reads
# fd 3 until EOF. If the login shell still runs then, the session went first:
# HUP to the group, as a pty's hang-up does. The subshell ignores that HUP (and
# the INT and TERM tpush sends to the group), writes to /dev/null so sshd never
# waits for it, and ends with the command however it ends: exec'd, killed
# outright, or with its own children left running. The marker, a no-op word,
# keeps `tpush kill` and `ps` off the shell and the watch, as it does the
# watchdog.
exec 3<&0 </dev/null; { trap '' HUP; : @MARKER@; read -r _ <&3; kill -0 $$ 2>/dev/null && kill -s HUP -- "-$$"; } >/dev/null 2>&1 & exec 3<&-
