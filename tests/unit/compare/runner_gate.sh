#!/usr/bin/env bash
# A case measured in fresh processes (thresholds' "processes"), end to end with the fake bench
# (mode levels: every third process at the low level, the others 1.25x): the gate measures it in
# N fresh processes and judges it only against the base build's processes, run one by one beside
# this build's (--base-bin-dir), by the median pair. Without the base build it is shown, not
# gated, whatever the history holds (node-B, whose low level is 12% above that of the stored
# baseline's machine, passes; so does a launch path 15% slower). Against the base build a
# machine's own level needs nothing stored (node-C, 30% above), and a launch path 15% slower fails,
# confirmed.
# Usage: runner_gate.sh GPUCHECK WORKDIR
set -uo pipefail
G=$1 work=$2
fake=$(cd "$(dirname "$0")" && pwd)/fake_bench/fake_bench.sh
rm -rf "$work" && mkdir -p "$work/bin" "$work/state" && cd "$work" || exit 1
export FAKE_STATE=$work/state GPUCHECK_GIT_BRANCH=main
unset GITHUB_STEP_SUMMARY CUDA_VISIBLE_DEVICES FAKE_GPU FAKE_HOST FAKE_BASELINE FAKE_LOW FAKE_SCALE
failures=0
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
printf '#!/usr/bin/env bash\nexec bash "%s" levels steady "$@"\n' "$fake" > bin/bench_steady
chmod +x bin/bench_steady
gate() {  # gate HOST [flags...]
  local host=$1
  shift
  rm -rf out
  FAKE_HOSTNAME=$host "$G" gate --bin-dir bin --baseline baselines --out out --timeout 20 "$@" > out.txt 2> err.txt
  rc=$?
}
# The stored baseline: 12 fresh processes of node-A.
FAKE_HOSTNAME=node-A "$G" run --bin-dir bin --out base --repetitions 12 --fresh-processes --timeout 20 > record.log 2>&1 &&
  "$G" baseline update --suite quick --root baselines base/results.json >> record.log 2>&1 || { cat record.log; exit 1; }
echo '{"host_bound": [{"glob": "steady/a/*", "pct": 10, "processes": 6, "why": "two levels a process (fake)"}]}' > baselines/thresholds.json

gate node-A
check "node-A without --history: passes" test "$rc" -eq 0
check "... its case measured in 6 fresh processes" grep -q "(process 6/6) bench_steady (fresh processes)" out.txt
check "... compared by the fastest" grep -q "fastest of 6 fresh processes vs the baseline's 10.9th percentile of 12" out.txt
check "... shown, not gated, saying why" grep -q "^fresh-process cases: shown, not gated: judged only against the base build's processes run beside this build's (--base-bin-dir DIR" out.txt
FAKE_LOW=1.12 FAKE_SCALE=1.15 gate node-A
check "a launch path 15% slower without the base build: passes (not gated)" test "$rc" -eq 0
check "... shown in the report-only section, +28.8% against the other machine's level" grep -qE "^  steady/a/fp32/1MiB .* \+28\.[0-9]+% .*shown, not gated" out.txt
for k in 1 2 3 4; do
  FAKE_LOW=1.12 gate node-B --history h.db
  check "node-B (low level 12% higher), run $k into a history: passes, not gated" test "$rc" -eq 0
  check "... saying why" grep -q "^fresh-process cases: shown, not gated: judged only against the base build's" out.txt
  check "... its change shown (+12%)" grep -qE "^  steady/a/fp32/1MiB .* \+12\.00%" out.txt
done
FAKE_LOW=1.12 FAKE_SCALE=1.15 gate node-B --history h.db
check "a launch path 15% slower with 4 runs of its own in the history: passes, not gated" test "$rc" -eq 0
check "... shown, not gated" grep -qE "^  steady/a/fp32/1MiB .*shown, not gated" out.txt
FAKE_LOW=1.12 gate node-B --history h.db --base-branch main
check "--base-branch (gone): exit 2" test "$rc" -eq 2
check "... in one line" test "$(wc -l < err.txt)" -eq 1
# Against the base build (--base-bin-dir): its processes interleaved with this build's, so a
# machine's own level (node-C, 30% above the stored baseline's) needs no history; the base build
# is the same fake bench without FAKE_SCALE. The levels fall on both builds' processes in turn
# (the fake's state counts every process): the median pair reads the level of neither.
mkdir -p basebin
printf '#!/usr/bin/env bash\nexec env -u FAKE_SCALE bash "%s" levels steady "$@"\n' "$fake" > basebin/bench_steady
chmod +x basebin/bench_steady
FAKE_LOW=1.3 gate node-C --base-bin-dir basebin
check "node-C against the base build, no history: passes" test "$rc" -eq 0
check "... judged against it" grep -q "^fresh-process cases: against the base build (basebin), by the median pair" out.txt
check "... gated, not shown only" test "$(grep -c 'shown, not gated' out.txt)" -eq 0
check "... the builds interleaved" grep -q "(base build, process 6/6) bench_steady (fresh processes)" out.txt
check "... the base build's processes kept apart" test -s out/base/runs/bench_steady.fresh.processes.json
FAKE_LOW=1.3 FAKE_SCALE=1.15 gate node-C --base-bin-dir basebin
check "a launch path 15% slower against the base build: fails" test "$rc" -eq 1
check "... confirmed, both builds measured again" grep -q "confirmed.*steady/a/fp32/1MiB" out.txt
check "... by the median pair of 6" grep -q "median pair of 6 fresh processes, each run beside the base build's" out.txt
check "... the base build's confirmation kept" test -s out/base/confirm/bench_steady.processes.json
((failures == 0)) && echo "runner gate: all checks passed"
exit $((failures > 0))
