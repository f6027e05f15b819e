#!/usr/bin/env bash
# The history where libsqlite3.so.0 cannot be loaded (an LD_PRELOAD shim makes its dlopen fail,
# as on a machine without the library): every history command and `gate --history` is exit 2
# with one line naming the file and the library, before anything is measured, and a history
# file made beforehand is left byte for byte as it was.
# Usage: history_no_sqlite.sh GPUCHECK SHIM WORKDIR
set -uo pipefail
G=$1 shim=$2 work=$3
fake=$(cd "$(dirname "$0")" && pwd)/fake_bench/fake_bench.sh
rm -rf "$work" && mkdir -p "$work/bin" "$work/state" && cd "$work" || exit 1
export FAKE_STATE=$work/state
unset GITHUB_STEP_SUMMARY CUDA_VISIBLE_DEVICES FAKE_GPU FAKE_HOST FAKE_BASELINE
failures=0
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
printf '#!/usr/bin/env bash\necho ran >> "%s/ran"\nexec bash "%s" steady steady "$@"\n' "$work" "$fake" > bin/bench_steady
chmod +x bin/bench_steady
FAKE_BASELINE=1 "$G" run --bin-dir bin --out base --timeout 20 > record.log 2>&1 &&
  "$G" baseline update --suite quick --root baselines base/results.json >> record.log 2>&1 &&
  "$G" history add --db h.db base/results.json >> record.log 2>&1 || { cat record.log; exit 1; }
rm -f ran
sum=$(md5sum h.db | cut -d' ' -f1)
one_line() {  # one_line NAME: exit 2, one line on stderr naming the library, nothing on stdout
  check "$1: exit 2 (got $rc)" test "$rc" -eq 2
  check "$1: one line on stderr" test "$(wc -l < err.txt)" -eq 1
  check "$1: names the library" grep -q 'libsqlite3.so.0' err.txt
  check "$1: names the file" grep -q 'h.db' err.txt
}
for cmd in "list" "changes" "report --html r.html" "add base/results.json" "merge base/results.json"; do
  read -r -a words <<< "$cmd"
  LD_PRELOAD=$shim "$G" history "${words[0]}" --db h.db "${words[@]:1}" > out.txt 2> err.txt
  rc=$?
  one_line "history ${words[0]}"
done
check "no report written" test ! -e r.html
LD_PRELOAD=$shim "$G" gate --bin-dir bin --baseline baselines --out gate-out --history h.db > out.txt 2> err.txt
rc=$?
one_line "gate --history"
check "gate ran no binary" test ! -e ran
check "the history is unchanged" test "$(md5sum h.db | cut -d' ' -f1)" = "$sum"
check "no sidecar left" test ! -e h.db-wal
if ((failures)); then echo "$failures failed"; exit 1; fi
echo "history without libsqlite3: all checks passed"
