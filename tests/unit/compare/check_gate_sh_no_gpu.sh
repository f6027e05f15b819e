#!/usr/bin/env bash
# ci/gate.sh on a machine without a GPU says so in one line, exit 2, before it builds anything
# (issue 17: it built for 108 s, then printed "gpucheck: gpucheck: no GPU"): no build folder is
# made (asserted; no duration is, so a busy machine cannot fail it). Skipped (77) where
# a GPU is present: there the gate would run (after the bad arguments' checks, which run anywhere).
# Usage: check_gate_sh_no_gpu.sh SOURCE_DIR WORKDIR
set -uo pipefail
src=$1 work=$2
# First, on any machine: a bad --suite or --device, or one without its value, is one line, exit 2,
# before the GPU is looked for or anything built.
rm -rf "$work" && mkdir -p "$work"
bad_fail=0
for args in "--suite" "--device" "--suite bogus" "--suite=" "--device x" "--device=-1"; do
  # shellcheck disable=SC2086  # each case a list of words
  BUILD_DIR=$work/build timeout 60 bash "$src/ci/gate.sh" $args > "$work/out.txt" 2> "$work/err.txt"
  rc=$?
  [[ $rc -eq 2 ]] || { echo "FAIL: gate.sh $args: exit $rc, expected 2"; bad_fail=1; }
  [[ $(wc -l < "$work/err.txt") -eq 1 ]] && grep -q -- "${args%%[ =]*}" "$work/err.txt" ||
    { echo "FAIL: gate.sh $args: not one line naming ${args%%[ =]*}:"; cat "$work/err.txt"; bad_fail=1; }
  [[ ! -e $work/build ]] || { echo "FAIL: gate.sh $args: it built"; bad_fail=1; }
done
# ci/deps.sh and ci/test.sh: an option they do not know, --all anywhere but first, a
# GPUCHECK_REQUIRE_GPU that is neither 0 nor 1: one line naming it, exit 2, nothing installed or built.
check_refused() {  # check_refused NAME WORD CMD...
  local name=$1 word=$2
  shift 2
  BUILD_DIR=$work/build timeout 60 "$@" > "$work/out.txt" 2> "$work/err.txt"
  local rc=$?
  [[ $rc -eq 2 ]] || { echo "FAIL: $name: exit $rc, expected 2"; bad_fail=1; }
  [[ $(wc -l < "$work/err.txt") -eq 1 ]] && grep -q -- "$word" "$work/err.txt" ||
    { echo "FAIL: $name: not one line naming $word:"; cat "$work/err.txt"; bad_fail=1; }
  [[ ! -e $work/build ]] || { echo "FAIL: $name: it built"; bad_fail=1; }
}
check_refused "deps.sh --bogus" --bogus bash "$src/ci/deps.sh" --bogus
check_refused "deps.sh --quick --build-only" "one option" bash "$src/ci/deps.sh" --quick --build-only
check_refused "test.sh -DX=1 --all" --all bash "$src/ci/test.sh" -DX=1 --all
check_refused "GPUCHECK_REQUIRE_GPU=true test.sh" GPUCHECK_REQUIRE_GPU env GPUCHECK_REQUIRE_GPU=true bash "$src/ci/test.sh"
((bad_fail == 0)) || exit 1
if compgen -G '/dev/nvidia[0-9]*' > /dev/null || { command -v nvidia-smi > /dev/null && nvidia-smi -L 2> /dev/null | grep -q '^GPU '; }; then
  echo "a GPU is present: the gate would run"; exit 77
fi
rm -rf "$work" && mkdir -p "$work"
BUILD_DIR=$work/build timeout 60 bash "$src/ci/gate.sh" > "$work/out.txt" 2> "$work/err.txt"
rc=$?
fail=0
[[ $rc -eq 2 ]] || { echo "FAIL: exit $rc, expected 2"; fail=1; }
[[ $(wc -l < "$work/err.txt") -eq 1 ]] || { echo "FAIL: not one line:"; cat "$work/err.txt"; fail=1; }
grep -q '^gpucheck: no GPU: ' "$work/err.txt" || { echo "FAIL: no 'gpucheck: no GPU:' line"; fail=1; }
grep -q 'gpucheck: gpucheck:' "$work/err.txt" && { echo "FAIL: prefix twice"; fail=1; }
[[ ! -e $work/build ]] || { echo "FAIL: it built"; fail=1; }
exit $fail
