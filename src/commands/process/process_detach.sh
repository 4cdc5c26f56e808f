# shellcheck shell=sh
# `--detach --log FILE` (detach_command(), process.h): run by the login shell,
# any shell. @LOG@ is FILE as the shell reads it ("$HOME"/... for ~/...),
# @COMMAND@ the command, quoted: detach_command() fills them in.
tpush_log=@LOG@
: >> "$tpush_log" || exit 1
if command -v setsid >/dev/null 2>&1; then tpush_setsid=setsid; else tpush_setsid=; fi
$tpush_setsid nohup "${SHELL:-/bin/sh}" -c @COMMAND@ < /dev/null >> "$tpush_log" 2>&1 &
echo "started pid $!"
