#!/usr/bin/env bash
# tpush benchmark entry point (make bench).  See bench/README.md.
#
#   bash bench/run.sh [--quick] [--n 64,256,1024] [--runs 3] [--scenarios true,lines,latency,copy,jump]
#                     [--latency-n 64,256] [--copy-n 64] [--jump-n 256] [--tools tpush,pdsh,pssh,clush]
#                     [--iap-n 64] [--iap-tools tpush,ssh,pdsh]
#                     [--copy-tools tpush,pscp,scp,clush] [--delay-line tun|relay] [--workdir DIR] [--append | --replace]
#   bash bench/run.sh --scenarios repeat --n 64,256 --replace   (not in the default list)
#                     [--repeat-runs 10] [--repeat-tools tpush,tpush-persist,pdsh-cp,pssh-cp]
#                     [--repeat-nets loopback,relay] [--first-output-n 64] [--first-output-samples 5]
#                     [--repeat-idle 20]
# --quick = --n 64 --runs 1 --latency-n 64 --copy-n 16 --jump-n 64 (a smoke run, a few minutes).
# TPUSH_BIN selects the binary (default build/tpush).  Writes bench/results.json and
# bench/RESULTS.md (--append adds to the runs already in bench/results.json; --replace
# also drops their earlier runs of the rows it measures).
# Never part of `make test`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
orig=("$@")
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) args+=(--n 64 --runs 1 --latency-n 64 --copy-n 16 --jump-n 64) ;;
    --append | --replace) args+=("$1") ;;
    -h | --help) sed -n "2,16p" "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --n | --runs | --scenarios | --latency-n | --copy-n | --jump-n | --iap-n | --iap-tools | --tools | --copy-tools | --workdir | --delay-ms | --timeout | --results | --json \
      | --delay-line | --repeat-n | --repeat-runs | --repeat-tools | --repeat-nets | --repeat-idle | --first-output-n \
      | --first-output-samples)
      [[ $# -ge 2 ]] || { echo "bench: $1 needs a value" >&2; exit 2; }
      args+=("$1" "$2"); shift ;;
    *) echo "bench: unknown option '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
tpush_bin="${TPUSH_BIN:-$here/../build/tpush}"
[[ -x "$tpush_bin" ]] || { echo "bench: tpush binary '$tpush_bin' not found (make build, or set TPUSH_BIN)" >&2; exit 1; }
for t in pdsh parallel-ssh parallel-scp clush strace; do
  command -v "$t" >/dev/null || { echo "bench: $t missing: scripts/install-deps.sh bench" >&2; exit 1; }
done
ulimit -n "$(ulimit -Hn)"
cmdline="bash bench/run.sh${orig[*]:+ ${orig[*]}}"
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 "$here/bench.py" --tpush "$tpush_bin" --command-line "$cmdline" "${args[@]}"
