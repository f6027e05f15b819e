#!/usr/bin/env bash
# What the gpucheck commands print or write for a fixed set of inputs (the crafted pairs, the
# stored H200 baseline against a recorded H200 run, the accept fixture, every malformed file),
# checked two ways:
# - byte-exact against fixtures/golden_cli/NAME.txt (`run` without `expect`): the machine-readable
#   outputs (compare JSON and JUnit, accept JSON, the stored baseline) and the one-line errors with
#   their exit codes. A change there is a contract change: re-record with intent
#   (`golden.sh GPUCHECK SOURCE WORK record`) and review the diff.
# - by what matters (`expect` after `run`): the human renderings (terminal tables, Markdown, HTML)
#   must exit as before and show each case with its verdict; their wording and layout are free.
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

# expect NAME RC [@SECTION] ERE...: the human rendering NAME (recorded by `run`) exited RC and each
# extended regex matches a line of its current section: all of it, or after `@stdout`, `@stderr`
# or `@FILE` only that part. Such outputs get no golden file.
human=() failures=0
expect() {
  local name=$1 rc=$2 f=got/$1.txt section= p
  shift 2
  human+=("$name")
  if ! grep -qx "== rc $rc" "$f"; then
    echo "CHECK FAILED: $name: $(head -1 "$f"), expected rc $rc"; failures=$((failures + 1))
  fi
  for p in "$@"; do
    if [[ $p == @* ]]; then section=${p#@}; continue; fi
    if ! part "$f" "$section" | grep -E -- "$p" > /dev/null; then  # not -q: pipefail and SIGPIPE
      echo "CHECK FAILED: $name: no line of ${section:-the output} matches: $p"; failures=$((failures + 1))
    fi
  done
}
part() {  # part FILE SECTION: the lines of one section of a recorded output (all when SECTION is empty)
  case $2 in
    '') cat "$1" ;;
    stdout|stderr) awk -v h="== $2" '/^== /{on = ($0 == h); next} on' "$1" ;;
    *) awk -v h="== file $2" '/^== /{on = ($0 == h); next} on' "$1" ;;
  esac
}

g=$gpucheck
c=$fx/crafted
base=$fx/h200_baseline_9c0d709.json  # the stored H200 baseline and thresholds as they were when recorded
rec=$fx/h200_quick_06ccf6c.json
thr=$fx/thresholds_9c0d709.json
M=matmul/cublaslt/bf16/8192x8192x8192 C="memory/copy.{1,2}kernel/fp32/4GiB"  # the crafted pairs' two cases (Markdown escapes _)

# compare: every crafted pair in the terminal table (exit status, each row's verdict), then the
# machine-readable formats byte for byte.
crafted() {  # crafted CURRENT RC MATMUL_VERDICT COPY_VERDICT
  run "compare_$1" -- $g compare "$c/baseline.json" "$c/$1.json" --no-thresholds --color never
  expect "compare_$1" "$2" "^$M .* $3 " "^$C .* $4 "
}
crafted same_in_us 0 ok ok
crafted slower_9pct 0 ok ok
crafted slower_10pct_exact 0 ok ok
crafted slower_10.01pct 1 REGRESSION ok
crafted slower_11pct 1 REGRESSION ok
crafted faster_30pct 0 improved ok
crafted missing 1 MISSING ok
run compare_slower_11pct_markdown -- $g compare "$c/baseline.json" "$c/slower_11pct.json" --no-thresholds --format markdown
expect compare_slower_11pct_markdown 1 "FAIL" "^\| $M \|.*REGRESSION" "^\| $C \|.*\| ok \|"
for fmt in json junit; do
  run "compare_slower_11pct_$fmt" -- $g compare "$c/baseline.json" "$c/slower_11pct.json" --no-thresholds --format $fmt
done
run compare_missing_allowed -- $g compare "$c/baseline.json" "$c/missing.json" --no-thresholds --allow-missing
expect compare_missing_allowed 0 "^$M .* MISSING " "^$C .* ok " "PASS"
run compare_metric_tflops -- $g compare "$c/baseline.json" "$c/faster_30pct.json" --no-thresholds --metric TFLOPS
expect compare_metric_tflops 0 "^$M +1100 +1571 .* improved " "^$C .* no metric "
run compare_metric_typo -- $g compare "$c/baseline.json" "$c/faster_30pct.json" --no-thresholds --metric TFLOP
run compare_threshold_5 -- $g compare "$c/baseline.json" "$c/slower_9pct.json" --no-thresholds --threshold 5
expect compare_threshold_5 1 "^$M .* REGRESSION .*limit 5%" "^$C .* ok "
run compare_folder -- $g compare "$fx/folder" "$fx/folder" --no-thresholds
expect compare_folder 0 "^$M .* ok " "^$C .* ok " "PASS"
run compare_golden_md out.md -- $g compare "$fx/golden/baseline.json" "$fx/golden/current.json" --no-thresholds --format markdown --out out.md
expect compare_golden_md 1 @stdout "^$M .* REGRESSION " @out.md "FAIL" "driver \| 550\.54\.15 \| 560\.35\.03" \
  "^\| $M \|.*REGRESSION" "^\| pcie/h2d/pageable/256MiB \|.*MISSING" "^\| nccl/allreduce/fp32/1GiB/g8 \|.*ERRORED" \
  "^\| launch/eager/empty/100 \|.*unconfirmed" "^\| matmul/cublaslt/fp16/4096x4096x4096 \|.*improved" \
  "^\| attention/fused/fp16/b8h16s4096d128/causal \|.*\| new \|" "^\| $C \|.*\| ok \|"
run compare_interop -- $g compare "$fx/interop/ours_run1.json" "$fx/interop/ours_run2.json" --thresholds "$thr"
expect compare_interop 0 'report_only glob "pcie/\*/pageable/\*" matches no benchmark' \
  "^pcie/h2d/pinned/256MiB .* host differs " "^$M .* ok .*p=0\.00794" "^launch/graph/empty/100 .* ok " "PASS"
# The stored H200 baseline against a recorded H200 run, with the thresholds of the tree.
h200_rows=("^nccl/allreduce/fp32/1MiB/g1 .* REGRESSION " "^attention/cudnn/fp16/b4h16s4096d128 .* MISSING "
  "^launch/graph_instantiate/empty/100 .* host differs \(noisy\)" "^$M .* ok " "^ +pcie/h2d/pageable/256MiB .*\+36\.16%"
  "4 regressed, 9 missing" "FAIL")
run compare_h200_terminal -- $g compare "$base" "$rec" --thresholds "$thr" --format terminal --color never
expect compare_h200_terminal 1 "${h200_rows[@]}" "throttle reasons +none -> none \| sw_power_cap"
run compare_h200_markdown -- $g compare "$base" "$rec" --thresholds "$thr" --format markdown --color never
expect compare_h200_markdown 1 "FAIL" "^\| nccl/allreduce/fp32/1MiB/g1 \|.*REGRESSION" \
  "^\| attention/cudnn/fp16/b4h16s4096d128 \|.*MISSING" "^\| launch/graph.{1,2}instantiate/empty/100 \|.*host differs" \
  "^\| $M \|.*\| ok \|" "pcie/h2d/pageable/256MiB.*\+36\.16%"
for fmt in json junit; do
  run "compare_h200_$fmt" -- $g compare "$base" "$rec" --thresholds "$thr" --format $fmt --color never
done
run compare_h200_reverse -- $g compare "$rec" "$base" --thresholds "$thr" --color never
expect compare_h200_reverse 0 "^nccl/allreduce/fp32/1MiB/g1 .* improved " "^attention/cudnn/fp16/b4h16s4096d128 .* new " \
  "^$M .* ok " "PASS"
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

# report: Markdown and HTML on real H200 files and on the crafted ones: every case with its figures
# (and "· N% of spec" where the specs.json beside the binary knows the GPU).
run report_h200 r.md r.html -- $g report "$base" "$rec" --markdown r.md --html r.html
expect report_h200 0 @r.md "0\.95x .*48 cases" "^\| $M \| TFLOP/s \| 799\.5 TFLOP/s[^|]*\| 800\.4 TFLOP/s \(1\.00x\)" \
  "^\| nccl/allreduce/fp32/1MiB/g1 \|.*\(0\.40x" @r.html "^<!DOCTYPE html>" "<svg" "$M</td>.*800\.4"
run report_interop r.md -- $g report "$fx/interop/ours_run1.json" "$fx/interop/ours_run2.json" --markdown r.md
expect report_interop 0 @r.md "0\.95x .*4 cases" "^\| launch/graph/empty/100 \| 0\.95x \| ±0\.7%" \
  "^\| $M \| TFLOP/s \| 1098 TFLOP/s[^|]*\| 1046 TFLOP/s \(0\.95x"
run report_crafted r.md r.html -- $g report "$c/baseline.json" "$c/slower_11pct.json" "$c/missing.json" --markdown r.md --html r.html
expect report_crafted 0 @r.md "^\| $M \| TFLOP/s \| 1100 TFLOP/s[^|]*\| 990\.5 TFLOP/s \(0\.90x.*\| absent \|" \
  "^\| memory/copy\\\\_kernel/fp32/4GiB \| GB/s \| 4295 GB/s[^|]*\| 4295 GB/s \(1\.00x\)[^|]*\| 4295 GB/s \(1\.00x\)" @r.html "$M</td>"
run report_metric r.md -- $g report "$c/baseline.json" "$c/faster_30pct.json" --metric real_time --markdown r.md
expect report_metric 0 @r.md "^\| $M \| time \| 1\.000 ms \| 700\.000 us \(1\.43x"
run report_stdout -- $g report "$c/baseline.json" "$c/faster_30pct.json"
expect report_stdout 0 @stdout "1\.20x .*2 cases" "^\| $M \| TFLOP/s \| 1100 TFLOP/s[^|]*\| 1571 TFLOP/s \(1\.43x"
run report_usage -- $g report

# accept --results: the H200 fixture in every format, and edited copies.
acc=$fx/accept/h200_gpu0.json
specs=$src/baselines/specs.json conf=$src/baselines/accept.json
accept_rows=("pcie.{1,2}link .*Gen5 x16.*pass" "gemm bf16 .*800\.4 TFLOP/s.*pass" "burn bf16 .*676\.3 TFLOP/s.*pass"
  "alike .*not checked" "nccl allreduce g1 .*reported" "PASS" "0 failed, 15 passed, 1 reported, 1 not checked")
run accept_h200_terminal -- $g accept --results "$acc" --specs "$specs" --config "$conf" --format terminal
expect accept_h200_terminal 0 "${accept_rows[@]}"
run accept_h200_markdown -- $g accept --results "$acc" --specs "$specs" --config "$conf" --format markdown
expect accept_h200_markdown 0 "${accept_rows[@]}"
run accept_h200_json -- $g accept --results "$acc" --specs "$specs" --config "$conf" --format json
run accept_h200_out acc/accept.json acc/accept.md -- $g accept --results "$acc" --specs "$specs" --config "$conf" --out acc
expect accept_h200_out 0 @acc/accept.md "${accept_rows[@]}"
run accept_h200_out_json -- cat acc/accept.json  # the file --out wrote, byte for byte
sed -e 's/"pcie_gen_load": *5/"pcie_gen_load": 4/' -e 's/"pcie_gen_current": *"5"/"pcie_gen_current": "4"/' "$acc" > gen4.json
run accept_gen4 -- $g accept --results gen4.json --specs "$specs" --config "$conf"
expect accept_gen4 1 "pcie.{1,2}link .*Gen4 x16 .*Gen5 x16.*FAIL" "pcie.{1,2}bandwidth h2d .*pass" "FAIL" "1 failed, 14 passed"
run accept_rec -- $g accept --results "$rec" --specs "$specs" --config "$conf"
expect accept_rec 0 "pcie.{1,2}link .*Gen5 x16.*pass" "ecc uncorrected .*not checked" "burn bf16 .*not checked" "PASS" \
  "0 failed, 11 passed, 1 reported, 6 not checked"
run accept_usage -- $g accept --results

# baseline: update into a fresh store, list, refuse another GPU.
mkdir -p store
run baseline_update -- $g baseline update --suite quick --root store "$rec"
expect baseline_update 0 "store/nvidia-h200/quick\.json.* 48 benchmarks"
run baseline_list -- $g baseline list --root store
run baseline_update_again -- $g baseline update --suite quick --root store "$rec"
expect baseline_update_again 0 "store/nvidia-h200/quick\.json.* 48 benchmarks" "0 added, 0 removed, 0 of 48 moved"
run baseline_file store/nvidia-h200/quick.json -- true
run help -- $g --help
expect help 0 "gpucheck gate " "gpucheck run " "gpucheck compare " "gpucheck baseline " "gpucheck report " \
  "gpucheck accept " "gpucheck watch "
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
expect gate_pass 0 @stdout "^memory/a/fp32/1MiB .* ok " "^steady/b/fp32/4MiB .* ok " "PASS" \
  @out/compare.md "^\| steady/a/fp32/1MiB \|.*\| ok \|"
run gate_pass_junit -- cat out/junit.xml  # the JUnit file, byte for byte
bench bench_regress regress
rm -f bin/bench_memory
FAKE_BASELINE=1 $g run --bin-dir bin --out gbase2 --repetitions 5 --timeout 20 > /dev/null 2>&1
$g baseline update --suite quick --root gstore2 gbase2/results.json > /dev/null 2>&1
run gate_confirmed out2/compare.md -- $g gate --bin-dir bin --baseline gstore2 --out out2
expect gate_confirmed 1 @stdout "^regress/a/fp32/1MiB .* REGRESSION .*confirmed" "^regress/b/fp32/4MiB .* ok " \
  "^ +confirmed +regress/a/fp32/1MiB" "FAIL" @out2/compare.md "^\| regress/a/fp32/1MiB \|.*REGRESSION"
run gate_no_baseline -- $g gate --bin-dir bin --baseline nowhere --out out3

is_human() { local h; for h in "${human[@]}"; do [[ $h == "$1" ]] && return 0; done; return 1; }
if [[ $mode == record ]]; then
  rm -rf "$golden" && mkdir -p "$golden"
  for f in got/*.txt; do is_human "$(basename "$f" .txt)" || cp "$f" "$golden/"; done
  echo "recorded $(ls "$golden" | wc -l) golden outputs in $golden ($failures human check(s) failed)"
  exit 0
fi
total=0 checked=${#human[@]}
for f in "$golden"/*.txt; do
  total=$((total + 1))
  n=$(basename "$f")
  if ! diff -u "$f" "got/$n" > "got/$n.diff"; then
    echo "DIFFERS: $n"; head -40 "got/$n.diff"
    failures=$((failures + 1))
  fi
done
for f in got/*.txt; do
  n=$(basename "$f" .txt)
  is_human "$n" || [[ -f $golden/$n.txt ]] || { echo "NEW (not recorded): $n.txt"; failures=$((failures + 1)); }
done
echo "golden outputs: $total byte-exact, $checked human renderings checked; $failures failure(s)"
((failures == 0))
