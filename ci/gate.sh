#!/usr/bin/env bash
# The pre-merge gate: installs what is missing, builds, then `gpucheck gate` runs every
# benchmark binary in its own process on the GPU it finds, compares with the stored baseline of
# that GPU (baselines/<gpu-slug>/<host-slug>/<suite>.json when this host keeps one, else
# baselines/<gpu-slug>/<suite>.json) and re-measures cases past their limit before failing.
# docs/GATE.md explains the verdicts.
# Exit: 0 pass; 1 a confirmed regression, a missing figure or a binary that errored (crash,
# hang, exit 2); 2 bad input (a --suite other than gpucheck's quick, full, accept, burn, llm; a
# --device that is not an index: both refused before anything is built), no GPU, no baseline
# (it prints the line that stores one).
# Usage: ci/gate.sh [--suite quick|full] [--device N] [extra `gpucheck gate` flags: --threshold,
#   --thresholds, --allow-missing, --filter, --timeout, --confirm-repetitions, ...]
#   RESULTS_DIR (default results/<suite>) receives results.json, compare.md, compare.json,
#   junit.xml and logs/; BUILD_DIR the build (default build-gate).
#   GPUCHECK_HISTORY: the results history every run is kept in (`--history`, docs/HISTORY.md;
#   default results/history.db, `off` for none; ignored when the flags name one).
#   GPUCHECK_BASE_REF (e.g. origin/main, for a pre-merge gate): builds the merge base of HEAD and
#   that ref too (BUILD_DIR-base) and judges the cases measured in fresh processes (the launch and
#   pageable copy cases) against its processes, each run beside one of this build's, by the median
#   pair (`--base-bin-dir`); GPUCHECK_BASE_BIN names such binaries built elsewhere. Without either
#   those cases are shown, not gated.
set -euo pipefail
source "$(dirname "$0")/env.sh"
suite=quick device=0
gate_args=()
while (($#)); do
  case $1 in
    --suite | --device)
      (($# >= 2)) || { echo "gpucheck: $1 needs a value" >&2; exit 2; }
      if [[ $1 == --suite ]]; then suite=$2; else device=$2; fi
      shift 2 ;;
    --suite=*) suite=${1#*=}; shift ;;
    --device=*) device=${1#*=}; shift ;;
    *) gate_args+=("$1"); shift ;;
  esac
done
# Checked before minutes of building (gpucheck gate would refuse them after).
[[ $suite == @(quick|full|accept|burn|llm) ]] || { echo "gpucheck: --suite $suite: not quick, full, accept, burn or llm" >&2; exit 2; }
[[ $device =~ ^[0-9]{1,4}$ ]] || { echo "gpucheck: --device $device: not a GPU index (0, 1, ...)" >&2; exit 2; }
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
# build_tree SOURCE BUILD: configure and build one tree with the gate's settings.
build_tree() {
  local src=$1 dir=$2 t0 t1
  mkdir -p "$(dirname "$dir")"  # its logs go beside it
  gpucheck_generator "$dir"
  t0=$SECONDS
  # shellcheck disable=SC2086  # GPUCHECK_CMAKE_ARGS is a list of words
  cmake -S "$src" -B "$dir" ${GPUCHECK_GENERATOR[@]+"${GPUCHECK_GENERATOR[@]}"} -DGPUCHECK_BUILD_TESTS=OFF ${arch_args[@]+"${arch_args[@]}"} ${GPUCHECK_CMAKE_ARGS:-} > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 2; }
  t1=$SECONDS
  cmake --build "$dir" -j "$(nproc)" > "$dir.build.log" 2>&1 || { tail -40 "$dir.build.log"; exit 2; }
  local generator
  generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$dir/CMakeCache.txt")
  echo "gate: $dir configured in $((t1 - t0)) s, built in $((SECONDS - t1)) s ($generator, $(nproc) jobs, CUDA archs $(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$dir/CMakeCache.txt"))"
}
build_tree "$GPUCHECK_ROOT" "$build"
# The base build, whose processes judge the fresh-process cases, each beside one of this build's:
# GPUCHECK_BASE_BIN names its binaries, GPUCHECK_BASE_REF a ref whose merge base with HEAD is
# built here (BUILD_DIR-base, rebuilt when the merge base moves). Flags naming one win.
base_args=()
if [[ " ${gate_args[*]-} " != *" --base-bin-dir"* ]]; then
  if [[ -n ${GPUCHECK_BASE_BIN:-} ]]; then
    base_args=(--base-bin-dir "$GPUCHECK_BASE_BIN")
  elif [[ -n ${GPUCHECK_BASE_REF:-} ]]; then
    gpucheck_base_source "$build" || exit 2
    echo "gate: base build: $GPUCHECK_BASE_SHA, the merge base of HEAD and $GPUCHECK_BASE_REF"
    build_tree "$build-base-src" "$build-base"
    base_args=(--base-bin-dir "$build-base/bin")
  fi
fi

results=${RESULTS_DIR:-$GPUCHECK_ROOT/results/$suite}
rm -rf "$results"
gpucheck_history ${gate_args[@]+"${gate_args[@]}"}
gate_args+=(${GPUCHECK_HISTORY_ARGS[@]+"${GPUCHECK_HISTORY_ARGS[@]}"} ${base_args[@]+"${base_args[@]}"})
exec "$build/bin/gpucheck" gate --bin-dir "$build/bin" --baseline "$GPUCHECK_ROOT/baselines" --out "$results" \
  --suite "$suite" --device "$device" ${gate_args[@]+"${gate_args[@]}"}
