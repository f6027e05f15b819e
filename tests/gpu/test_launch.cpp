// The launch-overhead kernels: the small kernel counts launches exactly, eagerly and through a
// captured graph; the empty kernel launches cleanly both ways and through cudaLaunchKernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpu_test_util.hpp"
#include "gpucheck/harness/memory.hpp"
#include "gpucheck/kernels/launch.cuh"

namespace gpucheck {
namespace {

std::vector<std::uint32_t> read(const harness::DeviceBuffer& b, int n) {
  std::vector<std::uint32_t> h(static_cast<std::size_t>(n));
  EXPECT_EQ(cudaMemcpy(h.data(), b.get(), h.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

TEST(Launch, AddOneCountsEagerLaunches) {
  GPUCHECK_REQUIRE_DEVICE();
  for (int n : {1, 255, 256, 1024, 1031}) {
    harness::DeviceBuffer x(sizeof(std::uint32_t) * (static_cast<std::size_t>(n) + 1));
    ASSERT_EQ(cudaMemset(x.get(), 0, x.bytes()), cudaSuccess);
    for (int i = 0; i < 37; ++i) ASSERT_EQ(kernels::launch_add_one(x.as<std::uint32_t>(), n, nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto h = read(x, n + 1);
    for (int i = 0; i < n; ++i) ASSERT_EQ(h[static_cast<std::size_t>(i)], 37u) << "n " << n << " i " << i;
    EXPECT_EQ(h[static_cast<std::size_t>(n)], 0u) << "wrote past n";
  }
}

TEST(Launch, AddOneRejectsBadSizes) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::DeviceBuffer x(16);
  EXPECT_EQ(kernels::launch_add_one(x.as<std::uint32_t>(), 0, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(kernels::launch_add_one(x.as<std::uint32_t>(), kernels::kAddOneMaxElems + 1, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::launch_add_one(nullptr, 4, nullptr), cudaErrorInvalidValue);
}

TEST(Launch, EmptyKernelLaunchesBothWays) {
  GPUCHECK_REQUIRE_DEVICE();
  for (int i = 0; i < 10; ++i) ASSERT_EQ(kernels::launch_empty(nullptr), cudaSuccess);
  ASSERT_EQ(cudaLaunchKernel(kernels::empty_kernel_fn(), dim3(1), dim3(1), nullptr, 0, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(Launch, CapturedGraphReplaysCountExactly) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::Stream s;
  constexpr int kElems = 1024, kNodes = 100, kReplays = 3;
  harness::DeviceBuffer x(sizeof(std::uint32_t) * kElems);
  ASSERT_EQ(cudaMemsetAsync(x.get(), 0, x.bytes(), s.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  for (int i = 0; i < kNodes; ++i) {
    ASSERT_EQ(kernels::launch_add_one(x.as<std::uint32_t>(), kElems, s.get()), cudaSuccess);
    ASSERT_EQ(kernels::launch_empty(s.get()), cudaSuccess);
  }
  ASSERT_EQ(cudaStreamEndCapture(s.get(), &g), cudaSuccess);
  std::size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(g, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, static_cast<std::size_t>(2 * kNodes));
  cudaGraphExec_t e = nullptr;
  ASSERT_EQ(cudaGraphInstantiateWithFlags(&e, g, 0), cudaSuccess);
  for (int r = 0; r < kReplays; ++r) ASSERT_EQ(cudaGraphLaunch(e, s.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s.get()), cudaSuccess);
  const auto h = read(x, kElems);
  for (int i = 0; i < kElems; ++i) ASSERT_EQ(h[static_cast<std::size_t>(i)], std::uint32_t{kNodes * kReplays});
  EXPECT_EQ(cudaGraphExecDestroy(e), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(g), cudaSuccess);
}

}  // namespace
}  // namespace gpucheck
