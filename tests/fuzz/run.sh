#!/usr/bin/env bash
# Runs the libFuzzer targets built in BUILD_DIR (`make fuzz`, `make fuzz-smoke`).
#
#   tests/fuzz/run.sh [--smoke] BUILD_DIR SECONDS [TARGET...]   (default: every target)
#
# Each target fuzzes for SECONDS from a copy of its seed corpus tests/fuzz/corpus/NAME:
# BUILD_DIR/fuzz-corpus/NAME, kept between runs so that coverage grows (--smoke: a
# fresh BUILD_DIR/fuzz-smoke/NAME each time, so the seeds are all run first). The
# seed corpus is never written to. Crashes, leaks, hangs (an input over 30 s, generous
# for a loaded machine) and broken invariants are saved in BUILD_DIR/fuzz-artifacts/NAME/
# and fail the run;
# libFuzzer's output is in BUILD_DIR/fuzz-logs/NAME.log. One line per target says
# its executions per second and its coverage (libFuzzer's cov: and ft:).
set -euo pipefail

smoke=0
if [[ "${1:-}" == --smoke ]]; then
  smoke=1
  shift
fi
[[ $# -ge 2 ]] || { echo "usage: tests/fuzz/run.sh [--smoke] BUILD_DIR SECONDS [TARGET...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
seconds=$2
shift 2
seeds=$(cd "$(dirname "$0")" && pwd)/corpus
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for dir in "$seeds"/*/; do targets+=("$(basename "$dir")"); done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
for name in "${targets[@]}"; do
  fuzzer=$build/fuzz_$name
  [[ -x "$fuzzer" ]] || { echo "fuzz: $fuzzer is not built" >&2; exit 2; }
  if [[ $smoke -eq 1 ]]; then
    work=$build/fuzz-smoke/$name
    rm -rf "$work"
  else
    work=$build/fuzz-corpus/$name
  fi
  artifacts=$build/fuzz-artifacts/$name
  log=$build/fuzz-logs/$name.log
  mkdir -p "$work" "$artifacts" "$(dirname "$log")"
  cp -n "$seeds/$name"/* "$work"/
  rc=0
  "$fuzzer" -max_total_time="$seconds" -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work" >"$log" 2>&1 || rc=$?
  # The last status line: "#N  REDUCE cov: C ft: F corp: ... exec/s: E rss: ..."
  status=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  field() { sed -nE "s/.* $1: ([0-9]+).*/\\1/p" <<<"$status"; }
  runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log")
  speed=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log")
  printf 'fuzz %-12s %s  runs %-9s exec/s %-7s cov %-6s ft %-6s corpus %s\n' "$name" \
    "$([[ $rc -eq 0 ]] && echo ok || echo FAILED)" "${runs:-?}" "${speed:-?}" "$(field cov)" "$(field ft)" \
    "$(find "$work" -type f | wc -l)"
  if [[ $rc -ne 0 ]]; then
    failed+=("$name")
    grep -E 'ERROR: |invariant broken|SUMMARY|Test unit written' "$log" | head -n 8 | sed 's/^/    /'
  fi
done
if [[ ${#failed[@]} -ne 0 ]]; then
  echo "fuzz: failed: ${failed[*]} (logs in $build/fuzz-logs, inputs in $build/fuzz-artifacts)" >&2
  exit 1
fi
