#!/usr/bin/env bash
# The GEMMs users run, ours beside PyTorch's (issue 40): bench_matmul's llm suite (Llama-3 8B
# and 70B projections as F.linear runs them, 1-8192 tokens) and the squares 4096 and 8192, bf16
# and fp16, and PyTorch's F.linear / torch.mm of the same names (ci/torch_reference.py --cases
# --parity), the same timing on both sides (a power burst: 0.3 s idle, 5 warm-up calls, 20 held
# samples, the median). The two sides alternate N times in this one process tree (odd runs ours
# first, even runs PyTorch first), each a fresh process; then one table, OUT/parity.md (printed)
# and OUT/parity.csv: per case the medians over the runs, ours / PyTorch, the SM clock each ran
# at, each side's spread across the runs, and the kernel each ran ("kernels differ" where so).
# Time: about 100 cases a side, each under a second (0.3 s idle, set-up, a burst of at most
# ~0.3 s): an estimate of 2 minutes per alternation on an H200, about 6 minutes for N=3;
# PARITY_FP8=1 adds the fp8 rows (half as many again). Not yet measured.
# Usage: ci/gemm_parity.sh BUILD_DIR OUT [N]   (N: alternations, default 3; python3 with torch;
#        one GPU, device 0 on both sides)
#   PARITY_FP8=1   include the fp8 (e4m3) rows of the llm suite
# Writes under OUT: cases.txt, run<i>/{ours-llm,ours-squares,torch}.{json,log}, parity.md,
# parity.csv, summary.log. Exit 0 when every run wrote its results, 1 when one failed (the table
# is still written and says what it could not read), 2 on bad usage.
set -uo pipefail
if (( $# < 2 || $# > 3 )) || [[ ${3:-3} != +([0-9]) ]] || (( ${3:-3} < 1 )); then
  echo "usage: $0 BUILD_DIR OUT [N]   (N >= 1 alternations, default 3)" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
bench=$(cd "$1" && pwd)/bin/bench_matmul
[[ -x $bench ]] || { echo "$0: $bench is missing (build bench_matmul first)" >&2; exit 2; }
out=$2
runs=${3:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
summary=$out/summary.log
: > "$summary"
note() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$summary"; }

# The cases, as bench_matmul lists them (no GPU needed): one list for both sides.
squares=(-a variant=cublaslt -a dtype=bf16,fp16 -a M=4096,8192)
filter=()
[[ ${PARITY_FP8:-0} == 1 ]] || filter=(--benchmark_filter=-/fp8e4m3/)
if ! { "$bench" --suite llm --list "${filter[@]}" && "$bench" "${squares[@]}" --list; } > "$out/cases.txt"; then
  echo "$0: $bench --list failed" >&2
  exit 2
fi
note "$(wc -l < "$out/cases.txt") cases a side, alternations: $runs; ours: $bench; PyTorch: $py ci/torch_reference.py"

rc=0
ours() {  # ours DIR: the llm suite, then the squares
  "$bench" --suite llm "${filter[@]}" --benchmark_out="$1/ours-llm.json" --benchmark_out_format=json \
    > "$1/ours-llm.log" 2>&1 || { note "ours (llm) exit $? (see $1/ours-llm.log)"; rc=1; }
  "$bench" "${squares[@]}" --benchmark_out="$1/ours-squares.json" --benchmark_out_format=json \
    > "$1/ours-squares.log" 2>&1 || { note "ours (squares) exit $? (see $1/ours-squares.log)"; rc=1; }
}
theirs() {  # theirs DIR: PyTorch's counterparts of the same names, kernel and SM clock recorded
  "$py" "$src/ci/torch_reference.py" --cases "$out/cases.txt" --filter '^matmul/(linear|cublaslt)/' --parity \
    --json "$1/torch.json" > "$1/torch.log" 2>&1 || { note "PyTorch exit $? (see $1/torch.log)"; rc=1; }
}
for (( i = 1; i <= runs; i++ )); do
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
