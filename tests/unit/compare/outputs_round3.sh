#!/usr/bin/env bash
# Outputs and inputs, round three (a hostile-input campaign of 2026-12-05), end to end with the
# fake bench: no output of the gate may name its history (compare.md, a log, the step summary
# would replace the database); a file the gate's logs go to that is a FIFO is refused, never
# waited on; a gate that stops after its binaries ran leaves no compare files of an earlier run
# beside the new results; a --baseline that is a FIFO is refused before anything runs; a new
# output inside an input folder (also through a link) is refused; a report whose second output
# cannot be written leaves the first as it was; a benchmark list naming itself and a typo in
# GPUCHECK_CONTAINMENT are bad input. Each case: its exit status, and the bytes that must not move.
# Usage: outputs_round3.sh GPUCHECK WORKDIR
set -uo pipefail
G=$1 work=$2
fake=$(cd "$(dirname "$0")" && pwd)/fake_bench/fake_bench.sh
fixtures=$(cd "$(dirname "$0")" && pwd)/fixtures
rm -rf "$work" && mkdir -p "$work/bin" "$work/state" && cd "$work" || exit 1
export FAKE_STATE=$work/state
unset GITHUB_STEP_SUMMARY CUDA_VISIBLE_DEVICES FAKE_GPU FAKE_HOST FAKE_BASELINE GPUCHECK_CONTAINMENT
failures=0
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
sum() { md5sum "$1" | cut -d' ' -f1; }
printf '#!/usr/bin/env bash\nexec bash "%s" steady steady "$@"\n' "$fake" > bin/bench_steady
chmod +x bin/bench_steady
gate() {  # gate [flags...]: rc, out.txt, err.txt; 60 s at most (a hang is exit 124)
  timeout 60 "$G" gate --bin-dir bin --baseline baselines --out out --timeout 20 "$@" > out.txt 2> err.txt
  rc=$?
}
FAKE_BASELINE=1 "$G" run --bin-dir bin --out base --repetitions 5 --timeout 20 > record.log 2>&1 &&
  "$G" baseline update --suite quick --root baselines base/results.json >> record.log 2>&1 || { cat record.log; exit 1; }

# A history in place, then the gate's own outputs aimed at it.
gate --history h.db
check "a gate into a history passes" test "$rc" -eq 0
cp h.db out/compare.md
before=$(sum out/compare.md)
gate --history out/compare.md
check "--history naming the gate's compare.md: exit 2" test "$rc" -eq 2
check "... in one line" test "$(wc -l < err.txt)" -eq 1
check "... the history's bytes unchanged" test "$(sum out/compare.md)" = "$before"
check "... saying the output names the history" grep -q "names an input, out/compare.md (--history)" err.txt
cp h.db out/logs/bench_steady.log
before=$(sum out/logs/bench_steady.log)
gate --history out/logs/bench_steady.log
check "--history naming a log the gate writes: exit 2" test "$rc" -eq 2
check "... the history's bytes unchanged" test "$(sum out/logs/bench_steady.log)" = "$before"
before=$(sum h.db)
GITHUB_STEP_SUMMARY=$PWD/h.db gate --history h.db
check "GITHUB_STEP_SUMMARY naming the history: exit 2" test "$rc" -eq 2
check "... the history's bytes unchanged" test "$(sum h.db)" = "$before"

# A FIFO where a log goes: refused with the binary's error, never waited on.
rm -rf out && mkdir -p out/logs && mkfifo out/logs/bench_steady.log
gate
check "a FIFO as a log: no hang" test "$rc" -ne 124
check "... the binary is ERRORED naming the FIFO" grep -q "bench_steady.log: a FIFO with no reader" out.txt

# A gate that stops after the run (a baseline of another GPU model): no earlier compare files.
rm -rf out
gate
check "an unchanged gate passes" test "$rc" -eq 0
FAKE_GPU="NVIDIA A100-SXM4-80GB" timeout 60 "$G" gate --bin-dir bin --baseline baselines/nvidia-h200/quick.json \
  --out out --timeout 20 > out.txt 2> err.txt
check "a baseline of another GPU model: exit 2" test $? -eq 2
check "... after the binary ran" test -s out/results.json
check "... the earlier run's compare.md is gone" test ! -e out/compare.md
check "... and its compare.json" test ! -e out/compare.json
check "... and its junit.xml" test ! -e out/junit.xml

# A --baseline that is a FIFO: refused before anything runs.
rm -rf out && mkfifo base.fifo
timeout 60 "$G" gate --bin-dir bin --baseline base.fifo --out out --timeout 20 > out.txt 2> err.txt
check "a FIFO as --baseline: exit 2" test $? -eq 2
check "... before any binary ran" test ! -e out/results.json

# A new output inside an input folder (compare, report), directly and through a link.
mkdir -p in other && cp "$fixtures/crafted/baseline.json" in/base.json
ln -s in link
"$G" compare in "$fixtures/crafted/baseline.json" --format json --out in/report.json > /dev/null 2> err.txt
check "compare --out inside the BASELINE folder: exit 2" test $? -eq 2
check "... nothing written there" test ! -e in/report.json
"$G" compare in "$fixtures/crafted/baseline.json" --format json --out link/report.json > /dev/null 2> err.txt
check "... through a link to the folder: exit 2" test $? -eq 2
"$G" compare in "$fixtures/crafted/baseline.json" --format json --out other/../in/report.json > /dev/null 2> err.txt
check "... through other/..: exit 2" test $? -eq 2
"$G" compare in "$fixtures/crafted/baseline.json" --format json --out other/report.json > /dev/null 2> err.txt
check "... beside it: written" test -s other/report.json
"$G" compare in "$fixtures/crafted/baseline.json" > /dev/null 2> err.txt
check "... and the folder still reads as before" test $? -eq 0

# The gate's --out made inside the baseline store (folders it creates first): refused, nothing made.
timeout 60 "$G" gate --bin-dir bin --baseline baselines --out baselines/new/deeper --timeout 20 > out.txt 2> err.txt
check "gate --out made inside the --baseline store: exit 2" test $? -eq 2
check "... nothing made there" test ! -e baselines/new

# A report whose --html cannot be written (a FIFO with no reader) leaves --markdown as it was.
echo old > other/r.md && mkfifo other/r.fifo
"$G" report "$fixtures/crafted/baseline.json" --markdown other/r.md --html other/r.fifo > /dev/null 2> err.txt
check "report with a second output that cannot be written: exit 2" test $? -eq 2
check "... the first output unchanged" test "$(cat other/r.md)" = old
check "... no temp left" test -z "$(find other -name '.*tmp-*')"

# A benchmark list that names itself; --bin-dir that is a file.
mkdir -p listbin && cp bin/bench_steady listbin/ && printf 'bench_steady\ngpucheck-benchmarks.txt\n' > listbin/gpucheck-benchmarks.txt
chmod +x listbin/gpucheck-benchmarks.txt
timeout 60 "$G" gate --bin-dir listbin --baseline baselines --out out2 > out.txt 2> err.txt
check "a benchmark list naming itself: exit 2" test $? -eq 2
check "... saying so" grep -q "lists itself" err.txt
timeout 60 "$G" gate --bin-dir h.db --baseline baselines --out out2 > out.txt 2> err.txt
check "--bin-dir a file: exit 2" test $? -eq 2
check "... not called missing" grep -q "is not a folder" err.txt

# GPUCHECK_CONTAINMENT with a typo: a usage error before anything starts.
GPUCHECK_CONTAINMENT=bogus timeout 60 "$G" run --bin-dir bin --out out3 > out.txt 2> err.txt
check "GPUCHECK_CONTAINMENT=bogus: run exits 2" test $? -eq 2
check "... naming the variable" grep -q "^gpucheck: GPUCHECK_CONTAINMENT" err.txt
check "... nothing ran" test ! -e out3/results.json

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "outputs_round3: all checks passed"
