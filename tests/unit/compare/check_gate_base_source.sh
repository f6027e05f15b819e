#!/usr/bin/env bash
# ci/env.sh gpucheck_base_source (ci/gate.sh's GPUCHECK_BASE_REF): the merge base of HEAD and the
# ref checked out in BUILD-base-src, kept while the merge base stays, moved when it moves; a ref
# that is not there is one line and status 2, nothing checked out.
# Usage: check_gate_base_source.sh SOURCE_DIR WORKDIR
set -uo pipefail
src=$(realpath "$1") work=$2
rm -rf "$work" && mkdir -p "$work/repo/ci" && cd "$work" || exit 1
failures=0
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
cp "$src/ci/env.sh" repo/ci/
git() { command git -C "$work/repo" -c user.name=t -c user.email=t@t -c init.defaultBranch=main "$@"; }
git init -q && echo one > repo/f && git add -A && git commit -qm one
git checkout -qb topic && echo two > repo/f && git commit -qam two   # HEAD: topic, one commit past main
one=$(git rev-parse main)
# base REF: the worktree's commit and f, or the status and stderr.
base() {
  GPUCHECK_BASE_REF=$1 bash -c 'source "$0/ci/env.sh"; gpucheck_base_source "$1/b"; rc=$?; echo "$rc $GPUCHECK_BASE_SHA"' \
    "$work/repo" "$work" 2> err.txt
}
check "main: status 0, its merge base" test "$(base main)" = "0 $one"
check "... checked out in b-base-src" test "$(cat b-base-src/f)" = one
check "... detached at it" test "$(command git -C b-base-src rev-parse HEAD)" = "$one"
touch b-base-src/kept
check "the same merge base again: kept" test "$(base main)" = "0 $one" -a -e b-base-src/kept
git checkout -q main && echo three > repo/f && git commit -qam three && three=$(git rev-parse HEAD)
git checkout -q topic && git merge -q main -m merge > /dev/null 2>&1 || { git checkout -q --theirs f; git add f; git commit -qm merge; }
check "main moved and was merged: the new merge base" test "$(base main)" = "0 $three"
check "... checked out anew" test "$(cat b-base-src/f)" = three -a ! -e b-base-src/kept
out=$(base no-such-ref)
check "a ref that is not there: status 2" test "${out%% *}" = 2
check "... one line naming it" test "$(cat err.txt)" = "gpucheck: GPUCHECK_BASE_REF=no-such-ref: no such commit in $work/repo (fetch it first)"
check "gate.sh uses it" grep -q 'gpucheck_base_source "$build"' "$src/ci/gate.sh"
((failures == 0)) && echo "gate base source: all checks passed"
exit $((failures > 0))
