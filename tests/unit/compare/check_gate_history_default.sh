#!/usr/bin/env bash
# ci/gate.sh keeps a results history by default (ci/env.sh gpucheck_history): results/history.db,
# or GPUCHECK_HISTORY; none when the flags name one or GPUCHECK_HISTORY=off; and, where the
# SQLite library is missing (a PATH whose ldconfig lists none), one line and no --history.
# Usage: check_gate_history_default.sh SOURCE_DIR WORKDIR
set -uo pipefail
src=$(realpath "$1") work=$2
rm -rf "$work" && mkdir -p "$work/nosqlite" "$work/tree/ci" && cd "$work" || exit 1
cp "$src/ci/env.sh" tree/ci/  # a copy: the default's folder is made under the copy's tree, not the source's
failures=0
check() { "${@:2}" || { echo "FAIL: $1"; failures=$((failures + 1)); }; }
# args ENV... -- GATE_ARGS...: the history arguments gpucheck_history chooses, space-separated.
args() {
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  env ${envs[@]+"${envs[@]}"} bash -c 'source "$0/ci/env.sh"; gpucheck_history "$@"; echo "${GPUCHECK_HISTORY_ARGS[*]-}"' "$work/tree" "$@"
}
if ldconfig -p 2> /dev/null | grep -q 'libsqlite3\.so\.0 '; then
  check "default: results/history.db under the tree" test "$(args -- --suite quick)" = "--history $work/tree/results/history.db"
  check "... its folder made" test -d "$work/tree/results"
  check "GPUCHECK_HISTORY names the file, its folder made" test "$(args GPUCHECK_HISTORY="$work/h/x.db" --)" = "--history $work/h/x.db"
  check "... the folder" test -d "$work/h"
else
  echo "no libsqlite3.so.0 here: the default's own checks skipped"
fi
check "--history FILE in the flags: none added" test -z "$(args -- --suite quick --history mine.db)"
check "--history=FILE in the flags: none added" test -z "$(args -- --history=mine.db)"
check "GPUCHECK_HISTORY=off: none" test -z "$(args GPUCHECK_HISTORY=off --)"
printf '#!/bin/sh\nexit 0\n' > nosqlite/ldconfig && chmod +x nosqlite/ldconfig
out=$(args PATH="$work/nosqlite:$PATH" --)
check "no libsqlite3: one line saying so, no --history" test "$out" = "gate: no libsqlite3.so.0 on this machine: no results history kept (docs/HISTORY.md)"
check "gate.sh uses it" grep -q '^gpucheck_history ' "$src/ci/gate.sh"
((failures == 0)) && echo "gate history default: all checks passed"
exit $((failures > 0))
