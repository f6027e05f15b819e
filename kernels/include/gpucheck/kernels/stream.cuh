// HBM bandwidth kernels: a 16-byte-per-thread copy, a STREAM triad and a read-only sum,
// each with a grid sized to the SMs (grid-stride loops), counting bytes read plus written.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace gpucheck::kernels {

// Launch shape for a memory-bound grid-stride kernel: `blocks_per_sm` blocks of `threads`.
struct StreamLaunch {
  int blocks = 0;
  int threads = 0;
};
StreamLaunch stream_launch_for_device(int device);

// flat: one vector per thread over a grid covering the array (the default, and the fastest
// measured); strided: a persistent grid sized to the SMs, 4 vectors in flight per thread.
enum class CopyVariant { flat, strided };
// dst[i] = src[i] over `bytes` (a multiple of 16, both 16-byte aligned).
void copy_vec16(void* dst, const void* src, std::size_t bytes, StreamLaunch l, cudaStream_t s,
                CopyVariant v = CopyVariant::flat);
// a[i] = b[i] + scalar * c[i] over n floats (n a multiple of 4, 16-byte aligned).
void triad_f32(float* a, const float* b, const float* c, float scalar, std::size_t n,
               StreamLaunch l, cudaStream_t s);
// partial[block] = sum of src over the block's share (n a multiple of 4); `partial` holds
// l.blocks doubles.
void read_sum_f32(const float* src, std::size_t n, double* partial, StreamLaunch l, cudaStream_t s);

}  // namespace gpucheck::kernels
