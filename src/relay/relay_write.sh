# shellcheck shell=sh
# The writing end of an attempt's FIFO, the part relay_hop.sh and relay_feed.sh
# share (filled in for their @WRITE@; one line, no single quote). With $f the
# FIFO, open on fd 3 (which waited for the receiver to open it too), and the
# writer recorded beside it, it either passes stdin on into the FIFO (a copy of
# several files, which the control script splits), or, when the receiver left
# $f.to (a copy of one file: "1" to pass the bytes on to the next worker
# through the FIFO fwd beside $f, else an empty line, then the temporary file
# to store them in), stores them itself: one tee (or cat) into that file and
# fwd, its errors in $f.err, so the bytes cross no FIFO and no pipe on this
# worker. It keeps the session's stderr open on fd 5: with stdout and stderr
# both closed, sshd would end the channel's output, and the sender (tpush)
# would stop sending. It keeps the FIFO open until it ends: the receiver's end
# of file. The temporary file is opened read-only first, which never makes one,
# then for writing through /proc/self/fd: a writer that comes late, after the
# receiver removed it, leaves nothing behind.
# shellcheck disable=SC2154 # f: set by the script this is filled into
[ -e "$f.to" ] || exec cat >&3 3>&-; { read -r w && read -r t; } < "$f.to" && exec 4< "$t" && [ -f /proc/self/fd/4 ] && [ -O /proc/self/fd/4 ] || exit 1; [ "$w" = 1 ] && exec tee -p "${f%/*}/fwd" 5>&2 2> "$f.err" > /proc/self/fd/4 4<&-; exec cat 5>&2 2> "$f.err" > /proc/self/fd/4 4<&-
