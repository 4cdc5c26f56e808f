#!/bin/sh
# The forced command of a relayed copy's hop key (in the authorized_keys line,
# as `command="exec /bin/sh -c 'THIS'"`: one line, no single or double quote):
# a sending worker asks for "tpush-relay ATTEMPT", and its stdin goes into that
# attempt's FIFO, in.ATTEMPT in the worker's directory (@DIRECTORY@/ADDR, ADDR
# the address from $SSH_CONNECTION), its pid beside it (relay_feed.sh cuts off
# a sender that left one). relay_authorized_line() fills in @DIRECTORY@.
# shellcheck disable=SC2086 # no double quote may go here; $SSH_CONNECTION and the command are split on purpose, $f holds no blank or pattern
set -- $SSH_CONNECTION $SSH_ORIGINAL_COMMAND; case $6 in [1-9]) ;; *) exit 2;; esac; f=@DIRECTORY@/$3/in.$6; [ -p $f ] && exec 3> $f && echo $$ > $f.pid && exec cat >&3 3>&-
