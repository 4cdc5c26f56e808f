#!/usr/bin/env bash
# A loopback farm (tests/farm/farm.py) behind a real delay line: its sshd runs in a
# network namespace of its own, reached through bench/tundelay.py, so TCP's handshake
# pays the round trip too (bench/delayrelay.py's listener answers it at once).
#
#   bash bench/tunfarm.sh start DIR N DELAY   # N workers, DELAY s each way; root only
#   HOME=DIR/home tpush -H DIR/hosts-far true
#   bash bench/tunfarm.sh stop DIR
#
# Worker 127.0.A.B of the farm is 10.201.A.B here (known_hosts and AllowUsers follow);
# the client side is 10.201.0.1. For delays and runs by hand (bench/results-notes.md);
# bench/run.sh's latency scenario uses the same delay line (bench.py, DelayLine).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ns=tpush-tun
cmd=${1-} dir=${2-}
[[ -n $dir ]] || { echo "usage: $0 start DIR N DELAY | stop DIR" >&2; exit 2; }

stop() {
  if [[ -e $dir/farm.json ]]; then
    ip netns exec "$ns" /usr/bin/python3 "$here/../tests/farm/farm.py" stop "$dir" || true
  fi
  if [[ -s $dir.delay.pid ]]; then kill "$(cat "$dir.delay.pid")" 2>/dev/null || true; fi
  rm -f "$dir.delay.pid" "$dir.delay.out"
  ip netns del "$ns" 2>/dev/null || true
}

case $cmd in
  stop) stop ;;
  start)
    n=${3:?N} delay=${4:?DELAY}
    stop
    /usr/bin/python3 "$here/tundelay.py" --delay "$delay" > "$dir.delay.out" 2>&1 &
    echo $! > "$dir.delay.pid"
    for _ in $(seq 100); do grep -q ready "$dir.delay.out" 2>/dev/null && break; sleep 0.05; done
    grep -q ready "$dir.delay.out" || { echo "tunfarm: the delay line did not start: $(cat "$dir.delay.out")" >&2; exit 1; }
    ip netns add "$ns"
    ip link set tpdelay1 netns "$ns"
    ip addr add 10.201.0.1/16 dev tpdelay0
    ip link set tpdelay0 up
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" /usr/bin/python3 "$here/../tests/farm/farm.py" start "$dir" --workers "$n"
    port=$(sed -n 's/^export TPUSH_FARM_PORT=//p' "$dir/env")
    sed -n 's/^127\.0\.\([0-9]*\)\.\([0-9]*\):.*/10.201.\1.\2/p' "$dir/hosts" > "$dir/addresses-far"
    while read -r a; do ip netns exec "$ns" ip addr add "$a/16" dev tpdelay1; done < "$dir/addresses-far"
    ip netns exec "$ns" ip link set tpdelay1 up
    sed "s/\$/:$port/" "$dir/addresses-far" > "$dir/hosts-far"
    sed -i 's/^\[127\.0\./[10.201./' "$dir/home/.ssh/known_hosts"
    sed -i 's/^AllowUsers \(.*\)@127\.0\.0\.0\/8$/AllowUsers \1@10.201.0.1/; s/^LogLevel .*/LogLevel ERROR/' "$dir/sshd_config"
    kill -HUP "$(cat "$dir/sshd.pid")"
    echo "tunfarm: $n workers behind ${delay} s each way: HOME=$dir/home tpush -H $dir/hosts-far ..." >&2
    ;;
  *) echo "usage: $0 start DIR N DELAY | stop DIR" >&2; exit 2 ;;
esac
