#!/bin/sh
# The hang-up watch of a command on a session that ends with it (remote_group.h,
# HangUpWatch::per_command), started by with_group_report() as
# `sh -c THIS __tpush_helper__ SHELL_PID SSHD_PID &`. One line, sent without the
# file's newline (util::one_line).
#
# One `tail --pid` on the sshd session process, in the background with /dev/null
# for every stream (so sshd never waits for it): sshd ends right after the
# command on such a session, and so does this. When sshd went first with the
# shell ($1) still running, the connection was lost mid-command: HUP to the
# group, as a pty's hang-up would do. A worker without GNU tail (busybox): tail
# fails at once, sshd still runs, nothing is done. INT and TERM, which tpush
# sends to the group, pass it by (ignored since the fork).
# (A session kept between runs has the connection's guardian instead, or
# remote_group_watchdog.sh, which also ends with the command.)
trap '' INT TERM; tail --pid="$2" -f /dev/null 2>/dev/null; kill -0 "$2" 2>/dev/null || { kill -0 "$1" 2>/dev/null && kill -s HUP -- "-$1"; }
