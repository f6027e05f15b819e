#!/usr/bin/env bash
# The GEMMs users run, ours beside PyTorch's (issue 40): bench_matmul's llm suite (Llama-3 8B
# and 70B projections as F.linear runs them, 1-8192 tokens) and the squares 4096 and 8192, bf16
# and fp16, and PyTorch's F.linear / torch.mm of the same names (ci/torch_reference.py --cases
# --parity), timed the same way on both sides, the kernel named on one untimed call (ours: its
# verification, before timing; PyTorch's: torch.profiler, once its last row is timed):
# the squares and the decode rows (at most 16 tokens) as a power burst (0.3 s idle, then the
# card cooled to the same limits, 5 warm-up calls, at least 0.2 s of them on decode rows, one
# call sizing the batch, 20 held samples, each one CUDA graph replay of its calls on decode
# rows, the median); the F.linear rows of more tokens on
# the power limit's plateau (0.3 s idle, no cool-down, 5 warm-up calls, samples of at least
# 5 ms queued back to back, each one CUDA graph replay of its calls, 0.2 s of them not
# counted, then 0.4 s counted, the median); F.linear rows of at most 128 tokens in 5 such
# groups, each after a write and free of 256 MiB, the fastest group. Every
# F.linear row rotates its operands over copies that keep each out of the L2 between uses
# (benchmarks/cases/matmul.hpp; docs/MATMUL.md).
# The cool-down: GPUCHECK_COOLDOWN, read by bench_matmul's harness and by torch_reference.py
# alike: before each burst, NVML's board power and GPU temperature under limits (capped at
# max_s; or, with the power under its limit, the temperature settled: no new low for settle_s).
# Unless set, this script reads the card's idle power and temperature at the start (nvidia-smi)
# and sets power_W = idle + PARITY_COOL_DW (50), temp_C = idle + PARITY_COOL_DT (5), max_s =
# PARITY_COOL_MAX_S (10), settle_s = PARITY_COOL_SETTLE_S (2); PARITY_COOLDOWN=off leaves it out
# (the fixed 0.3 s only).
# The two sides alternate N times in this one process tree (odd runs ours first, even runs
# PyTorch first: A B, B A, A B), each a fresh process; then one table, OUT/parity.md (printed)
# and OUT/parity.csv (docs/MATMUL.md says what it shows), ending with issue 40's criteria, one
# PASS/FAIL line each.
# Time (measured 2026-12-04, GPU-4c0d3cfe and GPU-d57c4b0c, methods 7 and 8): 318-324 s an
# alternation of the 100 rows a side, PyTorch's profiler pass included; 466 s where 15 bursts'
# cool-downs hit their cap, before settle_s (bound: 2 x 36 x max_s more per alternation if
# every one does; the table's notes name the rows). PARITY_FP8=1 adds the fp8 rows (half as many again);
# PARITY_FP8=only runs the llm suite's fp8 rows alone (no squares: they are bf16 and fp16):
# 142-148 s an alternation.
# Usage: ci/gemm_parity.sh BUILD_DIR OUT [N]   (N: alternations, default 3; python3 with torch;
#        one GPU, device 0 on both sides)
#   PARITY_FP8=1     include the fp8 (e4m3) rows of the llm suite
#   PARITY_FP8=only  the llm suite's fp8 rows and nothing else
#   PARITY_ROWS=RE   only the rows (llm suite, fp8 included, and squares) whose names, as
#                    --list prints them, match the regular expression RE (Google Benchmark's
#                    --benchmark_filter), e.g. the rows a table failed; it replaces PARITY_FP8
#   PARITY_APPEND=1  add N runs after those already in OUT (e.g. one alternation per call),
#                    with OUT/cooldown.txt's rule; the table covers them all
#   PARITY_COOLDOWN=on|off, PARITY_COOL_DW, _DT, _MAX_S, _SETTLE_S (numbers of 0 or more): above
# Writes under OUT: cases.txt, cooldown.txt, run<i>/{ours-llm,ours-squares,torch}.{json,log},
# parity.md, parity.csv, summary.log. Several machines' OUT side by side, with the criteria over
# all: python3 ci/torch_reference.py --parity-machines OUT1 OUT2 ... Exit 0 when every run wrote its results, 1 when one
# failed (the table is still written and says what it could not read), 2 on bad usage.
set -uo pipefail
if (( $# < 2 || $# > 3 )) || [[ ! ${3:-3} =~ ^[1-9][0-9]{0,5}$ ]]; then  # no leading 0: bash reads 08 as octal
  echo "usage: $0 BUILD_DIR OUT [N]   (N >= 1 alternations, default 3)" >&2
  exit 2
fi
# Every setting checked before anything is made or run: awk would read a bad number as 0.
for v in PARITY_COOL_DW PARITY_COOL_DT PARITY_COOL_MAX_S PARITY_COOL_SETTLE_S; do
  [[ -z ${!v:-} || ${!v} =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$0: $v=${!v}: not a number of 0 or more" >&2; exit 2; }
done
[[ ${PARITY_APPEND:-0} == [01] ]] || { echo "$0: PARITY_APPEND=$PARITY_APPEND (0 or 1)" >&2; exit 2; }
[[ ${PARITY_COOLDOWN:-on} == @(on|off) ]] || { echo "$0: PARITY_COOLDOWN=$PARITY_COOLDOWN (on or off)" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" 2> /dev/null && pwd) || { echo "$0: no build folder $1" >&2; exit 2; }
bench=$build/bin/bench_matmul
[[ -x $bench ]] || { echo "$0: $bench is missing (build bench_matmul first)" >&2; exit 2; }
runs=${3:-3}
out=$(mkdir -p "$2" 2> /dev/null && cd "$2" && pwd) || { echo "$0: $2: cannot make OUT there" >&2; exit 2; }
py=${PYTHON:-python3}
summary=$out/summary.log
[[ ${PARITY_APPEND:-0} == 1 ]] || : > "$summary"
note() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$summary"; }

# The cases, as bench_matmul lists them (no GPU needed): one list for both sides.
squares=(-a variant=cublaslt -a "dtype=bf16,fp16" -a "M=4096,8192")  # one argument each, commas and all
case ${PARITY_FP8:-0} in
  0) filter=(--benchmark_filter=-/fp8e4m3/) ;;
  1) filter=() ;;
  only) filter=(--benchmark_filter=/fp8e4m3/); squares=() ;;
  *) echo "$0: PARITY_FP8=${PARITY_FP8} (0, 1 or only)" >&2; exit 2 ;;
esac
squares_run=("${squares[@]}")
if [[ -n ${PARITY_ROWS:-} ]]; then
  filter=(--benchmark_filter="$PARITY_ROWS")
  (( ${#squares[@]} )) && squares+=("${filter[@]}")
fi
if ! { llm_rows=$("$bench" --suite llm --list "${filter[@]}") && squares_rows=$(
         (( ${#squares[@]} == 0 )) || "$bench" "${squares[@]}" --list); } 2> "$out/list.log"; then
  echo "$0: $bench --list failed: $(grep -v "no CUDA device" "$out/list.log" | grep -m1 .)" >&2
  exit 2
fi
{ [[ -z $llm_rows ]] || echo "$llm_rows"; [[ -z $squares_rows ]] || echo "$squares_rows"; } > "$out/cases.txt"
[[ -s $out/cases.txt ]] || { echo "$0: no case matches PARITY_ROWS=${PARITY_ROWS:-}" >&2; exit 2; }
if [[ -n ${PARITY_ROWS:-} ]]; then
  # The runs name their cases NAME/iterations:1/manual_time, where RE's $ would match nothing:
  # each run gets the exact names RE listed instead.
  filter=(--benchmark_filter="^($(paste -sd'|' <<< "$llm_rows"))/")
  squares_run+=(--benchmark_filter="^($(paste -sd'|' <<< "$squares_rows"))/")
fi
[[ -n $squares_rows ]] || squares_run=()

# The cool-down rule, the same for both sides (GPUCHECK_COOLDOWN is read by both).
first=1
if [[ ${PARITY_APPEND:-0} == 1 ]]; then
  for d in "$out"/run*; do
    [[ -d $d && ${d##*/run} == +([0-9]) ]] && (( ${d##*/run} >= first )) && first=$(( ${d##*/run} + 1 ))
  done
  [[ -z ${GPUCHECK_COOLDOWN:-} && -s $out/cooldown.txt ]] && GPUCHECK_COOLDOWN=$(< "$out/cooldown.txt")
fi
if [[ ${PARITY_COOLDOWN:-on} == off ]]; then
  unset GPUCHECK_COOLDOWN
elif [[ -z ${GPUCHECK_COOLDOWN:-} ]]; then
  gpu=${CUDA_VISIBLE_DEVICES:-0}
  idle=$(nvidia-smi -i "${gpu%%,*}" --query-gpu=power.draw,temperature.gpu --format=csv,noheader,nounits 2>/dev/null)
  if [[ $idle =~ ^\ *([0-9.]+),\ *([0-9]+)\ *$ ]]; then
    GPUCHECK_COOLDOWN=$(awk -v p="${BASH_REMATCH[1]}" -v t="${BASH_REMATCH[2]}" -v dw="${PARITY_COOL_DW:-50}" \
      -v dt="${PARITY_COOL_DT:-5}" -v m="${PARITY_COOL_MAX_S:-10}" -v st="${PARITY_COOL_SETTLE_S:-2}" \
      'BEGIN { printf "power_W=%.0f,temp_C=%d,max_s=%g,settle_s=%g", p + dw, t + dt, m, st }')
    note "idle at the start: ${BASH_REMATCH[1]} W, ${BASH_REMATCH[2]} C"
  else
    note "no idle reading from nvidia-smi: no cool-down (the fixed 0.3 s only); set GPUCHECK_COOLDOWN to have one"
  fi
fi
if [[ -n ${GPUCHECK_COOLDOWN:-} ]]; then
  if ! "$py" - "$src/ci/torch_reference.py" "$GPUCHECK_COOLDOWN" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("torch_reference", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
try:
    mod.parse_cooldown(sys.argv[2])
except ValueError as e:
    sys.exit(f"GPUCHECK_COOLDOWN={sys.argv[2]}: {e}")
PY
  then exit 2; fi
  export GPUCHECK_COOLDOWN
  echo "$GPUCHECK_COOLDOWN" > "$out/cooldown.txt"
else
  rm -f "$out/cooldown.txt"
fi
note "$(wc -l < "$out/cases.txt") cases a side, alternations: $runs from run $first; cool-down: ${GPUCHECK_COOLDOWN:-none}; ours: $bench; PyTorch: $py ci/torch_reference.py"

rc=0
ours() {  # ours DIR: the llm suite, then the squares
  if [[ -n $llm_rows ]]; then
    "$bench" --suite llm "${filter[@]}" --benchmark_out="$1/ours-llm.json" --benchmark_out_format=json \
      > "$1/ours-llm.log" 2>&1 || { note "ours (llm) exit $? (see $1/ours-llm.log)"; rc=1; }
  fi
  (( ${#squares_run[@]} )) || return 0
  "$bench" "${squares_run[@]}" --benchmark_out="$1/ours-squares.json" --benchmark_out_format=json \
    > "$1/ours-squares.log" 2>&1 || { note "ours (squares) exit $? (see $1/ours-squares.log)"; rc=1; }
}
theirs() {  # theirs DIR: PyTorch's counterparts of the same names, kernel and SM clock recorded
  "$py" "$src/ci/torch_reference.py" --cases "$out/cases.txt" --filter '^matmul/(linear|cublaslt)/' --parity \
    --json "$1/torch.json" > "$1/torch.log" 2>&1 || { note "PyTorch exit $? (see $1/torch.log)"; rc=1; }
}
for (( i = first; i < first + runs; i++ )); do
  d=$out/run$i
  mkdir -p "$d"
  if (( i % 2 )); then
    note "run $i: ours"; ours "$d"; note "run $i: PyTorch"; theirs "$d"
  else
    note "run $i: PyTorch"; theirs "$d"; note "run $i: ours"; ours "$d"
  fi
done
note "table: $out/parity.md, $out/parity.csv"
"$py" "$src/ci/torch_reference.py" --parity-table "$out" || rc=1
exit $rc
