#!/bin/sh
# The forced command of a relayed copy's hop key (in the authorized_keys line,
# as `command="exec /bin/sh -c 'THIS'"`: one line, no single or double quote):
# a sending worker asks for "tpush-relay ATTEMPT DIRECTORY", and its stdin goes
# into that attempt's FIFO, DIRECTORY/in.ATTEMPT, where DIRECTORY is the
# receiving worker's own directory of the copy (tpush told the sender, from the
# receiver's "ready" line): a plain path the control script made, owned by the user, not
# a link. The sender records itself beside the FIFO ("PID START", START its start
# time, field 22 of /proc/PID/stat): relay_feed.sh cuts off a sender that did,
# and the control script stops it when it ends.
# shellcheck disable=SC2086 # no double quote may go here; the command and /proc's fields are split on purpose, and $d holds no blank or pattern
set -f; set -- $SSH_ORIGINAL_COMMAND; case $2 in [1-9]) ;; *) exit 2;; esac; d=${3-}; case $d in /*/tpush-relay.*) ;; *) exit 2;; esac; case $d in *[!A-Za-z0-9._/-]* | *..*) exit 2;; esac; [ -d $d ] && [ ! -L $d ] && [ -O $d ] || exit 2; f=$d/in.$2; [ -p $f ] && exec 3> $f && read -r s < /proc/$$/stat && s=${s##*) } && set -- $s && echo $$ ${20} > $f.pid && exec cat >&3 3>&-
