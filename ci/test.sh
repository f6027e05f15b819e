#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds (warnings are errors)
# and runs the tests, printing each phase's time, the total, and one summary line of the tests
# (passed, skipped with their reasons, failed). GPU tests skip with a reason without a device.
#
# Without a GPU the quick tests build no CUDA code (no test there would run it) and the C++ at
# -O0; --all (CI) compiles the CUDA code for sm_80 alone, without the sm_90a Hopper kernels,
# and the C++ at -O3, with -Werror. With a GPU (nvidia-smi -L lists one,
# or GPUCHECK_REQUIRE_GPU=1) it is built as a release build is (sm_80;sm_90, plus sm_90a), since
# the GPU tests run it. The long suites (CTest labels fuzz, slurm, stress) are neither built nor
# run unless --all; --all then also times the tool itself (bench_tool) against
# baselines/cpu/bench_tool.json, report only.
# Usage: ci/test.sh [--all] [extra cmake args...]   (BUILD_DIR overrides the build folder)
set -euo pipefail
source "$(dirname "$0")/env.sh"
all=0
if [[ ${1:-} == --all ]]; then all=1; shift; fi
for a in "$@"; do  # the rest go to cmake: a second --all there would fail only after the deps
  [[ $a == --all ]] && { echo "ci/test.sh: --all must come first (usage: ci/test.sh [--all] [extra cmake args...])" >&2; exit 2; }
done
case ${GPUCHECK_REQUIRE_GPU:-0} in
  0 | 1) ;;
  *) echo "ci/test.sh: GPUCHECK_REQUIRE_GPU=${GPUCHECK_REQUIRE_GPU} is neither 0 nor 1" >&2; exit 2 ;;
esac
build=${BUILD_DIR:-$GPUCHECK_ROOT/build}
long_labels='^(fuzz|slurm|stress)$'

now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }  # whole seconds
start_all=$(now)
phases=()
# run_phase NAME CMD...: runs CMD and prints its time; on failure says so, the total, and exits.
run_phase() {
  local name=$1 t0 rc=0 secs
  shift
  t0=$(now)
  "$@" || rc=$?
  secs=$(since "$t0")
  phases+=("$name $secs s")
  if ((rc != 0)); then
    echo "ci/test.sh: $name failed after $secs s (exit $rc)"
    print_total
    exit "$rc"
  fi
  echo "ci/test.sh: $name took $secs s"
}
print_total() {
  local secs list
  secs=$(since "$start_all")
  list=$(printf '%s, ' "${phases[@]}")
  echo "ci/test.sh: total $((secs / 60)) min $((secs % 60)) s (${list%, })"
}

# Which build: the GPU tests' or the quick one; the reason in one line.
if [[ ${GPUCHECK_REQUIRE_GPU:-0} == 1 ]]; then
  gpu=1 why="GPUCHECK_REQUIRE_GPU=1"
elif gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU '); then
  gpu=1 why="nvidia-smi -L lists $gpus GPU(s)"
elif command -v nvidia-smi > /dev/null 2>&1; then
  gpu=0 why="no GPU (nvidia-smi -L lists none)"
else
  gpu=0 why="no GPU (no nvidia-smi)"
fi
cuda_opt=(-DGPUCHECK_ENABLE_CUDA=ON)  # said each time: the build folder's cache may hold OFF
cxx_opt="-O3 -DNDEBUG"                 # CMake's Release flags, likewise said each time
if [[ " $* " == *" -DGPUCHECK_ENABLE_CUDA=OFF "* ]]; then
  archs="80" cuda_opt=()
  echo "ci/test.sh: no CUDA code (-DGPUCHECK_ENABLE_CUDA=OFF): the compare tool and the CPU tests only"
elif ((gpu)); then
  archs="80;90"
  echo "ci/test.sh: CUDA for sm_80;sm_90 plus the sm_90a Hopper kernels, as a release build: $why, the GPU tests run them"
elif ((all)); then
  archs="80"
  echo "ci/test.sh: CUDA for sm_80 only, no sm_90a Hopper kernels: $why, the GPU tests skip (compiled, not run)"
else
  archs="80"
  cuda_opt=(-DGPUCHECK_ENABLE_CUDA=OFF)
  # -O0: nothing the quick tests run is timed, and a fresh clone on 2 cores took 4 min 56 s at
  # -O1 and 3 min 31 s at -O0 (tests 29 -> 43 s of it). Warnings that need the optimiser's
  # analysis show in --all and GPU runs, which build as a release does.
  cxx_opt="-O0 -DNDEBUG"
  echo "ci/test.sh: no CUDA code and C++ at -O0: $why, so no test would run CUDA code or time ours; ci/test.sh --all builds both as a release does"
fi
if ((all)); then
  long=ON deps_args=()
  echo "ci/test.sh: --all: the quick tests, the long suites (labels fuzz, slurm, stress), then bench_tool"
else
  long=OFF deps_args=(--quick)
  echo "ci/test.sh: quick tests; the long suites (labels fuzz, slurm, stress) run with --all"
fi

run_phase deps "$GPUCHECK_ROOT/ci/deps.sh" ${deps_args[@]+"${deps_args[@]}"}
gpucheck_generator "$build"
run_phase configure cmake -S "$GPUCHECK_ROOT" -B "$build" ${GPUCHECK_GENERATOR[@]+"${GPUCHECK_GENERATOR[@]}"} \
  -DGPUCHECK_WERROR=ON "-DCMAKE_CUDA_ARCHITECTURES=$archs" -DGPUCHECK_LONG_TESTS=$long ${cuda_opt[@]+"${cuda_opt[@]}"} "-DCMAKE_CXX_FLAGS_RELEASE=$cxx_opt" "$@"
run_phase build cmake --build "$build" -j "$(nproc)"

junit=$build/ctest-junit.xml
rm -f "$junit"
ctest_args=(--test-dir "$build" --output-on-failure -j "$(nproc)" --output-junit "$junit")
((all)) || ctest_args+=(-LE "$long_labels")
tests_rc=0
t0=$(now)
ctest "${ctest_args[@]}" || tests_rc=$?
secs=$(since "$t0")
phases+=("tests $secs s")
echo "ci/test.sh: tests took $secs s"
if command -v python3 > /dev/null 2>&1; then
  python3 "$GPUCHECK_ROOT/ci/ctest_summary.py" "$junit" || true
else
  echo "ci/test.sh: no python3: no summary line (ctest's own count is above)"
fi

# The tool's own speed against the stored CPU baseline: printed, never the run's status.
if ((all)); then
  bench_out=$build/bench_tool.json
  echo "ci/test.sh: bench_tool against baselines/cpu/bench_tool.json: report only (a shared, noisy machine: a slower figure here never fails the run)"
  t0=$(now)
  if "$build/bin/bench_tool" --benchmark_repetitions=3 --benchmark_out="$bench_out" --benchmark_out_format=json \
       > "$build/bench_tool.txt"; then
    bench_rc=0
    # (--no-thresholds: baselines/thresholds.json is the GPU suites'; tool/* takes the default)
    "$build/bin/gpucheck" compare "$GPUCHECK_ROOT/baselines/cpu/bench_tool.json" "$bench_out" --no-thresholds ||
      bench_rc=$?
    echo "ci/test.sh: gpucheck compare exited $bench_rc (report only; 0 none slower, 1 slower past the threshold, 2 bad input)"
  else
    echo "ci/test.sh: bench_tool exited $? (report only; its output: $build/bench_tool.txt)"
  fi
  phases+=("bench $(since "$t0") s")
fi
print_total
exit "$tests_rc"
