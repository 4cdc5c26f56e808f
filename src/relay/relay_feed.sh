#!/bin/sh
# tpush feeding a worker of a relayed copy itself: run by the login shell, any
# shell, as `exec /bin/sh -c 'THIS'`, one line in single quotes (so it holds none),
# with stdin written as relay_write.sh (filled in for @WRITE@) writes it: into
# the FIFO of attempt @ATTEMPT@ in the worker's directory @DIRECTORY@ (the
# control script made it and said so in its "ready" line), or into the file.
# It records itself beside the FIFO before it opens it ("PID START" in
# in.ATTEMPT.feed, START its start time, field 22 of /proc/PID/stat), so the
# control script stops it, and no other process, when it ends, even while it
# waits for the FIFO. A sender that got as far as the FIFO recorded itself
# too: bytes may have arrived, so tpush's own would follow them; the feed stops
# that sender instead (if it is still that process: same start time) and exits
# @FEED_CUT@ (kFeedCut), and the worker's copy ends short. Placeholders:
# relay_feed_command() fills them in.
# shellcheck disable=SC2086 # /proc/PID/stat's fields, split on purpose
# shellcheck disable=SC2242 # @FEED_CUT@ is a number once filled in
f=@DIRECTORY@/in.@ATTEMPT@; [ -p "$f" ] && [ -O "$f" ] || exit 1; if [ -s "$f.pid" ]; then read -r p t < "$f.pid" && read -r s < "/proc/$p/stat" && s=${s##*) } && set -- $s && [ "${20}" = "$t" ] && kill "$p" 2>/dev/null; exit @FEED_CUT@; fi; read -r s < /proc/$$/stat && s=${s##*) } && set -- $s && echo "$$ ${20}" > "$f.feed" && exec 3> "$f" || exit 1; @WRITE@
