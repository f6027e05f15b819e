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
((failures == 0)) && echo "process levels: all checks passed"
exit $((failures > 0))
