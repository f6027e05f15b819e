#!/usr/bin/env bash
# `gpucheck gate --history FILE [--against-commit SHA]` end to end with the fake bench_* binaries
# (fake_bench/fake_bench.sh): each gate adds its run; the base commit's runs judge when the
# history has them (said in the output), else the stored baseline; a slowed binary fails against
# them; a file that is not a history is exit 2 before anything is measured, and left as it was.
# Usage: history_gate.sh GPUCHECK WORKDIR
set -uo pipefail
G=$1 work=$2
fake=$(cd "$(dirname "$0")" && pwd)/fake_bench/fake_bench.sh
rm -rf "$work" && mkdir -p "$work/bin" "$work/slow" "$work/state" && cd "$work" || exit 1
export FAKE_STATE=$work/state
unset GITHUB_STEP_SUMMARY CUDA_VISIBLE_DEVICES FAKE_GPU FAKE_HOST FAKE_BASELINE
failures=0
bench() {  # bench DIR NAME MODE
  printf '#!/usr/bin/env bash\nexec bash "%s" %s %s "$@"\n' "$fake" "$3" "${2#bench_}" > "$1/$2"
  chmod +x "$1/$2"
}
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
pid=0
gate() {  # gate BIN_DIR [flags...]; each with its own jitter (FAKE_PID), so no two runs are one
  local dir=$1
  shift
  rm -rf out
  pid=$((pid + 1))
  FAKE_PID=$pid "$G" gate --bin-dir "$dir" --baseline baselines --out out "$@" > out.txt 2> err.txt
  rc=$?
}
bench bin bench_steady steady
bench slow bench_steady regress
FAKE_BASELINE=1 "$G" run --bin-dir bin --out base --repetitions 5 --timeout 20 > record.log 2>&1 &&
  "$G" baseline update --suite quick --root baselines base/results.json >> record.log 2>&1 || { cat record.log; exit 1; }

gate bin --history h.db
check "first gate passes" test "$rc" -eq 0
check "it says where its run went" grep -q "^history: run 1 in h.db" out.txt
gate bin --history h.db
check "second gate passes" test "$rc" -eq 0
check "two runs stored" grep -q "^2 runs" <("$G" history list --db h.db)

gate bin --history h.db --against-commit unkn
check "against the commit: passes" test "$rc" -eq 0
check "says the commit's runs judged" grep -q "baseline: history h.db, commit unknown: 2 runs on nvidia-h200" out.txt
gate slow --history h.db --against-commit unknown
check "a slowed binary fails against the commit's runs" test "$rc" -eq 1
gate bin --history h.db --against-commit 0badc0de
check "no such commit: the stored baseline judges" grep -q "has no run of commit 0badc0de" out.txt
check "... and passes" test "$rc" -eq 0
check "five runs stored" grep -q "^5 runs" <("$G" history list --db h.db)

gate bin --against-commit unknown
check "--against-commit without --history: exit 2" test "$rc" -eq 2
echo "not a history" > notes.txt
gate bin --history notes.txt
check "a foreign file: exit 2" test "$rc" -eq 2
check "... in one line" test "$(wc -l < err.txt)" -eq 1
check "... left as it was" test "$(cat notes.txt)" = "not a history"
check "... before anything ran" test ! -e out/results.json
((failures == 0)) && echo "history gate: all checks passed"
exit $((failures > 0))
