#!/usr/bin/env bash
# `gpucheck run` with a real benchmark binary on the device: the runner's containment (a PID
# namespace, a cgroup or the subreaper) must leave CUDA able to start. A namespace that saw the
# host's /proc once made every binary under the gate say "no CUDA device found" while the
# binaries run by hand passed. Exit 77 (Skipped) without a device unless GPUCHECK_REQUIRE_GPU=1.
# Usage: run_gate_real.sh GPUCHECK BIN_DIR WORK
set -uo pipefail
gpucheck=$1 bin_dir=$2 work=$3
rm -rf "$work" && mkdir -p "$work/bin"
ln -s "$bin_dir/bench_launch" "$work/bin/bench_launch"
"$gpucheck" run --bin-dir "$work/bin" --out "$work/out" --filter '^launch/graph/empty/' --timeout 120 > "$work/run.txt" 2>&1
rc=$?
cat "$work/run.txt"
if grep -q "no CUDA device found" "$work/run.txt"; then
  if [[ ${GPUCHECK_REQUIRE_GPU:-0} != 1 ]] && ! nvidia-smi -L 2> /dev/null | grep -q '^GPU '; then
    echo "SKIPPED: no CUDA device"
    exit 77
  fi
  echo "FAIL: a GPU is expected (GPUCHECK_REQUIRE_GPU=1 or nvidia-smi lists one), yet the binary under the runner found none (containment: $(tail -1 "$work/out/logs/bench_launch.stdout.log" 2> /dev/null))"
  exit 1
fi
((rc == 0)) || { echo "FAIL: gpucheck run exited $rc"; exit 1; }
grep -q "1 case ok" "$work/run.txt" || { echo "FAIL: no case measured"; exit 1; }
echo "ok: $(tail -1 "$work/out/logs/bench_launch.stdout.log")"
