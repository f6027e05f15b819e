#!/usr/bin/env bash
# Golden outputs of the gpucheck commands: every byte that compare, report, accept, baseline and
# the gate (on fake binaries) print or write, with its exit status, for a fixed set of inputs
# (the crafted pairs, the stored H200 baseline against a recorded H200 run, the accept fixture,
# every malformed file). Recorded once before the compare/ tree was rearranged (issue 16) so
# that the rearrangement could be shown to change nothing; a change of behaviour since then
# re-records with intent (`golden.sh GPUCHECK SOURCE WORK record`) and the diff is reviewed.
# Usage: golden.sh GPUCHECK SOURCE_DIR WORKDIR check|record
set -uo pipefail
gpucheck=$(realpath "$1") src=$(realpath "$2") work=$(realpath -m "$3") mode=${4:-check}
fx=$src/tests/unit/compare/fixtures
golden=$fx/golden_cli
fake=$src/tests/unit/compare/fake_bench/fake_bench.sh
rm -rf "$work" && mkdir -p "$work/got"
cd "$work" || exit 1
unset GITHUB_STEP_SUMMARY CUDA_VISIBLE_DEVICES FAKE_GPU FAKE_HOST FAKE_BASELINE NO_COLOR

# Paths, wall times and what NVML sees vary by machine and run; nothing else may.
normalise() {
  sed -e "s|$work|<WORK>|g" -e "s|$src|<SRC>|g" \
      -e 's/[0-9]\+\.[0-9]\+ s\b/<T> s/g' -e 's/"seconds": *[0-9.e+-]\+/"seconds":<T>/g' \
      -e 's/time="[0-9.]*"/time="<T>"/g' -e 's/"date": *"[^"]*"/"date":"<DATE>"/g' \
      -e 's/\.tmp-[0-9]\+/.tmp-<PID>/g' -e 's/pid [0-9]\+/pid <PID>/g' \
      -e 's/^\(- \)\?GPU activity.*/\1GPU activity: <what NVML sees on this machine>/' -e '/^\(- \)\?  GPU [0-9]\+ /d'
}

# run NAME [FILE...] -- COMMAND...: records rc, stdout, stderr and the files named before --.
run() {
  local name=$1 files=()
  shift
  while [[ $1 != -- ]]; do files+=("$1"); shift; done
  shift
  rm -f "${files[@]}"
  "$@" > o.txt 2> e.txt
  local rc=$?
  {
    echo "== rc $rc"
    echo "== stdout"; cat o.txt
    echo "== stderr"; cat e.txt
    for f in "${files[@]}"; do
      echo "== file $f"
      if [[ -f $f ]]; then cat "$f"; else echo "(absent)"; fi
    done
  } | normalise > "got/$name.txt"
}

g=$gpucheck
c=$fx/crafted
base=$fx/h200_baseline_9c0d709.json  # the stored H200 baseline and thresholds as they were when recorded
rec=$fx/h200_quick_06ccf6c.json
thr=$fx/thresholds_9c0d709.json

# compare: every crafted pair, every format.
for cur in same_in_us slower_9pct slower_10pct_exact slower_10.01pct slower_11pct faster_30pct missing; do
  run "compare_$cur" -- $g compare "$c/baseline.json" "$c/$cur.json" --no-thresholds --color never
done
for fmt in markdown json junit; do
  run "compare_slower_11pct_$fmt" -- $g compare "$c/baseline.json" "$c/slower_11pct.json" --no-thresholds --format $fmt
done
run compare_missing_allowed -- $g compare "$c/baseline.json" "$c/missing.json" --no-thresholds --allow-missing
run compare_metric_tflops -- $g compare "$c/baseline.json" "$c/faster_30pct.json" --no-thresholds --metric TFLOPS
run compare_metric_typo -- $g compare "$c/baseline.json" "$c/faster_30pct.json" --no-thresholds --metric TFLOP
run compare_threshold_5 -- $g compare "$c/baseline.json" "$c/slower_9pct.json" --no-thresholds --threshold 5
run compare_folder -- $g compare "$fx/folder" "$fx/folder" --no-thresholds
run compare_golden_md out.md -- $g compare "$fx/golden/baseline.json" "$fx/golden/current.json" --no-thresholds --format markdown --out out.md
run compare_interop -- $g compare "$fx/interop/ours_run1.json" "$fx/interop/ours_run2.json" --thresholds "$thr"
# The stored H200 baseline against a recorded H200 run, with the thresholds of the tree.
for fmt in terminal markdown json junit; do
  run "compare_h200_$fmt" -- $g compare "$base" "$rec" --thresholds "$thr" --format $fmt --color never
done
run compare_h200_reverse -- $g compare "$rec" "$base" --thresholds "$thr" --color never
# compare: bad input.
run compare_usage -- $g compare
run compare_one_arg -- $g compare "$c/baseline.json"
run compare_bad_threshold -- $g compare "$c/baseline.json" "$c/slower_9pct.json" --threshold abc
run compare_unknown_option -- $g compare "$c/baseline.json" "$c/slower_9pct.json" --treshold 5
for f in "$fx"/malformed/*.json; do
  run "malformed_$(basename "$f" .json)" -- $g compare "$c/baseline.json" "$f" --no-thresholds
done
run malformed_folder -- $g compare "$c/baseline.json" "$fx/malformed/folder_with_other_files" --no-thresholds
run malformed_folder_dup -- $g compare "$c/baseline.json" "$fx/folder_dup" --no-thresholds

# report: Markdown and HTML on real H200 files and on the crafted ones.
run report_h200 r.md r.html -- $g report "$base" "$rec" --markdown r.md --html r.html
run report_interop r.md -- $g report "$fx/interop/ours_run1.json" "$fx/interop/ours_run2.json" --markdown r.md
run report_crafted r.md r.html -- $g report "$c/baseline.json" "$c/slower_11pct.json" "$c/missing.json" --markdown r.md --html r.html
run report_metric r.md -- $g report "$c/baseline.json" "$c/faster_30pct.json" --metric real_time --markdown r.md
run report_stdout -- $g report "$c/baseline.json" "$c/faster_30pct.json"
run report_usage -- $g report

# accept --results: the H200 fixture in every format, and edited copies.
acc=$fx/accept/h200_gpu0.json
specs=$src/baselines/specs.json conf=$src/baselines/accept.json
for fmt in terminal markdown json; do
  run "accept_h200_$fmt" -- $g accept --results "$acc" --specs "$specs" --config "$conf" --format $fmt
done
run accept_h200_out acc/accept.json acc/accept.md -- $g accept --results "$acc" --specs "$specs" --config "$conf" --out acc
sed -e 's/"pcie_gen_load": *5/"pcie_gen_load": 4/' -e 's/"pcie_gen_current": *"5"/"pcie_gen_current": "4"/' "$acc" > gen4.json
run accept_gen4 -- $g accept --results gen4.json --specs "$specs" --config "$conf"
run accept_rec -- $g accept --results "$rec" --specs "$specs" --config "$conf"
run accept_usage -- $g accept --results

# baseline: update into a fresh store, list, refuse another GPU.
mkdir -p store
run baseline_update -- $g baseline update --suite quick --root store "$rec"
run baseline_list -- $g baseline list --root store
run baseline_update_again -- $g baseline update --suite quick --root store "$rec"
run baseline_file store/nvidia-h200/quick.json -- true
run help -- $g --help
run unknown_command -- $g comapre

# The gate on fake binaries: a pass and a confirmed regression.
mkdir -p bin state
export FAKE_STATE=$work/state FAKE_PID=4242  # the fake binaries' jitter is seeded by it
bench() {
  printf '#!/usr/bin/env bash\nexec bash "%s" %s %s "$@"\n' "$fake" "$2" "${1#bench_}" > "bin/$1"
  chmod +x "bin/$1"
}
bench bench_steady steady
bench bench_memory steady
FAKE_BASELINE=1 $g run --bin-dir bin --out gbase --repetitions 5 --timeout 20 > /dev/null 2>&1
$g baseline update --suite quick --root gstore gbase/results.json > /dev/null 2>&1
run gate_pass out/compare.md out/junit.xml -- $g gate --bin-dir bin --baseline gstore --out out
bench bench_regress regress
rm -f bin/bench_memory
FAKE_BASELINE=1 $g run --bin-dir bin --out gbase2 --repetitions 5 --timeout 20 > /dev/null 2>&1
$g baseline update --suite quick --root gstore2 gbase2/results.json > /dev/null 2>&1
run gate_confirmed out2/compare.md -- $g gate --bin-dir bin --baseline gstore2 --out out2
run gate_no_baseline -- $g gate --bin-dir bin --baseline nowhere --out out3

if [[ $mode == record ]]; then
  rm -rf "$golden" && mkdir -p "$golden" && cp got/*.txt "$golden/"
  echo "recorded $(ls "$golden" | wc -l) golden outputs in $golden"
  exit 0
fi
failures=0 total=0
for f in "$golden"/*.txt; do
  total=$((total + 1))
  n=$(basename "$f")
  if ! diff -u "$f" "got/$n" > "got/$n.diff"; then
    echo "DIFFERS: $n"; head -40 "got/$n.diff"
    failures=$((failures + 1))
  fi
done
for f in got/*.txt; do
  [[ -f $golden/$(basename "$f") ]] || { echo "NEW (not recorded): $(basename "$f")"; failures=$((failures + 1)); }
done
echo "golden outputs: $((total - failures)) of $total match"
((failures == 0))
