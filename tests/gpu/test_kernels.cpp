// Our kernels against host references, on the device.
#include <cmath>
#include <vector>

#include "gpu_test_util.hpp"
#include "gpucheck/harness/memory.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/stream.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;
using harness::Stream;

TEST(Kernels, FillUniformMatchesTheHostTwinAndIsNeverAllZero) {
  GPUCHECK_REQUIRE_DEVICE();
  Stream s;
  const std::size_t n = 100003;
  for (DType t : {DType::fp32, DType::fp16, DType::bf16, DType::fp8e4m3}) {
    DeviceBuffer buf(n * storage_bytes(t));
    kernels::fill_uniform(buf.get(), n, t, 1234, -1.f, 1.f, s.get());
    auto v = kernels::to_host_double(buf.get(), n, t, s.get());
    std::size_t zeros = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_GE(v[i], -1.0) << to_string(t);
      ASSERT_LE(v[i], 1.0) << to_string(t);
      zeros += v[i] == 0;
      const double want = kernels::uniform_at(1234, i, -1.f, 1.f);
      // Relative rounding for normal values; half the subnormal spacing below them (fp8 e4m3
      // has subnormals up to 2^-6, spaced 2^-9).
      const double sub = t == DType::fp8e4m3 ? 0x1p-10 : t == DType::fp16 ? 0x1p-25 : 0x1p-134;
      ASSERT_NEAR(v[i], want, 2 * unit_roundoff(t) * std::fabs(want) + sub) << to_string(t) << " at " << i;
    }
    EXPECT_LT(zeros, n / 100) << to_string(t);
  }
}

TEST(Kernels, CompareArraysFindsOneBadElementAndUnwrittenOnes) {
  GPUCHECK_REQUIRE_DEVICE();
  Stream s;
  const std::size_t n = 1 << 20;
  DeviceBuffer a(n * 4), b(n * 4);
  kernels::fill_uniform(a.get(), n, DType::fp32, 7, -1.f, 1.f, s.get());
  kernels::fill_uniform(b.get(), n, DType::fp32, 7, -1.f, 1.f, s.get());
  auto same = kernels::compare_arrays(a.get(), b.get(), n, DType::fp32, 0, 0, s.get());
  EXPECT_EQ(same.mismatches, 0u);
  EXPECT_EQ(same.nonfinite, 0u);
  EXPECT_EQ(same.rel_l2(), 0.0);
  const float bad = 5.f;
  GPUCHECK_CUDA(cudaMemcpy(a.as<float>() + 777, &bad, 4, cudaMemcpyHostToDevice));
  kernels::poison(a.as<float>() + 1000, 8, s.get());  // two NaN floats
  auto diff = kernels::compare_arrays(a.get(), b.get(), n, DType::fp32, 1e-6, 1e-6, s.get());
  EXPECT_EQ(diff.mismatches, 1u);
  EXPECT_EQ(diff.nonfinite, 2u);
  EXPECT_GT(diff.max_abs_err, 3.9);
}

TEST(Kernels, CopyVec16CopiesEveryByteIncludingTheTail) {
  GPUCHECK_REQUIRE_DEVICE();
  Stream s;
  int dev = 0;
  GPUCHECK_CUDA(cudaGetDevice(&dev));
  const auto l = kernels::stream_launch_for_device(dev);
  for (std::size_t bytes : {std::size_t{16}, std::size_t{4096} + 48, std::size_t{64} << 20, (std::size_t{64} << 20) + 16 * 7}) {
    DeviceBuffer src(bytes), dst(bytes);
    kernels::fill_pattern_u8(src.get(), bytes, 99, s.get());
    kernels::poison(dst.get(), bytes, s.get());
    EXPECT_GT(kernels::count_pattern_mismatches(dst.get(), bytes, 99, s.get()), 0u);
    for (auto v : {kernels::CopyVariant::flat, kernels::CopyVariant::strided}) {
      kernels::poison(dst.get(), bytes, s.get());
      kernels::copy_vec16(dst.get(), src.get(), bytes, l, s.get(), v);
      EXPECT_EQ(kernels::count_pattern_mismatches(dst.get(), bytes, 99, s.get()), 0u) << bytes;
    }
  }
}

TEST(Kernels, TriadAndReadSum) {
  GPUCHECK_REQUIRE_DEVICE();
  Stream s;
  int dev = 0;
  GPUCHECK_CUDA(cudaGetDevice(&dev));
  const auto l = kernels::stream_launch_for_device(dev);
  const std::size_t n = (1 << 22) + 12;
  DeviceBuffer a(n * 4), b(n * 4), c(n * 4), partial(sizeof(double) * static_cast<std::size_t>(l.blocks));
  kernels::fill_uniform(b.get(), n, DType::fp32, 1, -1.f, 1.f, s.get());
  kernels::fill_uniform(c.get(), n, DType::fp32, 2, -1.f, 1.f, s.get());
  kernels::triad_f32(a.as<float>(), b.as<float>(), c.as<float>(), 3.f, n, l, s.get());
  auto av = kernels::to_host_double(a.get(), n, DType::fp32, s.get());
  for (std::size_t i = 0; i < n; i += 997) {
    const double want = kernels::uniform_at(1, i, -1.f, 1.f) + 3.0 * kernels::uniform_at(2, i, -1.f, 1.f);
    ASSERT_NEAR(av[i], want, 1e-6) << i;
  }
  ASSERT_NEAR(av[n - 1], kernels::uniform_at(1, n - 1, -1.f, 1.f) + 3.0 * kernels::uniform_at(2, n - 1, -1.f, 1.f), 1e-6);
  kernels::read_sum_f32(b.as<float>(), n, partial.as<double>(), l, s.get());
  std::vector<double> parts(static_cast<std::size_t>(l.blocks));
  GPUCHECK_CUDA(cudaMemcpy(parts.data(), partial.get(), partial.bytes(), cudaMemcpyDeviceToHost));
  double got = 0, want = 0;
  for (double p : parts) got += p;
  for (std::size_t i = 0; i < n; ++i) want += static_cast<float>(kernels::uniform_at(1, i, -1.f, 1.f));
  EXPECT_NEAR(got, want, 1e-3 * std::sqrt(static_cast<double>(n)));
}

}  // namespace
}  // namespace gpucheck
