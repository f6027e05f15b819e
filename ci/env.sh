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
