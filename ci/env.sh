# shellcheck shell=bash disable=SC2034  # sourced: the variables it sets are read by the scripts that source it
# Sourced by the ci/ scripts: finds the CUDA toolkit when nvcc is not on PATH, and keeps
# NVLink multicast off (gpucheck never needs it and it can take a shared host's GPUs down).
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
export NCCL_NVLS_ENABLE=0
GPUCHECK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export GPUCHECK_ROOT

# gpucheck_generator BUILD_DIR: sets GPUCHECK_GENERATOR=(-G Ninja) for a new build folder when
# ninja is installed, else leaves it empty. Ninja starts every object as soon as its own
# inputs exist; the Makefile generator builds target after target along the link chain
# (core -> kernels -> harness -> bench_*), which doubled the gate's build on 16 cores
# (docs/GATE.md, "Build time"). An existing folder keeps its generator (CMake refuses a
# change); CMAKE_GENERATOR in the environment wins.
gpucheck_generator() {
  GPUCHECK_GENERATOR=()
  if [[ -z ${CMAKE_GENERATOR:-} && ! -f $1/CMakeCache.txt ]] && command -v ninja > /dev/null 2>&1; then
    GPUCHECK_GENERATOR=(-G Ninja)
  fi
}

# gpucheck_history GATE_ARGS...: sets GPUCHECK_HISTORY_ARGS=(--history FILE) for ci/gate.sh: the
# results history every gate run is kept in (docs/HISTORY.md), GPUCHECK_HISTORY or
# results/history.db; empty when GATE_ARGS name one, when GPUCHECK_HISTORY=off, or when the
# SQLite library the history loads at run time is not on this machine (said in one line).
gpucheck_history() {
  GPUCHECK_HISTORY_ARGS=()
  [[ ${GPUCHECK_HISTORY:-} != off ]] || return 0
  local a
  for a in "$@"; do [[ $a == --history || $a == --history=* ]] && return 0; done
  local lc
  lc=$(command -v ldconfig || echo /sbin/ldconfig)  # /sbin may be off a user's PATH
  if ! { "$lc" -p 2> /dev/null || true; } | grep -q 'libsqlite3\.so\.0 '; then
    echo "gate: no libsqlite3.so.0 on this machine: no results history kept (docs/HISTORY.md)"
    return 0
  fi
  local file=${GPUCHECK_HISTORY:-$GPUCHECK_ROOT/results/history.db}
  mkdir -p "$(dirname "$file")" && GPUCHECK_HISTORY_ARGS=(--history "$file")
}

# gpucheck_base_source BUILD_DIR: for ci/gate.sh's GPUCHECK_BASE_REF, the merge base of HEAD and
# that ref, checked out detached in a git worktree, BUILD_DIR-base-src (moved when the merge base
# moves); sets GPUCHECK_BASE_SHA. The gate judges the fresh-process cases against that build's
# binaries, each process run beside one of this build's (docs/GATE.md, "Fresh processes against
# the base build"). Returns 2 with one line on stderr when the ref or the merge base is not there.
gpucheck_base_source() {
  local src=$1-base-src ref=${GPUCHECK_BASE_REF:-}
  GPUCHECK_BASE_SHA=
  if ! git -C "$GPUCHECK_ROOT" rev-parse --verify -q "$ref^{commit}" > /dev/null; then
    echo "gpucheck: GPUCHECK_BASE_REF=$ref: no such commit in $GPUCHECK_ROOT (fetch it first)" >&2
    return 2
  fi
  GPUCHECK_BASE_SHA=$(git -C "$GPUCHECK_ROOT" merge-base HEAD "$ref" 2> /dev/null) || {
    echo "gpucheck: GPUCHECK_BASE_REF=$ref: no merge base with HEAD in $GPUCHECK_ROOT" >&2
    return 2
  }
  if [[ $(git -C "$src" rev-parse -q --verify HEAD 2> /dev/null) == "$GPUCHECK_BASE_SHA" ]]; then return 0; fi
  git -C "$GPUCHECK_ROOT" worktree remove --force "$src" > /dev/null 2>&1 || rm -rf "$src"
  git -C "$GPUCHECK_ROOT" worktree prune
  git -C "$GPUCHECK_ROOT" worktree add -q --detach "$src" "$GPUCHECK_BASE_SHA" > "$src.log" 2>&1 || {
    echo "gpucheck: GPUCHECK_BASE_REF=$ref: cannot check out $GPUCHECK_BASE_SHA in $src: $(tail -1 "$src.log")" >&2
    return 2
  }
}
