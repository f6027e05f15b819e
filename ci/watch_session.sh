#!/usr/bin/env bash
# The H200 part of issue 21's "Must show", in one run of about 4 minutes (docs/WATCH.md):
#   1. gpucheck watch beside each of the five workloads of the check-up table
#      (ci/examples/watch_workloads.py): the verdict each must get is checked
#   2. the GEMM loop's rate with and without watch, three runs each, interleaved: within 2%
#   3. ci/examples/train_step.py under watch --step twice (a baseline and a second run), then
#      with its input function sleeping half a step; gpucheck compare of the second run against
#      the first must pass (exit 0), of the starved run must fail (exit 1)
# Every watch.json, results.json and watch.html is kept under OUT (the watch.json files are the
# recorded timelines the verdict tests can take as fixtures); OUT/summary.log says what passed.
# Usage: ci/watch_session.sh BUILD_DIR OUT_DIR      (needs PyTorch with CUDA, torchvision)
set -uo pipefail
if (( $# != 2 )); then echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; fi
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd) || exit 2
out=$2
mkdir -p "$out" && out=$(cd "$out" && pwd)
gpucheck=$build/bin/gpucheck
[[ -x $gpucheck ]] || { echo "$0: no $gpucheck (build first)" >&2; exit 2; }
py=${PYTHON:-python3}
work=$src/ci/examples/watch_workloads.py
summary=$out/summary.log
: > "$summary"
failures=0
note() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$summary"; }
check() {  # check WHAT OK(0/1) DETAIL
  if [[ $2 == 0 ]]; then note "PASS $1: $3"; else note "FAIL $1: $3"; failures=$((failures + 1)); fi
}
bound_of() { "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"]["bound"])' "$1" 2>/dev/null; }
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv > "$out/env.log" 2>&1
"$py" -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)' >> "$out/env.log" 2>&1

# 1. The five workloads, each with the verdict a performance engineer gives it.
declare -A expect=([gemm]=compute_bound [tiny_kernels]=launch_bound [starved]=starved [h2d]=pcie_bound [hbm_copy]=memory_bound)
for w in gemm tiny_kernels starved h2d hbm_copy; do
  step=()
  [[ $w == starved ]] && step=(--step 'step [0-9]+ ([0-9.]+) ms')
  "$gpucheck" watch --devices 0 --out "$out/$w" --name "watch/$w" "${step[@]}" -- "$py" "$work" "$w" --seconds 6 \
    > "$out/$w.log" 2>&1
  rc=$?
  got=$(bound_of "$out/$w/watch.json")
  grep -m1 '^gpucheck watch:' "$out/$w.log" >> "$summary"
  [[ $rc == 0 && $got == "${expect[$w]}" ]]; check "verdict $w" $? "expected ${expect[$w]}, got ${got:-none} (exit $rc)"
done

# 2. The GEMM loop with and without watch, interleaved (the order alternates which runs first).
rates_with=() rates_without=()
for i in 1 2 3; do
  for mode in without with; do
    if [[ $mode == with ]]; then
      "$gpucheck" watch --devices 0 --out "$out/overhead_$i" -- "$py" "$work" gemm --seconds 6 > "$out/overhead_with_$i.log" 2>&1
      rates_with+=("$(sed -n 's/^gemm: \([0-9.]*\) TFLOP\/s$/\1/p' "$out/overhead_with_$i.log")")
    else
      "$py" "$work" gemm --seconds 6 > "$out/overhead_without_$i.log" 2>&1
      rates_without+=("$(sed -n 's/^gemm: \([0-9.]*\) TFLOP\/s$/\1/p' "$out/overhead_without_$i.log")")
    fi
  done
done
overhead=$("$py" - "${rates_without[*]}" "${rates_with[*]}" <<'PY'
import sys
a = [float(x) for x in sys.argv[1].split()]; b = [float(x) for x in sys.argv[2].split()]
ma, mb = sum(a) / len(a), sum(b) / len(b)
print(f"{(mb - ma) / ma * 100:+.2f} {ma:.1f} {mb:.1f} {' '.join(map(str, a))} | {' '.join(map(str, b))}")
PY
)
read -r delta mean_without mean_with runs <<< "$overhead"
awk -v d="$delta" 'BEGIN { exit !(d >= -2 && d <= 2) }'
check "watch overhead" $? "GEMM loop ${mean_without} TFLOP/s without, ${mean_with} with watch (${delta}%; runs without | with: ${runs})"

# 3. The reference step: a baseline, a second run, and a starved run; compare them.
regex='step [0-9]+ ([0-9.]+) ms'
train=(--model resnet50 --batch 256 --amp bf16 --channels-last --steps 50)
for run in base second; do
  "$gpucheck" watch --devices 0 --out "$out/train_$run" --name watch/train_step --step "$regex" -- \
    "$py" "$src/ci/examples/train_step.py" "${train[@]}" > "$out/train_$run.log" 2>&1
  check "train_step $run" $? "$(grep -m1 '^gpucheck watch:' "$out/train_$run.log")"
done
half=$("$py" -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["steps"]["median_ms"] / 2, 1))' "$out/train_base/watch.json" 2>/dev/null || echo 20)
"$gpucheck" watch --devices 0 --out "$out/train_starved" --name watch/train_step --step "$regex" -- \
  "$py" "$src/ci/examples/train_step.py" "${train[@]}" --sleep-input "$half" > "$out/train_starved.log" 2>&1
note "train_step starved (input sleeps ${half} ms): $(grep -m1 '^gpucheck watch:' "$out/train_starved.log")"
[[ $(bound_of "$out/train_starved/watch.json") == starved ]]; check "starved step verdict" $? "$(bound_of "$out/train_starved/watch.json")"
"$gpucheck" compare "$out/train_base/results.json" "$out/train_second/results.json" > "$out/compare_second.txt" 2>&1
rc=$?; [[ $rc == 0 ]]; check "compare second run against the baseline" $? "exit $rc (0 expected)"
"$gpucheck" compare "$out/train_base/results.json" "$out/train_starved/results.json" > "$out/compare_starved.txt" 2>&1
rc=$?; [[ $rc == 1 ]]; check "compare starved run against the baseline" $? "exit $rc (1 expected)"
"$gpucheck" baseline update --suite watch --root "$out/baselines" "$out/train_base/results.json" > "$out/baseline.txt" 2>&1
check "baseline update takes results.json" $? "$(tail -1 "$out/baseline.txt")"
"$gpucheck" report "$out/train_base/results.json" "$out/train_starved/results.json" --html "$out/report.html" > "$out/report.md" 2>&1
check "report takes results.json" $? "$out/report.html"

note "$failures failed"
tar -C "$out" -czf "$out/watch_session.tgz" --exclude=watch_session.tgz . 2>/dev/null
exit $(( failures > 0 ))
