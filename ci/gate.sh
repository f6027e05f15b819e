#!/usr/bin/env bash
# The pre-merge gate: installs what is missing, builds, then `gpucheck gate` runs every
# benchmark binary in its own process on the GPU it finds, compares with the stored baseline of
# that GPU (baselines/<gpu-slug>/<host-slug>/<suite>.json when this host keeps one, else
# baselines/<gpu-slug>/<suite>.json) and re-measures cases past their limit before failing.
# docs/GATE.md explains the verdicts.
# Exit: 0 pass; 1 a confirmed regression, a missing figure or a binary that errored (crash,
# hang, exit 2); 2 bad input, no GPU, no baseline (it prints the line that stores one).
# Usage: ci/gate.sh [--suite quick|full] [--device N] [extra `gpucheck gate` flags: --threshold,
#   --thresholds, --allow-missing, --filter, --timeout, --confirm-repetitions, ...]
#   RESULTS_DIR (default results/<suite>) receives results.json, compare.md, compare.json,
#   junit.xml and logs/; BUILD_DIR the build (default build-gate).
#   GPUCHECK_HISTORY: the results history every run is kept in (`--history`, docs/HISTORY.md;
#   default results/history.db, `off` for none; ignored when the flags name one): a case judged
#   by its fastest fresh process is gated only against this runner's own runs in it.
set -euo pipefail
source "$(dirname "$0")/env.sh"
suite=quick device=0
gate_args=()
while (($#)); do
  case $1 in
    --suite) suite=$2; shift 2 ;;
    --suite=*) suite=${1#*=}; shift ;;
    --device) device=$2; shift 2 ;;
    --device=*) device=${1#*=}; shift ;;
    *) gate_args+=("$1"); shift ;;
  esac
done
# No GPU, no gate: say so before minutes of building (the binaries would say it after).
if command -v nvidia-smi > /dev/null 2>&1; then
  if ! nvidia-smi -L 2> /dev/null | grep -q '^GPU '; then
    echo "gpucheck: no GPU: nvidia-smi lists none ($(nvidia-smi -L 2>&1 | head -1))" >&2
    exit 2
  fi
elif ! compgen -G '/dev/nvidia[0-9]*' > /dev/null; then
  echo "gpucheck: no GPU: no nvidia-smi and no /dev/nvidia* device" >&2
  exit 2
fi
"$GPUCHECK_ROOT/ci/deps.sh" --build-only
build=${BUILD_DIR:-$GPUCHECK_ROOT/build-gate}
# Build device code only for the GPU the gate measures (one arch instead of sm_80 and sm_90);
# CUDAARCHS or an explicit -DCMAKE_CUDA_ARCHITECTURES in GPUCHECK_CMAKE_ARGS wins.
arch_args=()
if [[ -z ${CUDAARCHS:-} && ${GPUCHECK_CMAKE_ARGS:-} != *CMAKE_CUDA_ARCHITECTURES* ]] && command -v nvidia-smi > /dev/null; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i "$device" 2> /dev/null | head -1 | tr -d ' .\r' || true)
  # Only an arch this nvcc can build; otherwise the default (its PTX is JIT-compiled).
  archs=$(nvcc --list-gpu-arch 2> /dev/null || true)
  if [[ $cc =~ ^[0-9]+$ ]] && grep -qx "compute_$cc" <<< "$archs"; then
    arch_args=("-DCMAKE_CUDA_ARCHITECTURES=$cc")
  fi
fi
gpucheck_generator "$build"
# shellcheck disable=SC2086  # GPUCHECK_CMAKE_ARGS is a list of words
t0=$SECONDS
cmake -S "$GPUCHECK_ROOT" -B "$build" ${GPUCHECK_GENERATOR[@]+"${GPUCHECK_GENERATOR[@]}"} -DGPUCHECK_BUILD_TESTS=OFF ${arch_args[@]+"${arch_args[@]}"} ${GPUCHECK_CMAKE_ARGS:-} > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 2; }
t1=$SECONDS
cmake --build "$build" -j "$(nproc)" > "$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 2; }
generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$build/CMakeCache.txt")
echo "gate: configured in $((t1 - t0)) s, built in $((SECONDS - t1)) s ($generator, $(nproc) jobs, CUDA archs $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt"))"

results=${RESULTS_DIR:-$GPUCHECK_ROOT/results/$suite}
rm -rf "$results"
gpucheck_history ${gate_args[@]+"${gate_args[@]}"}
gate_args+=(${GPUCHECK_HISTORY_ARGS[@]+"${GPUCHECK_HISTORY_ARGS[@]}"})
exec "$build/bin/gpucheck" gate --bin-dir "$build/bin" --baseline "$GPUCHECK_ROOT/baselines" --out "$results" \
  --suite "$suite" --device "$device" ${gate_args[@]+"${gate_args[@]}"}
