#!/usr/bin/env bash
# The pre-merge gate: installs what is missing, builds, runs every benchmark binary's quick
# suite on the GPU it finds, merges the results and compares them with the stored baseline
# of that GPU model (baselines/<gpu-slug>/quick.json) through `gpucheck compare`.
# Exit: 0 no regression, 1 a regression or a missing benchmark, 2 bad input, no GPU, no baseline.
# Usage: ci/gate.sh [--suite quick|full] [--device N] [extra `gpucheck compare` flags...]
#   RESULTS_DIR (default results/<suite>) keeps the JSON; BUILD_DIR the build.
set -euo pipefail
source "$(dirname "$0")/env.sh"
suite=quick device=0
compare_args=()
while (($#)); do
  case $1 in
    --suite) suite=$2; shift 2 ;;
    --suite=*) suite=${1#*=}; shift ;;
    --device) device=$2; shift 2 ;;
    --device=*) device=${1#*=}; shift ;;
    *) compare_args+=("$1"); shift ;;
  esac
done
"$GPUCHECK_ROOT/ci/deps.sh" --build-only
build=${BUILD_DIR:-$GPUCHECK_ROOT/build-gate}
cmake -S "$GPUCHECK_ROOT" -B "$build" -DGPUCHECK_BUILD_TESTS=OFF > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 2; }
cmake --build "$build" -j "$(nproc)" > "$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 2; }

results=${RESULTS_DIR:-$GPUCHECK_ROOT/results/$suite}
rm -rf "$results"
mkdir -p "$results"
for bin in bench_matmul bench_memory bench_bmm bench_conv bench_launch bench_pcie bench_nccl; do
  [[ -x $build/bin/$bin ]] || continue
  echo "== $bin --suite $suite"
  set +e
  "$build/bin/$bin" --device "$device" --suite "$suite" --benchmark_out="$results/$bin.json" \
    --benchmark_out_format=json 2> >(tee "$results/$bin.stderr" >&2)
  rc=$?
  set -e
  wait
  if ((rc == 2)); then
    echo "gate: $bin could not run (exit 2); see above" >&2
    exit 2
  fi
  # rc 1: a case failed (wrong result or CUDA error); its entry carries the error and the
  # compare below reports it, so the gate still fails on it.
  rm -f "$results/$bin.stderr"
done

gpu_name=$(sed -n 's/^ *"gpu_name": "\(.*\)",*$/\1/p' "$results"/bench_*.json | head -1)
slug=$(printf '%s' "$gpu_name" | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
baseline=$GPUCHECK_ROOT/baselines/$slug/$suite.json
if [[ ! -f $baseline ]]; then
  echo "gate: no baseline for '$gpu_name' at ${baseline#$GPUCHECK_ROOT/}; to store this run as one:" >&2
  echo "  $build/bin/gpucheck baseline update --suite $suite $results" >&2
  exit 2
fi
cd "$GPUCHECK_ROOT"  # thresholds: baselines/thresholds.json
exec "$build/bin/gpucheck" compare "$baseline" "$results" "${compare_args[@]}"
