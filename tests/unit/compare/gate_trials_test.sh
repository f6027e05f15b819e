#!/usr/bin/env bash
# ci/gate_trials.sh with the fake bench (mode levels, as runner_gate.sh): a report-only case
# proposed at 10% on its fastest of 6 fresh processes lands in OUT/thresholds.json; the trial's
# gates are numbered on across calls and recorded in its history (without a base build never
# gated, whatever the history holds; with TRIAL_BASE_BIN judged by the median pair); trials.md puts the trial's case first with each gate's
# change and the gates it failed; bad entries, an unknown job and a deadline too short are refused.
# Usage: gate_trials_test.sh GPUCHECK SOURCE_DIR WORKDIR
set -uo pipefail
G=$(realpath "$1") src=$(realpath "$2") work=$3
fake=$src/tests/unit/compare/fake_bench/fake_bench.sh
trials=$src/ci/gate_trials.sh
rm -rf "$work" && mkdir -p "$work/build/bin" "$work/state" && cd "$work" || exit 1
export FAKE_STATE=$work/state
unset GITHUB_STEP_SUMMARY CUDA_VISIBLE_DEVICES FAKE_GPU FAKE_HOST FAKE_BASELINE FAKE_LOW FAKE_SCALE TRIAL_ENTRIES TRIAL_STORE
failures=0
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
ln -s "$G" build/bin/gpucheck
printf '#!/usr/bin/env bash\nexec bash "%s" levels steady "$@"\n' "$fake" > build/bin/bench_steady
chmod +x build/bin/bench_steady
# The store: 12 fresh processes of node-A, the case report-only.
FAKE_HOSTNAME=node-A GPUCHECK_GIT_BRANCH=main "$G" run --bin-dir build/bin --out base --repetitions 12 --fresh-processes \
  --timeout 20 > record.log 2>&1 &&
  "$G" baseline update --suite quick --root store base/results.json >> record.log 2>&1 || { cat record.log; exit 1; }
echo '{"report_only": [{"glob": "steady/a/*", "cv_pct": 20, "why": "two levels a process (fake)"}],
  "overrides": [{"glob": "steady/*", "pct": 20, "why": "a broader entry, first"}]}' > store/thresholds.json
cp store/thresholds.json thresholds.before

export TRIAL_STORE=$work/store FAKE_HOSTNAME=node-A
TRIAL_ENTRIES='steady/a/*=host_bound:10:6;steady/b/*=overrides:5' bash "$trials" build t gate:2 > t1.txt 2>&1
check "two gates of node-A: exit 0" test $? -eq 0
check "... the entry moved to host_bound with its processes" python3 -c "
import json, sys
t = json.load(open('t/thresholds.json'))
assert t['report_only'] == [], t
assert [(e['glob'], e['pct'], e['processes']) for e in t['host_bound']] == [('steady/a/*', 10, 6)], t
assert t['host_bound'][0]['why'].startswith('trial ')
assert [e['glob'] for e in t['overrides']] == ['steady/b/*', 'steady/*'], t"
check "... the store's thresholds.json untouched" cmp -s store/thresholds.json thresholds.before
check "... gate-1 and gate-2, each passing" test "$(cat t/gate-1.rc t/gate-2.rc)" = "$(printf '0\n0')"
check "... the case measured in 6 fresh processes" grep -q "(process 6/6) bench_steady (fresh processes)" t/gate-2.txt
check "... both runs in the trial's history" test "$("$G" history list --db t/history.db 2> /dev/null | grep -cw main)" -ge 2
check "... trials.md: the trial's cases first, their limits, a figure per gate, none failed" python3 -c "
import re
rows = [l for l in open('t/trials.md') if l.startswith('| steady/')]
assert rows[1].startswith('| steady/b/fp32/4MiB (trial) | 5% | '), rows
assert rows[0].startswith('| steady/a/fp32/1MiB (trial) | 10%, fastest of 6 | '), rows
cells = [c.strip() for c in rows[0].strip().strip('|').split('|')]
assert len(cells) == 7, cells
assert all(re.fullmatch(r'[+-][0-9.]+ \(report only\)', c) for c in cells[2:4]), cells  # no runs of its own yet
assert cells[6] == '0', cells"

FAKE_HOSTNAME=node-B FAKE_LOW=1.12 bash "$trials" build t gate > t2.txt 2>&1
check "a later call, gate-3 on node-B (low level 12% higher): exit 0" test $? -eq 0
check "... numbered on: gate-3, passing: no base build, so not gated" test "$(cat t/gate-3.rc)" = 0
check "... the summary says why" grep -q "shown, not gated: judged only against the base build's processes" t/summary.log
FAKE_HOSTNAME=node-B FAKE_LOW=1.12 bash "$trials" build t gate:3 > t3.txt 2>&1
check "gate-6, with 5 runs in the history, still not judged by them" \
  grep -q "^- gate-6: exit 0, .*; fresh-process cases: shown, not gated: judged only against the base build's" t/trials.md
FAKE_HOSTNAME=node-B FAKE_LOW=1.12 FAKE_SCALE=1.15 bash "$trials" build t gate > t4.txt 2>&1
check "gate-7, a launch path 15% slower on node-B without a base build: exit 0, not gated" test "$(cat t/gate-7.rc)" = 0
check "... in the summary" grep -q "gate-7: exit 0" t/summary.log
check "... trials.md: gate-3 and gate-7 shown not gated, none failed" python3 -c "
rows = [l for l in open('t/trials.md') if l.startswith('| steady/a/')]
cells = [c.strip() for c in rows[0].strip().strip('|').split('|')]
assert len(cells) == 12, cells
assert cells[4] == '+12.0 (report only)', cells
assert cells[8].endswith('(report only)'), cells
assert cells[11] == '0', cells
figs = [l for l in open('t/trials.md') if l.startswith('| steady/a/')][1]
cells = [c.strip() for c in figs.strip().strip('|').split('|')]
assert len(cells) == 9, cells  # the case, 7 gates, the spread
vals = [float(c) for c in cells[1:8]]
assert vals[0] < vals[2] < vals[6], vals  # node-A's low level, node-B's 12% above it, then 15% slower
assert abs(vals[2] / vals[0] - 1.12) < 0.02, vals
assert cells[8] == f'{(max(vals) / min(vals) - 1) * 100:.2f}%', cells"

bash "$trials" build t drill:unchanged > drill.txt 2>&1
check "drill:unchanged: exit 0" test $? -eq 0
check "... its line in the summary" grep -q "drill unchanged-1: exit 0" t/summary.log
check "... under the trial's limits" grep -q "fastest of 6 fresh processes" t/drills/unchanged-1.txt
check "... recorded as branch drill/unchanged, not main" test "$("$G" history list --db t/history.db --branch drill/unchanged 2> /dev/null | grep -c 'drill/unchanged')" -ge 1

# Against the base build (TRIAL_BASE_BIN): node-C, whose level is 30% above every other, needs
# no runs of its own: its gates and drills judge the case against the base build's processes.
mkdir -p basebin
printf '#!/usr/bin/env bash\nexec env -u FAKE_SCALE bash "%s" levels steady "$@"\n' "$fake" > basebin/bench_steady
chmod +x basebin/bench_steady
FAKE_HOSTNAME=node-C FAKE_LOW=1.3 TRIAL_BASE_BIN=basebin TRIAL_ENTRIES='steady/a/*=host_bound:10:6' \
  bash "$trials" build ab gate drill:unchanged > ab.txt 2>&1
check "TRIAL_BASE_BIN, node-C's first gate and a drill: exit 0" test $? -eq 0
check "... the gate judged against the base build" \
  grep -q "^- gate-1: exit 0, .*; fresh-process cases: against the base build (.*basebin), by the median pair" ab/trials.md
check "... the drill too" grep -q "^fresh-process cases: against the base build" ab/drills/unchanged-1.txt
FAKE_HOSTNAME=node-C FAKE_LOW=1.3 FAKE_SCALE=1.15 TRIAL_BASE_BIN=basebin bash "$trials" build ab gate > ab2.txt 2>&1
check "... a launch path 15% slower against it: gate-2 fails" test "$(cat ab/gate-2.rc)" = 1
FAKE_HOSTNAME=node-C FAKE_LOW=1.3 TRIAL_BASE_BIN=basebin TRIAL_GATE_ARGS='--filter ^steady/a/' \
  bash "$trials" build ab gate drill:unchanged > ab3.txt 2>&1
check "TRIAL_GATE_ARGS: a gate and a drill filtered to one case, exit 0" test $? -eq 0
check "... the gate ran that case alone" grep -q '^1 benchmarks: ' ab/gate-3.txt
check "... the drill too" grep -q '^1 benchmarks: ' ab/drills/unchanged-1.txt
TRIAL_BASE_BIN=nowhere bash "$trials" build ab gate > bad.txt 2>&1
check "TRIAL_BASE_BIN not there: exit 2, one line" test $? -eq 2 -a "$(wc -l < bad.txt)" -eq 1

for bad in 'steady/a/*=report_only:10' 'steady/a/*=host_bound:0' 'steady/a/*=host_bound:10:1' \
  'steady/a/*=overrides:5:101' 'steady/a/*=host_bound:101' '=host_bound:10'; do
  TRIAL_ENTRIES=$bad bash "$trials" build "bad" gate > bad.txt 2>&1
  check "entry \"$bad\": exit 2" test $? -eq 2
  check "... in one line naming it" test "$(wc -l < bad.txt)" -eq 1
  check "... no gate ran" test ! -e bad/gate-1
  rm -rf bad
done
bash "$trials" build t frobnicate > bad.txt 2>&1
check "an unknown job: exit 2" test $? -eq 2
for job in gate:3x gate:0 'drill:a b' drill:; do
  bash "$trials" build t gate "$job" > bad.txt 2>&1
  check "a bad job \"$job\" after a good one: exit 2, in one line" test $? -eq 2 -a "$(wc -l < bad.txt)" -eq 1
done
check "... and no gate ran before the check" test ! -e t/gate-8
TRIAL_DEADLINE_S=1 TRIAL_GATE_S=30 bash "$trials" build t gate > late.txt 2>&1
check "no time left for a gate: exit 1" test $? -eq 1
check "... said" grep -q "skipped: needs ~30 s" late.txt
check "... no gate-8" test ! -e t/gate-8
for bad in TRIAL_DEADLINE_S=abc TRIAL_DEADLINE_S=08 TRIAL_GATE_S=1x TRIAL_GATE_S=-5; do
  env "$bad" bash "$trials" build badenv gate > bad.txt 2>&1
  check "$bad: exit 2" test $? -eq 2
  check "... one line naming ${bad%%=*}" test "$(wc -l < bad.txt)" -eq 1 -a "$(grep -c "${bad%%=*}" bad.txt)" -eq 1
  check "... no OUT made, no gate ran" test ! -e badenv
done
touch outfile
bash "$trials" build outfile gate > bad.txt 2>&1
check "OUT a file: exit 2, one line naming it" test $? -eq 2 -a "$(wc -l < bad.txt)" -eq 1 -a "$(grep -c outfile bad.txt)" -eq 1
bash "$trials" build empty table > empty.txt 2>&1
check "a table with no gate: exit 2" test $? -eq 2
mkdir -p empty/gate-1 && printf '{"rows": [' > empty/gate-1/compare.json
bash "$trials" build empty table > empty.txt 2>&1
check "a gate's compare.json cut short: exit 2" test $? -eq 2
check "... one line naming the file" grep -q "^gate_trials: .*empty/gate-1/compare.json: not JSON" empty.txt
check "... and only that line" test "$(wc -l < empty.txt)" -eq 1
# A gate the deadline stopped (exit 124, no compare.json) is listed as such, not left out.
cp -r t tcut && mkdir -p tcut/gate-50 && echo 124 > tcut/gate-50.rc
bash "$trials" build tcut table > cut.txt 2>&1
check "a gate stopped at the deadline: listed, no verdict" grep -q "^- gate-50: exit 124, no verdict: stopped at the trial's deadline" tcut/trials.md
check "... and no column of its own" test "$(grep -c 'gate-50 |' tcut/trials.md)" -eq 0
# Bad input to gate_trials.py itself: one line naming the file, exit 2, no traceback, no input
# replaced, no half-written output left behind.
py=$src/ci/gate_trials.py
one_line() {  # one_line WHAT NAME CMD...: exit 2 and one line on stderr naming NAME
  "${@:3}" > /dev/null 2> one.err
  local rc=$?
  check "$1: exit 2 (got $rc)" test "$rc" -eq 2
  check "... one line naming $2" test "$(wc -l < one.err)" -eq 1 -a "$(grep -cF -- "$2" one.err)" -eq 1
  check "... no traceback" test "$(grep -c Traceback one.err)" -eq 0
}
cp store/thresholds.json same.json && cp same.json same.before
one_line "propose OUT naming THRESHOLDS" same.json python3 "$py" propose same.json same.json 'steady/a/*=overrides:5'
check "... THRESHOLDS untouched" cmp -s same.json same.before
mkdir -p outdir
one_line "propose OUT a folder" outdir python3 "$py" propose same.json outdir 'steady/a/*=overrides:5'
check "... no temporary file left" test -z "$(find . -maxdepth 1 -name '.outdir.*')"
one_line "propose OUT in no folder" nowhere/t.json python3 "$py" propose same.json nowhere/t.json 'steady/a/*=overrides:5'
one_line "table of no folder" nothere python3 "$py" table nothere
one_line "table of a file" same.json python3 "$py" table same.json
for row in '{"name": "a", "change": "x"}' '{"name": "a", "change": NaN}' '{"name": "a", "threshold_pct": "5"}' \
  '{"name": "a", "change": 0.1, "confirmation": [1]}'; do
  rm -rf badrow && mkdir -p badrow/gate-1 && echo "{\"rows\": [$row]}" > badrow/gate-1/compare.json
  one_line "table, a row $row" badrow/gate-1/compare.json python3 "$py" table badrow
  check "... no trials.md" test ! -e badrow/trials.md
done
rm -rf badrow && mkdir -p badrow/gate-1 && echo '{"rows": [], "counts": []}' > badrow/gate-1/compare.json
one_line "table, counts not an object" badrow/gate-1/compare.json python3 "$py" table badrow
echo '{"rows": []}' > badrow/gate-1/compare.json && mkdir badrow/gate-2.rc
one_line "table, a gate's .rc a folder" badrow/gate-2.rc python3 "$py" table badrow
rmdir badrow/gate-2.rc && mkdir badrow/trials.md
one_line "table, trials.md a folder" badrow/trials.md python3 "$py" table badrow
((failures == 0)) && echo "gate trials: all checks passed"
exit $((failures > 0))
