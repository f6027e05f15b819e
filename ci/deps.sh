#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages gpucheck builds and tests with, only those missing.
# As root it runs apt-get; otherwise it prints the exact line to run. The CUDA toolkit
# (nvcc, cuBLAS, cuDNN, NCCL) is not installed here: it comes from NVIDIA's packages and
# is looked for in /usr/local/cuda and the distro folders by CMake.
# Usage: ci/deps.sh [--build-only]   (--build-only: what the benchmarks and gpucheck need,
# not the test tools; ci/gate.sh uses it on GPU runners)
set -euo pipefail
build_only=0
[[ ${1:-} == --build-only ]] && build_only=1

# Tools count when they are on PATH however they were installed (pip's cmake, say).
tools=(cmake:cmake g++:g++ make:make git:git)
pkgs=(nlohmann-json3-dev libbenchmark-dev)
if ((!build_only)); then
  pkgs+=(libgtest-dev libgmock-dev googletest
         libbenchmark-tools python3 python3-numpy python3-scipy  # Google Benchmark's compare.py (interop test)
         clang)                                                  # libFuzzer target for the results reader
  # libFuzzer's runtime ships in libclang-rt-<N>-dev on Debian 12 / Ubuntu 24.04.
  if command -v clang >/dev/null 2>&1; then
    clang_major=$(clang -dumpversion | cut -d. -f1)
    pkgs+=("libclang-rt-${clang_major}-dev")
  fi
fi

missing=()
for t in "${tools[@]}"; do
  command -v "${t%%:*}" >/dev/null 2>&1 || missing+=("${t#*:}")
done
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "ci/deps.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
    # clang may just have arrived: its fuzzer runtime comes with a versioned package.
    if ((!build_only)) && [[ -z ${clang_major:-} ]] && command -v clang >/dev/null 2>&1; then
      clang_major=$(clang -dumpversion | cut -d. -f1)
      apt-get install -y -qq --no-install-recommends "libclang-rt-${clang_major}-dev" || true
    fi
  else
    echo "ci/deps.sh: missing packages; run as root:"
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
fi

if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "ci/deps.sh: no CUDA toolkit (nvcc) found; the benchmark binaries need it" \
       "(configure with -DGPUCHECK_ENABLE_CUDA=OFF to build only the compare tool)" >&2
fi
