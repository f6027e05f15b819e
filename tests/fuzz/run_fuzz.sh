#!/usr/bin/env bash
# Runs the reader fuzzer for a bounded time over the committed corpus; exit 0 only when it
# ran the whole time without a crash. Exit 77 (CTest skip) when it could not be built.
# Usage: run_fuzz.sh BINARY CORPUS WORKDIR SECONDS [SKIP_REASON]
set -uo pipefail
bin=$1 corpus=$2 work=$3 seconds=$4 reason=${5:-}
if [[ -n $reason ]]; then echo "SKIP: fuzzer not built: $reason"; exit 77; fi
if [[ ! -x $bin ]]; then echo "SKIP: fuzzer binary $bin missing"; exit 77; fi
rm -rf "$work" && mkdir -p "$work/new-corpus" "$work/artifacts"
# New inputs go to the build folder; the committed corpus is only read.
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -dict="$(dirname "$0")/gbench.dict" -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
  "$work/new-corpus" "$corpus" > "$work/fuzz.log" 2>&1
rc=$?
grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ *DONE)' "$work/fuzz.log"
if [[ $rc -ne 0 ]] || ls "$work/artifacts" | grep -q .; then
  echo "fuzzer failed (exit $rc); last lines:"; tail -40 "$work/fuzz.log"
  ls -l "$work/artifacts"
  exit 1
fi
echo "fuzzer ran ${seconds}s with no crash"
