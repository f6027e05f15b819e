#!/usr/bin/env bash
# One call on a GPU machine (the figures in docs/ come from it): runs the steps named in
# GPUCHECK_STEPS (comma-separated, in this order) and leaves logs and JSON under $OUT
# (default ./out), packed into $OUT/session.tgz (the device tool brings back few files).
#   test       the README's test command, GPUCHECK_REQUIRE_GPU=1 ci/test.sh (every GPU test
#              must run, none may skip); its smoke runs' JSON is the "after" quick suite
#   before     the quick suite of an older tree ($GPUCHECK_OLD_TREE, an exported checkout),
#              built and run on this same machine, then `gpucheck compare --threshold 3`
#              against the after run (per case real_time and rate)
#   attention  bench_attention's full suite ($ATTENTION_FILTER)
#   torch      ci/torch_reference.py: PyTorch's counterparts of the full suites (filter
#              $TORCH_FILTER), then of the matmul cases named by $TORCH_CASES_ARGS (default:
#              the GEMMs of acceptance and docs/PERFORMANCE.md, bf16/fp16/fp8 8192^3)
#   extra      $GPUCHECK_EXTRA, a command run with the build's bin folder as $BIN
#   baseline   the quick suite with --benchmark_repetitions=$REPS (default 5), stored with
#              `gpucheck baseline update --suite quick` under $OUT/baselines (last: it is
#              what a later lease's gate runs against)
# Usage: GPUCHECK_STEPS=test,before OUT=... ci/gpu_session.sh
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/out}
build=${BUILD_DIR:-/tmp/gpucheck-build}
steps=",${GPUCHECK_STEPS:-test},extra,"
mkdir -p "$out/results"
export NCCL_NVLS_ENABLE=0
# GPUCHECK_DEADLINE_S (default 560): a step whose estimate would end past it is skipped, so
# that the archive is always written inside the device tool's limit.
t_start=$(date +%s)
deadline=${GPUCHECK_DEADLINE_S:-560}
has() {  # has STEP [ESTIMATED_SECONDS]
  [[ $steps == *",$1,"* ]] || return 1
  local left=$(( deadline - ($(date +%s) - t_start) ))
  if (( ${2:-0} > left )); then note "skipping $1: needs ~${2} s, ${left} s left"; return 1; fi
}
stamp() { date -u +%H:%M:%S; }
summary="$out/summary.log"
note() { echo "[$(stamp)] $*" | tee -a "$summary"; }
{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=index,name,driver_version,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
  nproc; grep -m1 "model name" /proc/cpuinfo
} > "$out/env.log" 2>&1
note "session in $src, steps ${steps//,/ }"
bin=$build/bin
rc=0

if has test 150; then
  t0=$(date +%s)
  GPUCHECK_REQUIRE_GPU=1 BUILD_DIR=$build bash "$src/ci/test.sh" -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/test.log" 2>&1
  trc=$?
  note "test (GPUCHECK_REQUIRE_GPU=1 ci/test.sh): exit $trc in $(( $(date +%s) - t0 )) s"
  grep -E "tests passed|tests failed|\(Failed\)|\(Skipped\)|\*\*\*Failed|Not Run" "$out/test.log" | tail -40 | tee -a "$summary"
  grep -E "^wall|Build files|build:" "$out/test.log" | head -20 >> "$summary"
  ((trc == 0)) || rc=1
  mkdir -p "$out/results/after"
  cp "$build"/benchmarks/bench_*.quick.json "$out/results/after/" 2>/dev/null
  for f in "$out"/results/after/*.quick.json; do [[ -f $f ]] && mv "$f" "${f%.quick.json}.json"; done
fi

if [[ -n ${GPUCHECK_OLD_TREE:-} ]] && has before 90; then
  old=/tmp/gpucheck-old
  t0=$(date +%s)
  if cmake -S "$GPUCHECK_OLD_TREE" -B "$old" -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUCHECK_BUILD_TESTS=OFF > "$out/old-build.log" 2>&1 &&
     cmake --build "$old" -j"$(nproc)" >> "$out/old-build.log" 2>&1; then
    note "old tree built in $(( $(date +%s) - t0 )) s"
    mkdir -p "$out/results/before"
    t0=$(date +%s)
    for b in "$old"/bin/bench_*; do
      n=$(basename "$b")
      "$b" --suite quick --benchmark_out="$out/results/before/$n.json" --benchmark_out_format=json > "$out/before-$n.log" 2>&1 ||
        note "before: $n exited $?"
    done
    note "before: quick suites in $(( $(date +%s) - t0 )) s"
    "$bin/gpucheck" compare "$out/results/before" "$out/results/after" --threshold 3 --no-thresholds --color never \
      --format markdown --out "$out/before_after.md" > "$out/before_after.txt" 2>&1
    note "before/after real_time at 3%: exit $?"
    tail -5 "$out/before_after.txt" | tee -a "$summary"
  else
    note "old tree did not build (old-build.log)"
  fi
fi


if [[ -x $bin/bench_attention ]] && has attention 150; then
  t0=$(date +%s)
  "$bin/bench_attention" --suite full --benchmark_filter="${ATTENTION_FILTER:-.}" --benchmark_out="$out/results/attention_full.json" --benchmark_out_format=json \
    > "$out/attention.log" 2>&1
  note "attention full suite: exit $? in $(( $(date +%s) - t0 )) s"
  grep -E "^attention/" "$out/attention.log" | cut -c1-200 >> "$summary"
fi

if python3 -c "import torch" 2>/dev/null && has torch 150; then
  t0=$(date +%s)
  PYTHONUNBUFFERED=1 python3 "$src/ci/torch_reference.py" --filter "${TORCH_FILTER:-^attention/}" \
    --json "$out/results/torch_reference.json" > "$out/torch_reference.log" 2>&1
  note "torch_reference: exit $? in $(( $(date +%s) - t0 )) s"
  if [[ -x $bin/bench_matmul ]]; then
    # shellcheck disable=SC2086  # TORCH_CASES_ARGS is a list of words (axes)
    "$bin/bench_matmul" ${TORCH_CASES_ARGS:--a variant=cublaslt -a dtype=bf16,fp16,fp8e4m3 -a M=8192} --list \
      > "$out/torch_cases.txt" 2> "$out/torch_cases.log"
    PYTHONUNBUFFERED=1 python3 "$src/ci/torch_reference.py" --cases "$out/torch_cases.txt" \
      --json "$out/results/torch_matmul.json" >> "$out/torch_reference.log" 2>&1
    note "torch_reference --cases (matmul): exit $?"
  fi
fi

if [[ -n ${GPUCHECK_EXTRA:-} ]] && has extra "${EXTRA_ESTIMATE_S:-60}"; then
  t0=$(date +%s)
  BIN=$bin OUT=$out bash -c "$GPUCHECK_EXTRA" > "$out/extra.log" 2>&1
  note "extra: exit $? in $(( $(date +%s) - t0 )) s"
  tail -60 "$out/extra.log" >> "$summary"
fi

if has baseline 120; then
  reps=${REPS:-5}
  mkdir -p "$out/results/base"
  t0=$(date +%s)
  while read -r n; do
    [[ -n $n ]] || continue
    "$bin/$n" --suite quick --benchmark_repetitions="$reps" --benchmark_out="$out/results/base/$n.json" \
      --benchmark_out_format=json > "$out/base-$n.log" 2>&1 || note "baseline: $n exited $?"
  done < "$bin/gpucheck-benchmarks.txt"
  note "baseline: quick suite x$reps in $(( $(date +%s) - t0 )) s"
  "$bin/gpucheck" baseline update --suite quick --root "$out/baselines" "$out/results/base" 2>&1 | tee -a "$summary"
fi

nvidia-smi --query-gpu=clocks.sm,temperature.gpu,clocks_event_reasons.active --format=csv >> "$out/env.log" 2>&1
# Everything in one archive (the device tool brings back at most 8 files).
pack=$(mktemp --suffix=.tgz)
if tar czf "$pack" -C "$out" --exclude=./session.tgz --exclude=./summary.log .; then
  find "$out" -mindepth 1 ! -name summary.log -delete && mv "$pack" "$out/session.tgz"
fi
cat "$summary"
exit $rc
