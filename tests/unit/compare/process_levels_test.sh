#!/usr/bin/env bash
# ci/process_levels.sh with the fake bench (mode levels: every third process at the low level, the
# others 1.25x): the placements interleaved, R processes each, levels.csv and levels.md with the
# two levels found and counted per placement; bad usage exit 2.
# Usage: process_levels_test.sh SOURCE_DIR WORKDIR
set -uo pipefail
src=$(realpath "$1") work=$2
rm -rf "$work" && mkdir -p "$work/state" && cd "$work" || exit 1
export FAKE_STATE=$work/state
unset FAKE_LOW FAKE_SCALE FAKE_BASELINE
failures=0
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
# The wrapper waits 0.5 s before it becomes the benchmark (the same pid), so that the script's
# reading of its AnonHugePages (every 0.25 s while it runs) always lands, however loaded the host.
printf '#!/usr/bin/env bash\necho $$ >> "$FAKE_STATE/pids"\nsleep 0.5\nexec bash "%s" levels steady "$@"\n' "$src/tests/unit/compare/fake_bench/fake_bench.sh" > bench_steady
chmod +x bench_steady
R=3 LEVELS_CPU=0 bash "$src/ci/process_levels.sh" ./bench_steady 'steady/a/' out pinned no_thp > run.txt 2>&1
check "exit 0" test $? -eq 0
check "6 processes, in levels.csv" test "$(tail -n +2 out/levels.csv | wc -l)" -eq 6
check "two levels found" grep -q "^Two levels, split at" out/levels.md
check "interleaved, every third process low: pinned's 1st (overall 1st) and no_thp's 2nd (overall 4th)" python3 -c "
rows = [l.split('|')[1:-1] for l in open('out/levels.md') if l.startswith('| ') and not l.startswith('| placement')]
got = {r[0].strip(): (int(r[1]), int(r[2]), int(r[3])) for r in rows}
assert got == {'pinned': (3, 1, 2), 'no_thp': (3, 1, 2)}, got
import csv
low = sorted((r['placement'], r['process'], r['order']) for r in csv.DictReader(open('out/levels.csv')) if float(r['us_per_launch']) < 110)
assert low == [('no_thp', '2', '4'), ('pinned', '1', '1')], low"
check "each process's huge pages read while it ran, from the benchmark's own pid" python3 -c "
import csv
rows = list(csv.DictReader(open('out/levels.csv')))
assert all(r['anon_huge_kB'].isdigit() for r in rows), rows
assert sorted(r['pid'] for r in rows) == sorted(open('state/pids').read().split()), rows"
if command -v g++ > /dev/null; then
  check "the page walk probe ran, 4 KiB and huge pages" test "$(grep -c '^- page walk probe, .* pages (AnonHugePages' out/levels.md)" -eq 2
fi
check "the levels in the order started" grep -q "^In the order the processes started (L low, H high): LHHLHH$" out/levels.md
R=2 bash "$src/ci/process_levels.sh" ./bench_steady 'steady/a/' out2 sideways > bad.txt 2>&1
check "an unknown placement: exit 2" test $? -eq 2
check "... no process ran" test ! -e out2/runs
R=0 bash "$src/ci/process_levels.sh" ./bench_steady 'steady/a/' out2 > bad.txt 2>&1
check "R=0: exit 2" test $? -eq 2
bash "$src/ci/process_levels.sh" ./nothing 'x' out2 > bad.txt 2>&1
check "no binary: exit 2, one line" test $? -eq 2 -a "$(wc -l < bad.txt)" -eq 1
# A filter that matches nothing (as '...empty/1$' did on a GPU: the full name goes on past the
# case's): the first process is refused, exit 2, and no other is started.
printf '#!/usr/bin/env bash\necho "Failed to match any benchmarks against regex: x$"\necho "bench: no case matches --benchmark_filter=x$"\nexit 2\n' > bench_refuses
chmod +x bench_refuses
R=3 LEVELS_CPU=0 bash "$src/ci/process_levels.sh" ./bench_refuses 'x$' out3 pinned no_thp > refused.txt 2>&1
check "a refused process: exit 2" test $? -eq 2
check "... its line, once" test "$(grep -c 'pinned process 1 refused, exit 2: bench: no case matches' refused.txt)" -eq 1
check "... no other process started" test "$(find out3/runs -name "*.log" | wc -l)" -eq 1
# A bad number in an environment variable, or an OUT that cannot be a folder: one line naming
# it, exit 2, before any process starts.
touch afile
for bad in LEVELS_DEADLINE_S=abc LEVELS_DEADLINE_S=08 LEVELS_CPU=x LEVELS_CPU=100000 LEVELS_OTHER_CPU=-1; do
  env R=1 "$bad" bash "$src/ci/process_levels.sh" ./bench_steady 'steady/a/' out4 pinned > /dev/null 2> bad.txt
  check "$bad: exit 2" test $? -eq 2
  check "... one line naming ${bad%%=*}" test "$(wc -l < bad.txt)" -eq 1 -a "$(grep -c "${bad%%=*}" bad.txt)" -eq 1
  check "... no process ran" test ! -e out4
done
R=1 LEVELS_CPU=0 bash "$src/ci/process_levels.sh" ./bench_steady 'steady/a/' afile pinned > /dev/null 2> bad.txt
check "OUT a file: exit 2, one line naming it" test $? -eq 2 -a "$(wc -l < bad.txt)" -eq 1 -a "$(grep -c afile bad.txt)" -eq 1
# process_levels.py on its own: a missing OUT, an unknown placement, a levels.md that is a folder;
# a run's file that is not an object, or whose figure is NaN, is a process without a figure.
py=$src/ci/process_levels.py
python3 "$py" nowhere us_per_launch pinned > /dev/null 2> bad.txt
check "process_levels.py, OUT missing: exit 2, one line naming it" test $? -eq 2 -a "$(wc -l < bad.txt)" -eq 1 -a "$(grep -c nowhere bad.txt)" -eq 1
mkdir -p py/runs && echo '[1]' > py/runs/pinned.1.json && echo '{"benchmarks": [{"us_per_launch": NaN}]}' > py/runs/pinned.2.json
echo '{"benchmarks": [{"us_per_launch": 100}], "context": []}' > py/runs/pinned.3.json
python3 "$py" py us_per_launch pinned > /dev/null 2> bad.txt
check "process_levels.py, a list, a NaN and a list for context: exit 0, no traceback" test $? -eq 0 -a ! -s bad.txt
check "... one process with a figure" test "$(tail -n +2 py/levels.csv | wc -l)" -eq 1
python3 "$py" py us_per_launch pinned sideways > /dev/null 2> bad.txt
check "process_levels.py, an unknown placement: exit 2, one line naming it" test $? -eq 2 -a "$(wc -l < bad.txt)" -eq 1 -a "$(grep -c sideways bad.txt)" -eq 1
rm -f py/levels.md py/levels.csv && mkdir py/levels.md
python3 "$py" py us_per_launch pinned > /dev/null 2> bad.txt
check "process_levels.py, levels.md a folder: exit 2, one line naming it" test $? -eq 2 -a "$(wc -l < bad.txt)" -eq 1 -a "$(grep -c levels.md bad.txt)" -eq 1
check "... and no levels.csv written without it" test ! -e py/levels.csv
((failures == 0)) && echo "process levels: all checks passed"
exit $((failures > 0))
