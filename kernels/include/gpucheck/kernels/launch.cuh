// Kernels for launch-overhead measurements: an empty kernel (pure launch cost) and a small
// real one (one block incrementing a few-KB uint32 counter array, so a chain of N launches is
// checkable: every element reads N).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace gpucheck::kernels {

// Threads of the small kernel's single block, and the most elements it takes.
inline constexpr int kAddOneThreads = 256;
inline constexpr int kAddOneMaxElems = 1 << 16;

// The empty kernel (no parameters), for cudaLaunchKernel(fn, 1, 1, args, 0, s) timed
// directly by the caller.
const void* empty_kernel_fn();

// <<<1, 1>>> empty kernel; returns the launch's status (no synchronisation, no
// cudaGetLastError: the caller checks the returned status).
cudaError_t launch_empty(cudaStream_t s);

// <<<1, kAddOneThreads>>>: x[i] += 1 for i < n (1 <= n <= kAddOneMaxElems, else
// cudaErrorInvalidValue without launching). Returns the launch's status.
cudaError_t launch_add_one(std::uint32_t* x, int n, cudaStream_t s);

}  // namespace gpucheck::kernels
