# Sourced by the ci/ scripts: finds the CUDA toolkit when nvcc is not on PATH, and keeps
# NVLink multicast off (gpucheck never needs it and it can take a shared host's GPUs down).
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
export NCCL_NVLS_ENABLE=0
GPUCHECK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export GPUCHECK_ROOT
