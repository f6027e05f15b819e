#!/usr/bin/env bash
# Runs one benchmark binary's quick suite and checks its JSON. Exit 77 (CTest: Skipped) with
# the reason when there is no CUDA device, unless GPUCHECK_REQUIRE_GPU=1 (a GPU runner): then
# no device is a failure. Otherwise the binary must exit 0 and the JSON pass.
# Usage: run_smoke.sh BINARY JSON_CHECK OUT.json CHECK_ARGS... -- EXTRA_BINARY_ARGS...
set -uo pipefail
bin=$1 check=$2 out=$3
shift 3
check_args=()
while (($#)) && [[ $1 != -- ]]; do check_args+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
rm -f "$out"
start=$(date +%s.%N)
"$bin" --suite quick --benchmark_out="$out" --benchmark_out_format=json "$@" 2> >(tee "$out.stderr" >&2)
rc=$?
wait
end=$(date +%s.%N)
if ((rc == 2)) && grep -q "no CUDA device found" "$out.stderr"; then
  if [[ ${GPUCHECK_REQUIRE_GPU:-0} == 1 ]]; then
    echo "FAIL: GPUCHECK_REQUIRE_GPU=1 but $(grep -m1 'no CUDA device found' "$out.stderr")"
    exit 1
  fi
  echo "SKIPPED: $(grep -m1 'no CUDA device found' "$out.stderr")"
  exit 77
fi
awk -v s="$start" -v e="$end" 'BEGIN { printf "wall %.1f s\n", e - s }'
if ((rc != 0)); then
  echo "FAIL: $(basename "$bin") exited $rc"
  exit 1
fi
exec "$check" "$out" "${check_args[@]}"
