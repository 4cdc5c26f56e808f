#!/bin/sh
# The hang-up watchdog of a command run without a pty (remote_group.h), started
# by with_group_report() as `sh -c THIS __tpush_helper__ SHELL_PID SSHD_PID &`.
# One line, sent without the file's newline (util::one_line).
#
# Runs in the background with /dev/null for every stream (so sshd never waits
# for it), until the login shell ($1) or the sshd session process ($2) ends,
# whichever is first: a `tail --pid` waiter on each, and a SIGCHLD trap that
# ends both and the wait (both may have ended before the trap knew their
# pids: hence the check before waiting; KILL, since they inherit the ignored
# TERM). When the session went first with the shell still running, the
# connection was lost mid-command: HUP to the group, as a pty's hang-up would
# do. It never outlives the command, so a session kept between runs (--persist)
# gathers none. INT and TERM, which tpush sends to the group, pass it by.
trap '' INT TERM; trap 'kill -s KILL $w $s 2>/dev/null' CHLD; tail --pid="$2" -f /dev/null 2>/dev/null & w=$!; tail --pid="$1" -f /dev/null 2>/dev/null & s=$!; if kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; then wait; fi; kill -s KILL $w $s 2>/dev/null; kill -0 "$2" 2>/dev/null || { kill -0 "$1" 2>/dev/null && kill -s HUP -- "-$1"; }
