#!/usr/bin/env bash
# A case judged by its fastest fresh process (thresholds' "processes"), end to end with the fake
# bench (mode levels: every third process at the low level, the others 1.25x): the gate measures
# it in N fresh processes; it is judged only against this runner's own runs (a machine's level is
# its own). Without --history, or until the history holds 3 runs of main on this runner, it is
# shown, not gated, saying how many there are (node-B, whose low level is 12% above that of the
# stored baseline's machine, passes); then its own runs judge it (passes), and a launch path 15%
# slower fails, confirmed.
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
check "... shown, not gated, saying why" grep -q "^fastest-process cases: shown, not gated: judged only against this runner's own runs, which gate --history FILE keeps" out.txt
FAKE_LOW=1.12 FAKE_SCALE=1.15 gate node-A
check "a launch path 15% slower without --history: passes (not gated)" test "$rc" -eq 0
check "... shown in the report-only section, +28.8% against the other machine's level" grep -qE "^  steady/a/fp32/1MiB .* \+28\.[0-9]+% .*shown, not gated" out.txt
for k in 0 1 2; do
  FAKE_LOW=1.12 gate node-B --history h.db
  check "node-B (low level 12% higher), run $((k + 1)) with $k of its own: passes, not gated" test "$rc" -eq 0
  check "... saying how many it holds" grep -q "^fastest-process cases: shown, not gated: history h.db holds $k of the 3 runs of main on this runner (node-B, GPU-fake-0000) that judge it" out.txt
  check "... its change shown (+12%)" grep -qE "^  steady/a/fp32/1MiB .* \+12\.00%" out.txt
done
FAKE_LOW=1.12 gate node-B --history h.db
check "node-B with 3 runs of its own: passes" test "$rc" -eq 0
check "... judged against them" grep -q "^fastest-process cases: history h.db: this runner's 3 runs of main (node-B, GPU-fake-0000), every process" out.txt
check "... 18 processes" grep -q "fastest of 6 fresh processes vs the baseline's 10.9th percentile of 18" out.txt
FAKE_LOW=1.12 FAKE_SCALE=1.15 gate node-B --history h.db
check "a launch path 15% slower on node-B: fails" test "$rc" -eq 1
check "... confirmed" grep -q "confirmed.*steady/a/fp32/1MiB" out.txt
FAKE_LOW=1.12 FAKE_SCALE=1.15 gate node-B --history h.db --base-branch release
check "no runs of another base branch: not gated (passes)" test "$rc" -eq 0
check "... saying so" grep -q "holds 0 of the 3 runs of release on this runner" out.txt
FAKE_LOW=1.12 gate node-B --base-branch main
check "--base-branch without --history: exit 2" test "$rc" -eq 2
check "... in one line" test "$(wc -l < err.txt)" -eq 1
# Against the base build (--base-bin-dir): its processes interleaved with this build's, so a
# machine's own level (node-C, 30% above the stored baseline's) needs no history; the base build
# is the same fake bench without FAKE_SCALE.
mkdir -p basebin
printf '#!/usr/bin/env bash\nexec env -u FAKE_SCALE bash "%s" levels steady "$@"\n' "$fake" > basebin/bench_steady
chmod +x basebin/bench_steady
FAKE_LOW=1.3 gate node-C --base-bin-dir basebin
check "node-C against the base build, no history: passes" test "$rc" -eq 0
check "... judged against it" grep -q "^fastest-process cases: against the base build (basebin), its fresh processes interleaved" out.txt
check "... gated, not shown only" test "$(grep -c 'shown, not gated' out.txt)" -eq 0
check "... the builds interleaved" grep -q "(base build, process 6/6) bench_steady (fresh processes)" out.txt
check "... the base build's processes kept apart" test -s out/base/runs/bench_steady.fresh.processes.json
FAKE_LOW=1.3 FAKE_SCALE=1.15 gate node-C --base-bin-dir basebin
check "a launch path 15% slower against the base build: fails" test "$rc" -eq 1
check "... confirmed, both builds measured again" grep -q "confirmed.*steady/a/fp32/1MiB" out.txt
check "... each build's fastest of 6" grep -q "fastest of 6 fresh processes vs the baseline's fastest of 6" out.txt
check "... the base build's confirmation kept" test -s out/base/confirm/bench_steady.processes.json
((failures == 0)) && echo "runner gate: all checks passed"
exit $((failures > 0))
