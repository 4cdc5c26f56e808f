# The soak's remote command: `bash stream.sh LINES INTERVAL [PLAN LONG]` on every worker.
# A worker whose address is a line of the file PLAN (the round's faulted workers) prints
# LONG lines instead of LINES, so it is still streaming whenever its fault comes.
#
# Prints, with no fork per line (bash builtins only, so 512 workers at 20 lines/s
# stay cheap on 2 cores):
#   P ADDR PID                      first: the worker's address and its session sshd
#                                   ($PPID, `sshd: USER@notty`), which the soak kills
#                                   or freezes
#   L ADDR SEQ PAD CHECK E          LINES numbered lines, one every INTERVAL seconds;
#                                   SEQ is %05d, PAD 64 times the letter SEQ % 26,
#                                   CHECK %07d of (H*7919 + SEQ*104729) % 9999991 where
#                                   H = 2nd*65536 + 3rd*256 + 4th octet of ADDR, E the
#                                   end mark; SEQ % 10 == 9 goes to stderr, the rest
#                                   to stdout
#   D ADDR LINES                    last, on stdout (LINES: the count printed)
#
# soak.py (valid_line) checks every line against this format, so a torn, partial or
# mixed-up line is caught. ADDR is the third field of $SSH_CONNECTION, the address the
# worker was reached at.
lines=$1 interval=$2 plan=$3 long=$4
set -- $SSH_CONNECTION
addr=$3
if [[ -n $plan ]]; then
  while read -r a; do [[ $a == "$addr" ]] && { lines=$long; break; }; done < "$plan"
fi
octets=(${addr//./ })
h=$(( octets[1] * 65536 + octets[2] * 256 + octets[3] ))
letters=abcdefghijklmnopqrstuvwxyz
printf -v blank '%64s' ''
pads=()
for ((k = 0; k < 26; k++)); do pads[k]=${blank// /${letters:k:1}}; done
# A pipe nobody writes to: `read -t` on it is a sleep without a fork.
exec 9<> <(:)
printf 'P %s %d\n' "$addr" "$PPID"
for ((i = 0; i < lines; i++)); do
  c=$(( (h * 7919 + i * 104729) % 9999991 ))
  if (( i % 10 == 9 )); then
    printf 'L %s %05d %s %07d E\n' "$addr" "$i" "${pads[i % 26]}" "$c" >&2
  else
    printf 'L %s %05d %s %07d E\n' "$addr" "$i" "${pads[i % 26]}" "$c"
  fi
  read -t "$interval" -u 9
done
printf 'D %s %d\n' "$addr" "$lines"
