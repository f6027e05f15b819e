// Move-only owners of device memory, pinned host memory, streams and events. Destructors
// never throw; they report a failing free on stderr.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpucheck/check_cuda.hpp"

namespace gpucheck::harness {

template <typename Derived>
class MoveOnly {
 public:
  MoveOnly() = default;
  MoveOnly(const MoveOnly&) = delete;
  MoveOnly& operator=(const MoveOnly&) = delete;
};

// Device or pinned host memory: one owner shape, the allocation calls from Space.
template <typename Space>
class Buffer : MoveOnly<Buffer<Space>> {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t bytes, unsigned flags = Space::kDefaultFlags) : bytes_(bytes) {
    if (bytes) Space::allocate(&p_, bytes, flags);
  }
  Buffer(Buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  ~Buffer() { reset(); }
  void reset() noexcept {
    if (p_) Space::release(p_);
    p_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return p_; }
  template <typename T>
  T* as() const { return static_cast<T*>(p_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

struct DeviceSpace {
  static constexpr unsigned kDefaultFlags = 0;  // unused: cudaMalloc takes none
  static void allocate(void** p, std::size_t bytes, unsigned /*flags*/) { GPUCHECK_CUDA(cudaMalloc(p, bytes)); }
  static void release(void* p) noexcept { GPUCHECK_CUDA_NOEXCEPT(cudaFree(p)); }
};

struct PinnedSpace {
  static constexpr unsigned kDefaultFlags = cudaHostAllocDefault;
  static void allocate(void** p, std::size_t bytes, unsigned flags) { GPUCHECK_CUDA(cudaHostAlloc(p, bytes, flags)); }
  static void release(void* p) noexcept { GPUCHECK_CUDA_NOEXCEPT(cudaFreeHost(p)); }
};

using DeviceBuffer = Buffer<DeviceSpace>;  // cudaMalloc
using PinnedBuffer = Buffer<PinnedSpace>;  // cudaHostAlloc (flags: cudaHostAllocDefault)

class Stream : MoveOnly<Stream> {
 public:
  Stream() { GPUCHECK_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      if (s_) GPUCHECK_CUDA_NOEXCEPT(cudaStreamDestroy(s_));
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  ~Stream() {
    if (s_) GPUCHECK_CUDA_NOEXCEPT(cudaStreamDestroy(s_));
  }
  cudaStream_t get() const { return s_; }
  void sync() const { GPUCHECK_CUDA(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event : MoveOnly<Event> {
 public:
  explicit Event(unsigned flags = cudaEventDefault) { GPUCHECK_CUDA(cudaEventCreateWithFlags(&e_, flags)); }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      if (e_) GPUCHECK_CUDA_NOEXCEPT(cudaEventDestroy(e_));
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  ~Event() {
    if (e_) GPUCHECK_CUDA_NOEXCEPT(cudaEventDestroy(e_));
  }
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) const { GPUCHECK_CUDA(cudaEventRecord(e_, s)); }
  // Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_ms_since(const Event& start) const {
    GPUCHECK_CUDA(cudaEventSynchronize(e_));
    float ms = 0;
    GPUCHECK_CUDA(cudaEventElapsedTime(&ms, start.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace gpucheck::harness
