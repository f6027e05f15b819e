// The Hopper attention kernel's device primitives: mbarriers, the spin that traps instead of
// hanging, stream-K's release/acquire flags, TMA loads, wgmma descriptors and fences, the
// register pins round the asynchronous wgmma, and the consumers' named barriers.
#pragma once

#include <cstdint>

namespace gpucheck::kernels::detail {
namespace {

__device__ __forceinline__ void st_shared_s32(std::uint32_t addr, int v) {
  asm volatile("st.shared.s32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ int ld_shared_s32(std::uint32_t addr) {
  int v;
  asm volatile("ld.shared.s32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Waits until the phase of `bar` with this parity has completed (a fresh barrier counts its
// phase "-1", parity 1, as completed). The consumers' waits are bare: their registers are
// all taken (any clock or counter here makes ptxas spill and serialize the wgmma, C7512).
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
// Spins until done() holds, or traps after ~4 s, which only a protocol bug (or a lost block)
// can take, so the launch fails with an error instead of hanging the process. The clock is
// read only once the first test failed.
template <class Done>
__device__ __forceinline__ void spin_or_trap(Done done) {
  if (done()) return;
  std::uint64_t t0;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t0));
  while (!done()) {
    std::uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(now));
    if (now - t0 > 4000000000ull) __trap();
  }
}
// The producer's waits trap rather than hang: the producer waits until the consumers have
// released the last stages, so a hang anywhere in the block ends here.
__device__ __forceinline__ void mbar_wait_or_trap(std::uint32_t bar, std::uint32_t parity) {
  spin_or_trap([&] { return mbar_try_wait(bar, parity); });
}

// Stream-K's hand-over of a partial between blocks (HopperParams): a release store of the
// flag after the data, an acquire load before reading it, at GPU scope.
__device__ __forceinline__ void st_release_gpu(unsigned long long* a, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;\n" ::"l"(a), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_acquire_gpu(const unsigned long long* a) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(a) : "memory");
  return v;
}
// Waits until *a == v (only a lost block takes long: its part is the first thing it computes).
__device__ __forceinline__ void wait_flag_or_trap(const unsigned long long* a, unsigned long long v) {
  spin_or_trap([&] { return ld_acquire_gpu(a) == v; });
}

__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int c0,
                                            int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
          dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// wgmma shared-memory descriptor, 128-byte swizzle (bits 0-13 address / 16, 16-29 lbo / 16,
// 32-45 sbo / 16, 62-63 the swizzle mode). K-major: sbo = 1024 (8-row groups), lbo unused
// (16). MN-major: lbo = bytes between 64-element column blocks, sbo = 1024. Built as two
// halves, so that the GEMM loops add each k-step's offset (bytes / 16) to the low word of one
// base instead of masking and shifting every address (ptxas does not fold
// `(base + c) & 0x3FFFF`, and the masks would cost uniform instructions on every wgmma).
// Adding is exact while the address stays below 256 KB (shared memory is 228 KB).
__device__ __forceinline__ std::uint32_t smem_desc_lo(std::uint32_t addr, std::uint32_t lbo) {
  return ((addr & 0x3FFFFu) >> 4) | (((lbo >> 4) & 0x3FFFu) << 16);
}
__device__ __forceinline__ std::uint64_t smem_desc_join(std::uint32_t lo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(((sbo >> 4) & 0x3FFFu) | (1u << 30)) << 32);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Pins register values in program order around the asynchronous wgmma (no read of an
// accumulator may move above its wait, no write of an operand below the fence).
template <int N>
__device__ __forceinline__ void pin(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void pin(std::uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
}

// The consumers' named barriers (the ping-pong of hopper/consumer.cuh): immediate ids 1-3,
// since a register id makes ptxas reserve all 16.
__device__ inline void bar_sync(int id) {
  if (id == 1) asm volatile("bar.sync 1, 256;\n" ::: "memory");
  else if (id == 2) asm volatile("bar.sync 2, 256;\n" ::: "memory");
  else asm volatile("bar.sync 3, 256;\n" ::: "memory");
}
__device__ inline void bar_arrive(int id) {
  if (id == 1) asm volatile("bar.arrive 1, 256;\n" ::: "memory");
  else if (id == 2) asm volatile("bar.arrive 2, 256;\n" ::: "memory");
  else asm volatile("bar.arrive 3, 256;\n" ::: "memory");
}

// Programmatic dependent launch (hopper/launch.cuh): wait for the kernel before this one in
// the stream to have finished, and let the one after it launch.
__device__ __forceinline__ void griddep_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void griddep_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

}  // namespace
}  // namespace gpucheck::kernels::detail
