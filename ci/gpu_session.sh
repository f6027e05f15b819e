#!/usr/bin/env bash
# One call on a GPU machine: configure, build, run every test (unit + gpu) and each binary's
# quick suite (the CTest smoke runs), then the PyTorch anchors if a script is given, and
# leave logs and JSON under $OUT (default ./out), packed into $OUT/session.tgz. Used for the figures in docs/PERFORMANCE.md.
# Usage: ci/gpu_session.sh [SOURCE_DIR] [ANCHORS_SCRIPT]
# Where PyTorch is installed it also runs ci/torch_reference.py beside gpucheck's bmm and conv
# cases (about two minutes; GPUCHECK_TORCH_REFERENCE=0 skips it). BUILD_DIR sets the build.
set -uo pipefail
src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
anchors=${2:-}
out=${OUT:-$PWD/out}
build=${BUILD_DIR:-/tmp/gpucheck-build}
mkdir -p "$out/results"
export NCCL_NVLS_ENABLE=0
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
} > "$out/env.log" 2>&1
t0=$(date +%s)
if ! { cmake -S "$src" -B "$build" -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUCHECK_WERROR=${GPUCHECK_WERROR:-ON} \
         ${GPUCHECK_GIT_COMMIT:+-DGPUCHECK_GIT_COMMIT=$GPUCHECK_GIT_COMMIT} &&
       cmake --build "$build" -j"$(nproc)"; } > "$out/build.log" 2>&1; then
  tail -60 "$out/build.log"
  exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
ctest --test-dir "$build" --output-on-failure -j1 > "$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|Failed|\*\*\*|SKIPPED|wall|PASS:|FAIL" "$out/ctest.log" | tail -60
cp "$build"/benchmarks/*.quick.json "$out/results/" 2>/dev/null
if [[ -n $anchors ]]; then
  PYTHONUNBUFFERED=1 python3 "$anchors" --json "$out/results/torch_anchors.json" > "$out/anchors.log" 2>&1
  cat "$out/anchors.log"
fi
# PyTorch on the same bmm and convolution cases, timed both ways (ci/torch_reference.py), and
# gpucheck's full-suite runs of those cases, lined up by `gpucheck compare` (TFLOPS, 5%).
if [[ ${GPUCHECK_TORCH_REFERENCE:-1} == 1 ]] && python3 -c "import torch" 2>/dev/null; then
  mkdir -p "$out/reference"
  PYTHONUNBUFFERED=1 python3 "$src/ci/torch_reference.py" --json "$out/results/torch_reference.json" \
    > "$out/torch_reference.log" 2>&1 || echo "torch_reference.py failed (see torch_reference.log)"
  shapes='n64c(64h56w56k64r3s3|256h56w56k64r1s1|128h28w28k128r3s3)/'
  "$build/bin/bench_bmm" --suite full --benchmark_filter='^bmm/strided(_mbk)?/' \
    --benchmark_out="$out/reference/bench_bmm.json" --benchmark_out_format=json > "$out/reference_runs.log" 2>&1
  "$build/bin/bench_conv" --suite full --benchmark_filter="^conv/.*/$shapes" \
    --benchmark_out="$out/reference/bench_conv.json" --benchmark_out_format=json >> "$out/reference_runs.log" 2>&1
  "$build/bin/gpucheck" compare "$out/results/torch_reference.json" "$out/reference" --metric TFLOPS --threshold 5 \
    --no-thresholds --color never --format markdown --out "$out/reference.md" > "$out/reference.log" 2>&1
  echo "gpucheck vs PyTorch on bmm and conv (device time, 5%): exit $?"
  cat "$out/reference.log"
fi
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv >> "$out/env.log" 2>&1
# Everything in one archive (the device tool brings back at most 8 files).
pack=$(mktemp --suffix=.tgz)
if tar czf "$pack" -C "$out" --exclude=./session.tgz .; then
  find "$out" -mindepth 1 -delete && mv "$pack" "$out/session.tgz"
fi
exit $rc
