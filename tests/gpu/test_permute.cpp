// permute3d against a host reference: every permutation of 3 dims, odd extents, element sizes
// 1..16 bytes, and misaligned pointers (the narrower-vector row path).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "gpu_test_util.hpp"
#include "gpucheck/core/bmm_model.hpp"
#include "gpucheck/harness/memory.hpp"
#include "gpucheck/kernels/permute.cuh"

namespace gpucheck {
namespace {

using Shape = std::array<std::int64_t, 3>;
using Perm = std::array<int, 3>;

const std::vector<Perm> kAllPerms{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

std::vector<std::uint8_t> host_permute(const std::vector<std::uint8_t>& in, const Shape& s, const Perm& p,
                                       std::size_t eb) {
  const Shape o = permuted_shape(s, p);
  std::vector<std::uint8_t> out(in.size());
  const std::int64_t in_stride[3] = {s[1] * s[2], s[2], 1};
  std::size_t w = 0;
  for (std::int64_t a = 0; a < o[0]; ++a)
    for (std::int64_t b = 0; b < o[1]; ++b)
      for (std::int64_t c = 0; c < o[2]; ++c, ++w) {
        const std::int64_t src = a * in_stride[p[0]] + b * in_stride[p[1]] + c * in_stride[p[2]];
        std::memcpy(&out[w * eb], &in[static_cast<std::size_t>(src) * eb], eb);
      }
  return out;
}

// Runs permute3d at byte offset `offset` into both buffers and compares with the host.
void check(const Shape& s, const Perm& p, std::size_t eb, std::size_t offset) {
  const std::size_t n = static_cast<std::size_t>(s[0] * s[1] * s[2]);
  std::vector<std::uint8_t> in(n * eb);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>((i * 131u + 7u) % 251u);
  harness::DeviceBuffer d_in(in.size() + offset + 16), d_out(in.size() + offset + 16);
  auto* src = static_cast<std::uint8_t*>(d_in.get()) + offset;
  auto* dst = static_cast<std::uint8_t*>(d_out.get()) + offset;
  ASSERT_EQ(cudaMemcpy(src, in.data(), in.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_out.get(), 0xAB, d_out.bytes()), cudaSuccess);
  kernels::permute3d(dst, src, s, p, eb, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint8_t> got(in.size() + 16);
  ASSERT_EQ(cudaMemcpy(got.data(), dst, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  const auto want = host_permute(in, s, p, eb);
  for (std::size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << "byte " << i << " shape " << s[0] << "x" << s[1] << "x" << s[2] << " perm "
                               << p[0] << p[1] << p[2] << " eb " << eb << " offset " << offset;
  for (std::size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(got[i], 0xAB) << "wrote past the end";
}

TEST(Permute, AllPermutationsOddShapes) {
  GPUCHECK_REQUIRE_DEVICE();
  for (const Shape& s : {Shape{3, 5, 7}, Shape{1, 17, 33}, Shape{13, 1, 9}, Shape{7, 11, 1}, Shape{2, 3, 8}})
    for (const Perm& p : kAllPerms)
      for (std::size_t eb : {1u, 2u, 4u, 8u, 16u}) check(s, p, eb, 0);
}

TEST(Permute, MisalignedPointersUseNarrowerVectors) {
  GPUCHECK_REQUIRE_DEVICE();
  for (std::size_t offset : {2u, 4u, 8u})
    for (const Perm& p : kAllPerms) {
      check({5, 9, 8}, p, 2, offset);  // 16-byte rows, pointers not 16-byte aligned
      check({4, 3, 7}, p, 2, offset);  // 14-byte rows
    }
}

TEST(Permute, BmmLayoutRoundTrip) {
  GPUCHECK_REQUIRE_DEVICE();
  check({64, 33, 64}, {1, 0, 2}, 2, 0);   // bmk -> mbk, 128-byte rows (uint4 path)
  check({33, 64, 64}, {1, 0, 2}, 4, 0);
  check({300, 70, 24}, {1, 0, 2}, 2, 0);  // more rows than one block's warps
}

TEST(Permute, RejectsBadArguments) {
  GPUCHECK_REQUIRE_DEVICE();
  harness::DeviceBuffer a(64), b(64);
  EXPECT_THROW(kernels::permute3d(b.get(), a.get(), {2, 2, 2}, {0, 0, 2}, 2, nullptr), std::invalid_argument);
  EXPECT_THROW(kernels::permute3d(b.get(), a.get(), {2, 2, 2}, {0, 1, 2}, 3, nullptr), std::invalid_argument);
  EXPECT_THROW(kernels::permute3d(b.get(), a.get(), {2, -1, 2}, {0, 1, 2}, 2, nullptr), std::invalid_argument);
  EXPECT_NO_THROW(kernels::permute3d(b.get(), a.get(), {0, 4, 4}, {2, 1, 0}, 2, nullptr));  // empty: no launch
}

}  // namespace
}  // namespace gpucheck
