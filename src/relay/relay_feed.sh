#!/bin/sh
# tpush feeding a worker of a relayed copy itself: run by the login shell, any
# shell, as `exec /bin/sh -c 'THIS'`, one line in single quotes (so it holds none),
# with stdin written into the FIFO of attempt @ATTEMPT@ in the worker's directory
# (@DIRECTORY@/ADDR, ADDR the address from $SSH_CONNECTION). A sender that got
# as far as the FIFO left its pid: bytes may have arrived, so tpush's own would
# follow them; it cuts that sender off instead (exit @FEED_CUT@, kFeedCut), and
# the worker's copy ends short. Placeholders: relay_feed_command() fills them in.
# shellcheck disable=SC2086 # $SSH_CONNECTION's four words, split on purpose
# shellcheck disable=SC2046 # the pid file holds one pid (relay_forced.sh's echo $$)
# shellcheck disable=SC2242 # @FEED_CUT@ is a number once filled in
set -- $SSH_CONNECTION; f=@DIRECTORY@/$3/in.@ATTEMPT@; [ -p "$f" ] || exit 1; if [ -s "$f.pid" ]; then kill $(cat "$f.pid") 2>/dev/null; exit @FEED_CUT@; fi; exec cat > "$f"
