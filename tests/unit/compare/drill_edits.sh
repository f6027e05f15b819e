#!/usr/bin/env bash
# ci/gate_drills.sh's edits against the current sources, without a GPU or a build: each applies
# to a copy of the files the script restores between variants (its anchors are there), changes
# exactly the files it drills, and fails, rather than drilling an unchanged tree, where its
# anchor is gone. The default drill list is the one the script's header documents, and every
# drill in it has a branch. (Whether a variant builds and what the gate reads are GPU work.)
# Usage: drill_edits.sh SOURCE_DIR WORKDIR
set -uo pipefail
root=$(cd "$1" && pwd) work=$2
# shellcheck source=../../../ci/gate_drills.sh
source "$root/ci/gate_drills.sh"
rm -rf "$work" && mkdir -p "$work"
fail=0

# copy_edited DIR: the files a variant restores, copied from the sources.
copy_edited() {
  local f
  # shellcheck disable=SC2154  # edited_files: set by ci/gate_drills.sh, sourced above
  for f in "${edited_files[@]}"; do mkdir -p "$1/$(dirname "$f")" && cp "$root/$f" "$1/$f"; done
}

# check NAME EDIT MARKER FILE...: EDIT applies, each FILE changes and holds MARKER (a fixed string),
# the other restored files stay as they are; on files without the anchors, the edit fails.
check() {
  local name=$1 edit=$2 marker=$3 f
  shift 3
  local t=$work/$name
  copy_edited "$t"
  if ! (cd "$t" && python3 -c "$edit") > "$t.log" 2>&1; then
    echo "FAIL: $name did not apply:" && cat "$t.log" && fail=1 && return
  fi
  for f in "${edited_files[@]}"; do
    if [[ " $* " == *" $f "* ]]; then
      cmp -s "$root/$f" "$t/$f" && { echo "FAIL: $name left $f unchanged"; fail=1; }
      grep -qF -- "$marker" "$t/$f" || { echo "FAIL: $name: no '$marker' in $f"; fail=1; }
    else
      cmp -s "$root/$f" "$t/$f" || { echo "FAIL: $name changed $f"; fail=1; }
    fi
  done
  local stale=$work/$name-stale
  copy_edited "$stale"
  for f in "$@"; do echo "// anchors gone" > "$stale/$f"; done
  if (cd "$stale" && python3 -c "$edit") > "$stale.log" 2>&1; then
    echo "FAIL: $name applied to files without its anchors"; fail=1
  fi
  echo "ok: $name"
}

check launch_1.15x "$(edit_launch 0.15 spin)" "3800 * 0.15" kernels/src/launch.cu benchmarks/bench_launch.cpp
check launch_1.3x "$(edit_launch 0.3 spin)" "3800 * 0.3" kernels/src/launch.cu benchmarks/bench_launch.cpp
check launch_1.5x_mem "$(edit_launch 0.5 memory)" "if (true)" kernels/src/launch.cu benchmarks/bench_launch.cpp
check copy_6pct "$(edit_copy_6pct)" "n * 6 / 100" kernels/src/stream.cu
check copy_grid "$(edit_copy_grid)" "std::size_t{132} * 2" kernels/src/stream.cu
check tf32_8pct "$(edit_tf32_8pct)" "p_.m * 8 / 100" benchmarks/bench_matmul.cpp

# The default list against the header's list, and a branch for each.
script=$root/ci/gate_drills.sh
defaults=$(sed -n 's/^((${#drills\[@\]})) || drills=(\(.*\))$/\1/p' "$script")
header=$(sed -n '/^# records the exit status/,/^# A changed drill/s/^#   \([a-z0-9_.][a-z0-9_.]*\) .*/\1/p' "$script" | tr '\n' ' ')
[[ -n $defaults && "$defaults " == "$header" ]] || { echo "FAIL: default drills '$defaults', header lists '$header'"; fail=1; }
for d in $defaults; do
  grep -qF -- "    $d)" "$script" || { echo "FAIL: no branch for drill $d"; fail=1; }
done
exit $fail
