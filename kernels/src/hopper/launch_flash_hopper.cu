// The host API's entry to the Hopper attention kernel (hopper/kernel.cuh): checks, then picks
// the instantiation of the dtype and head dim (one translation unit each, instance_*_d*.cu);
// with the stream-K workspace's pool. Compiled for sm_90a only, like them (kernels/CMakeLists.txt).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "../attention_launch.hpp"
#include "gpucheck/check_cuda.hpp"

namespace gpucheck::kernels::detail {

bool hopper_kernel_loadable(int device) {
  // Asked on every launch: answer once per device.
  static std::mutex mu;
  static std::map<int, bool> known;
  const std::lock_guard<std::mutex> lock(mu);
  if (const auto it = known.find(device); it != known.end()) return it->second;
  int major = 0, minor = 0;
  GPUCHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GPUCHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  bool ok = major == 9 && minor == 0;
  if (ok) ok = flash_hopper_variant_loadable<__half, 128>();
  known[device] = ok;
  return ok;
}

namespace {
// The stream-ordered pool of a device's stream-K workspaces: created on first use and kept for
// the process (its release threshold at the maximum, so memory freed on a stream is reused by
// the next launch without a round trip to the driver); nullptr where the device has no memory
// pools.
cudaMemPool_t workspace_pool(int device) {
  static std::mutex mu;
  static std::map<int, cudaMemPool_t> pools;
  const std::lock_guard<std::mutex> lock(mu);
  if (const auto it = pools.find(device); it != pools.end()) return it->second;
  cudaMemPool_t pool = nullptr;
  int supported = 0;
  if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) == cudaSuccess && supported) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    if (cudaMemPoolCreate(&pool, &props) == cudaSuccess) {
      std::uint64_t keep = UINT64_MAX;
      if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
        (void)cudaMemPoolDestroy(pool);
        pool = nullptr;
      }
    } else {
      pool = nullptr;
    }
  }
  (void)cudaGetLastError();  // a device without pools is an answer here, not an error
  pools[device] = pool;
  return pool;
}
}  // namespace

bool HopperWorkspace::acquire(std::size_t bytes, cudaStream_t s) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  GPUCHECK_CUDA(cudaStreamIsCapturing(s, &capture));
  if (capture != cudaStreamCaptureStatusNone) return false;
  int device = 0;
  GPUCHECK_CUDA(cudaGetDevice(&device));
  const cudaMemPool_t pool = workspace_pool(device);
  if (pool == nullptr) return false;
  void* p = nullptr;
  if (cudaMallocFromPoolAsync(&p, bytes, pool, s) != cudaSuccess) {
    (void)cudaGetLastError();  // out of memory: the launch goes without stream-K
    return false;
  }
  ptr = p;
  stream = s;
  return true;
}

HopperWorkspace::~HopperWorkspace() {
  if (ptr != nullptr) GPUCHECK_CUDA_NOEXCEPT(cudaFreeAsync(ptr, stream));
}

unsigned long long next_hopper_epoch() {
  // Starts from the clock, so that a workspace's bytes left by another process cannot match.
  static std::atomic<unsigned long long> next{
      static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count()) * 2654435761ull |
      1ull};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void launch_flash_hopper(const AttentionProblem& pr, const FlashParams& fp, bool overlap, cudaStream_t stream) {
  if (pr.head_dim != 64 && pr.head_dim != 128 && pr.head_dim != 256)
    throw std::invalid_argument("flash_attention_fwd: head_dim " + std::to_string(pr.head_dim) +
                                " is not supported by the hopper kernel (64, 128 or 256)");
  if (static_cast<long long>(pr.batch) * pr.heads > 0x7fffffffLL)
    throw std::invalid_argument("flash_attention_fwd: batch * heads too large for the hopper kernel");
  auto run = [&](auto tag) {
    using T = decltype(tag);
    switch (pr.head_dim) {
      case 64: return launch_flash_hopper_variant<T, 64>(pr, fp, overlap, stream);
      case 128: return launch_flash_hopper_variant<T, 128>(pr, fp, overlap, stream);
      default: return launch_flash_hopper_variant<T, 256>(pr, fp, overlap, stream);
    }
  };
  if (pr.dtype == DType::fp16)
    run(__half{});
  else
    run(__nv_bfloat16{});
}

}  // namespace gpucheck::kernels::detail
