#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages gpucheck builds and tests with, only those missing.
# What the build needs is REQUIRED: found however it was installed (a header in the include
# folders, a tool on PATH), else installed with apt-get (as root) or the exact line printed.
# What only some tests need is OPTIONAL (Google Benchmark's compare.py, numpy/scipy for it,
# clang's libFuzzer): installed when apt can, otherwise those tests skip with the reason,
# e.g. on a GPU machine that reaches no package mirror. The CUDA toolkit (nvcc, cuBLAS, cuDNN,
# NCCL) is not installed here: CMake looks for it in /usr/local/cuda and the distro folders.
# Usage: ci/deps.sh [--build-only | --quick]   (--build-only: what the benchmarks and gpucheck
# need, not the test tools; ci/gate.sh uses it on GPU runners. --quick: not the tools of the
# long suites either (clang's libFuzzer); ci/test.sh without --all)
set -euo pipefail
build_only=0 long=1
case ${1:-} in
  --build-only) build_only=1 ;;
  --quick) long=0 ;;
  "") ;;
  *) echo "ci/deps.sh: unknown option \"$1\" (usage: ci/deps.sh [--build-only | --quick])" >&2; exit 2 ;;
esac
if (($# > 1)); then echo "ci/deps.sh: one option at most (usage: ci/deps.sh [--build-only | --quick])" >&2; exit 2; fi

have_header() {  # a header in the usual include folders
  local h
  for h in "$@"; do [[ -f /usr/include/$h || -f /usr/local/include/$h ]] || return 1; done
}

required=() optional=()
for t in cmake:cmake g++:g++; do
  command -v "${t%%:*}" >/dev/null 2>&1 || required+=("${t#*:}")
done
command -v make >/dev/null 2>&1 || command -v ninja >/dev/null 2>&1 || required+=(make)
# Ninja builds the tree in half the time of make on many cores (ci/env.sh): optional, and only
# fetched by the test set-up (a GPU runner's gate set-up never waits on apt for it).
((build_only)) || command -v ninja >/dev/null 2>&1 || optional+=(ninja-build)
# git only names the commit in the results' context (GPUCHECK_GIT_COMMIT can say it instead).
command -v git >/dev/null 2>&1 || optional+=(git)
# Universal Ctags: tests/check_function_length.sh reads function extents with it (skips without).
((build_only)) || ctags --version 2>/dev/null | grep -q "Universal Ctags" || optional+=(universal-ctags)
have_header nlohmann/json.hpp || required+=(nlohmann-json3-dev)
# SQLite's library, not its header: `gpucheck history` and `gate --history` load libsqlite3.so.0 at
# run time (the tests need it; a GPU runner's gate only when it keeps a history).
if ! { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep -q 'libsqlite3\.so\.0 '; then
  if ((build_only)); then optional+=(libsqlite3-0); else required+=(libsqlite3-0); fi
fi
have_header benchmark/benchmark.h || required+=(libbenchmark-dev)
if ((!build_only)); then
  have_header gtest/gtest.h || required+=(libgtest-dev)
  # Google Benchmark's compare.py and what it imports (the interop test).
  [[ -f /usr/share/benchmark/compare.py ]] || optional+=(libbenchmark-tools)
  /usr/bin/python3 -c 'import numpy, scipy' >/dev/null 2>&1 || optional+=(python3 python3-numpy python3-scipy)
  # Slurm and munge (the fleet's Slurm test, a long suite: a 4-node cluster on localhost).
  if ((long)); then
    command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && command -v sbatch >/dev/null 2>&1 &&
      command -v munged >/dev/null 2>&1 || optional+=(slurmctld slurmd slurm-client munge)
  fi
  # libFuzzer (the results reader's fuzz test, a long suite): clang and its runtime.
  if ((long)); then
    if command -v clang >/dev/null 2>&1; then
      clang_major=$(clang -dumpversion | cut -d. -f1)
      dpkg-query -W -f='${Status}' "libclang-rt-${clang_major}-dev" 2>/dev/null | grep -q "install ok installed" ||
        optional+=("libclang-rt-${clang_major}-dev")
    else
      optional+=(clang)
    fi
  fi
fi

if ((${#required[@]} + ${#optional[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    if ((${#required[@]})); then
      echo "ci/deps.sh: missing packages; run as root:"
      echo "  sudo apt-get update && sudo apt-get install -y ${required[*]} ${optional[*]}"
      exit 1
    fi
    echo "ci/deps.sh: optional test tools missing (${optional[*]}): their tests skip" >&2
  else
    export DEBIAN_FRONTEND=noninteractive
    apt_ok=1
    timeout 120 apt-get update -qq || apt_ok=0  # a machine without a mirror fails fast, not never
    if ((${#required[@]})); then
      echo "ci/deps.sh: installing ${required[*]}"
      if ((!apt_ok)) || ! apt-get install -y -qq --no-install-recommends "${required[@]}"; then
        echo "ci/deps.sh: cannot install what the build needs: ${required[*]} (no package mirror?)" >&2
        exit 1
      fi
    fi
    if ((${#optional[@]})); then
      if ((apt_ok)) && apt-get install -y -qq --no-install-recommends "${optional[@]}"; then
        # clang may just have arrived: its fuzzer runtime comes with a versioned package.
        if ((long)) && [[ -z ${clang_major:-} ]] && command -v clang >/dev/null 2>&1; then
          clang_major=$(clang -dumpversion | cut -d. -f1)
          apt-get install -y -qq --no-install-recommends "libclang-rt-${clang_major}-dev" ||
            echo "ci/deps.sh: libclang-rt-${clang_major}-dev not installable: the fuzz test skips" >&2
        fi
      else
        echo "ci/deps.sh: optional test tools not installable (${optional[*]}): their tests skip" >&2
      fi
    fi
  fi
fi

if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "ci/deps.sh: no CUDA toolkit (nvcc) found; the benchmark binaries need it" \
       "(configure with -DGPUCHECK_ENABLE_CUDA=OFF to build only the compare tool)" >&2
fi
