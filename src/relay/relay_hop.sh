#!/bin/sh
# The receiving end of a relayed copy's hop: what a sending worker's ssh runs on
# the next worker, logged in as the user with the agent tpush serves it
# (agent_server.h), as `exec /bin/sh -c 'THIS' tpush-relay ATTEMPT DIRECTORY`:
# one line in single quotes (so it holds none). Its stdin goes to that
# attempt's FIFO, DIRECTORY/in.ATTEMPT, or, for a copy of one file, into the
# file itself (relay_write.sh, filled in for @WRITE@), where DIRECTORY is the
# receiving worker's own directory of the copy (tpush told the sender, from the
# receiver's "ready" line): a plain path the control script made, owned by the
# user, not a link. Once it has the FIFO open, the sender records itself beside
# it ("PID START", START its start time, field 22 of /proc/PID/stat):
# relay_feed.sh cuts off a sender that did, and the control script stops it
# when it ends.
# shellcheck disable=SC2086 # /proc's fields are split on purpose, and $d holds no blank or pattern
set -f; case ${1-} in [1-9]) ;; *) exit 2;; esac; d=${2-}; case $d in /*/tpush-relay.*) ;; *) exit 2;; esac; case $d in *[!A-Za-z0-9._/-]* | *..*) exit 2;; esac; [ -d $d ] && [ ! -L $d ] && [ -O $d ] || exit 2; f=$d/in.$1; [ -p $f ] && exec 3> $f && read -r s < /proc/$$/stat && s=${s##*) } && set -- $s && echo $$ ${20} > $f.pid || exit 1; @WRITE@
