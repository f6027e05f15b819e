#!/usr/bin/env bash
# Loads our results in Google Benchmark's own tools/compare.py (Debian: libbenchmark-tools):
# the fixture written like our binaries write (names, counters, NaN counters, repetitions,
# our context keys) and the baseline gpucheck stores from it. Exit 77 (skip) without it.
# Usage: compare_py_interop.sh GPUCHECK FIXTURES WORKDIR
set -euo pipefail
gpucheck=$1 fixtures=$2 work=$3
compare_py=/usr/share/benchmark/compare.py
py=/usr/bin/python3
if [[ ! -f $compare_py ]]; then echo "SKIP: $compare_py not installed (apt-get install libbenchmark-tools)"; exit 77; fi
if [[ ! -x $py ]] || ! $py -c 'import numpy, scipy' 2>/dev/null; then
  echo "SKIP: $py lacks numpy/scipy (apt-get install python3-numpy python3-scipy)"; exit 77
fi
rm -rf "$work" && mkdir -p "$work"
cp "$fixtures/interop/ours_run1.json" "$fixtures/interop/ours_run2.json" "$work/"

check() {  # compare.py must exit 0, print our benchmark names and its U test line
  local out=$1
  grep -q 'matmul/cublaslt/bf16/8192x8192x8192/manual_time_pvalue' "$out" || { echo "no U test line in compare.py output"; cat "$out"; exit 1; }
  grep -q 'pcie/h2d/pinned/256MiB/manual_time_median' "$out" || { echo "no aggregate line in compare.py output"; cat "$out"; exit 1; }
}

$py "$compare_py" --no-color benchmarks "$work/ours_run1.json" "$work/ours_run2.json" > "$work/plain.txt"
check "$work/plain.txt"

"$gpucheck" baseline update --suite quick --root "$work/baselines" "$work/ours_run1.json"
stored="$work/baselines/nvidia-h200/quick.json"
$py "$compare_py" --no-color benchmarks "$stored" "$work/ours_run2.json" > "$work/stored.txt"
check "$work/stored.txt"
# the stored baseline is strict JSON (NaN counters dropped), as any JSON tool wants it
$py -c 'import json,sys; json.load(open(sys.argv[1]), parse_constant=lambda c: sys.exit("bare "+c))' "$stored"
echo "compare.py loaded our results and the stored baseline"
