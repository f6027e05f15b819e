// bench_memory: HBM bandwidth in GB/s (1e9 bytes/s), counting bytes read plus bytes written:
// a device-to-device cudaMemcpyAsync, our 16-byte-per-thread copy kernel (and, in the full
// suite, its persistent SM-sized-grid twin, measured slower on H200), a STREAM triad
// (a = b + s*c: two reads, one write) and a read-only sum. Sizes are far past L2 (>= 4x),
// so every call streams from HBM and no flush is needed. Every case checks its output.
#include <cublas_v2.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gpucheck/core/names.hpp"
#include "gpucheck/core/verify.hpp"
#include "gpucheck/harness/check.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/harness/timing.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/stream.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;

enum class Op { memcpy, copy_kernel, copy_kernel_strided, triad, read_sum };

struct MemCase {
  Op op;
  std::size_t bytes;  // per array
  std::string name() const {
    switch (op) {
      case Op::memcpy: return bench_name({"memory", "memcpy_d2d", "u8", bytes_label(bytes)});
      case Op::copy_kernel: return bench_name({"memory", "copy_kernel", "u8", bytes_label(bytes)});
      case Op::copy_kernel_strided: return bench_name({"memory", "copy_kernel_persistent", "u8", bytes_label(bytes)});
      case Op::triad: return bench_name({"memory", "triad", "fp32", bytes_label(bytes)});
      case Op::read_sum: return bench_name({"memory", "read_sum", "fp32", bytes_label(bytes)});
    }
    return {};
  }
  // Bytes moved through HBM per call: read plus written.
  double traffic() const {
    const double b = static_cast<double>(bytes);
    switch (op) {
      case Op::memcpy:
      case Op::copy_kernel:
      case Op::copy_kernel_strided: return 2 * b;
      case Op::triad: return 3 * b;
      case Op::read_sum: return b;
    }
    return 0;
  }
};

void verify_copy(const DeviceBuffer& dst, std::uint32_t seed, const std::string& name, cudaStream_t s) {
  if (auto bad = kernels::count_pattern_mismatches(dst.get(), dst.bytes(), seed, s); bad != 0)
    throw VerificationError(name + ": " + std::to_string(bad) + " of " + std::to_string(dst.bytes()) +
                            " bytes differ from the source");
}

void copy_case(benchmark::State& state, const MemCase& c) {
  cudaStream_t s = harness::Device::get().stream();
  DeviceBuffer src(c.bytes), dst(c.bytes);
  const auto seed = static_cast<std::uint32_t>(std::random_device{}());
  kernels::fill_pattern_u8(src.get(), c.bytes, seed, s);
  const kernels::StreamLaunch l = kernels::stream_launch_for_device(harness::Device::get().index());
  harness::Work work;
  if (c.op == Op::memcpy)
    work = [&](cudaStream_t st) { GPUCHECK_CUDA(cudaMemcpyAsync(dst.get(), src.get(), c.bytes, cudaMemcpyDeviceToDevice, st)); };
  else {
    const auto v = c.op == Op::copy_kernel ? kernels::CopyVariant::flat : kernels::CopyVariant::strided;
    work = [&, v](cudaStream_t st) { kernels::copy_vec16(dst.get(), src.get(), c.bytes, l, st, v); };
  }
  kernels::poison(dst.get(), c.bytes, s);
  work(s);
  verify_copy(dst, seed, c.name(), s);
  const harness::Timing t = harness::time_on_stream(state, work);
  verify_copy(dst, seed, c.name(), s);  // the timed calls wrote the same bytes
  state.counters["GBps"] = harness::gbps(c.traffic(), t);
  if (c.op == Op::copy_kernel_strided) state.SetLabel("grid=" + std::to_string(l.blocks) + "x" + std::to_string(l.threads));
}

void triad_case(benchmark::State& state, const MemCase& c) {
  cudaStream_t s = harness::Device::get().stream();
  const std::size_t n = c.bytes / sizeof(float);
  DeviceBuffer a(c.bytes), b(c.bytes), cc(c.bytes);
  const std::uint64_t seed = std::random_device{}();
  const float scalar = 3.0f;
  kernels::fill_uniform(b.get(), n, DType::fp32, seed, -1.f, 1.f, s);
  kernels::fill_uniform(cc.get(), n, DType::fp32, seed + 1, -1.f, 1.f, s);
  kernels::poison(a.get(), c.bytes, s);
  const kernels::StreamLaunch l = kernels::stream_launch_for_device(harness::Device::get().index());
  auto work = [&](cudaStream_t st) { kernels::triad_f32(a.as<float>(), b.as<float>(), cc.as<float>(), scalar, n, l, st); };
  work(s);
  // Every element written: a NaN left by the poison shows up as non-finite against b.
  const auto written = kernels::compare_arrays(a.get(), b.get(), n, DType::fp32, INFINITY, INFINITY, s);
  if (written.nonfinite != 0)
    throw VerificationError(c.name() + ": " + std::to_string(written.nonfinite) + " elements not written");
  // Values: 4096 sampled elements against the host twin of the generator.
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> idx(4096);
  for (auto& i : idx) i = rng() % n;
  idx[0] = n - 1;
  const auto got = kernels::gather_to_host_double(a.get(), idx, DType::fp32, s);
  SampleChecker check(Tolerance{0x1p-23, 0x1p-23, 1e-6});
  for (std::size_t j = 0; j < idx.size(); ++j) {
    const double bv = kernels::uniform_at(seed, idx[j], -1.f, 1.f);
    const double cv = kernels::uniform_at(seed + 1, idx[j], -1.f, 1.f);
    check.add(idx[j], bv + scalar * cv, got[j], std::fabs(bv) + std::fabs(scalar * cv));
  }
  if (const CheckReport r = check.report(); !r.ok()) throw VerificationError(c.name() + ": wrong result: " + r.describe());
  const harness::Timing t = harness::time_on_stream(state, work);
  state.counters["GBps"] = harness::gbps(c.traffic(), t);
}

void read_sum_case(benchmark::State& state, const MemCase& c) {
  cudaStream_t s = harness::Device::get().stream();
  const std::size_t n = c.bytes / sizeof(float);
  const kernels::StreamLaunch l = kernels::stream_launch_for_device(harness::Device::get().index());
  DeviceBuffer src(c.bytes), partial(sizeof(double) * static_cast<std::size_t>(l.blocks));
  kernels::fill_uniform(src.get(), n, DType::fp32, std::random_device{}(), 0.f, 1.f, s);
  auto work = [&](cudaStream_t st) { kernels::read_sum_f32(src.as<float>(), n, partial.as<double>(), l, st); };
  work(s);
  std::vector<double> parts(static_cast<std::size_t>(l.blocks));
  GPUCHECK_CUDA(cudaMemcpyAsync(parts.data(), partial.get(), partial.bytes(), cudaMemcpyDeviceToHost, s));
  GPUCHECK_CUDA(cudaStreamSynchronize(s));
  double sum = 0;
  for (double p : parts) sum += p;
  // Reference: cuBLAS's own reduction (the values are non-negative, so asum is the sum).
  cublasHandle_t h = nullptr;
  GPUCHECK_CUBLAS(cublasCreate(&h));
  float ref = 0;
  cublasStatus_t st = cublasSetStream(h, s);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSasum(h, static_cast<int>(n), src.as<float>(), 1, &ref);
  cublasDestroy(h);
  GPUCHECK_CUBLAS(st);
  if (!(std::fabs(sum - ref) <= 1e-4 * std::fabs(ref)))
    throw VerificationError(c.name() + ": sum " + std::to_string(sum) + " differs from cuBLAS's " + std::to_string(ref));
  const harness::Timing t = harness::time_on_stream(state, work);
  state.counters["GBps"] = harness::gbps(c.traffic(), t);
}

}  // namespace

void harness::register_benchmarks(Device& device) {
  // At least 4x L2 so that nothing is served from cache.
  const std::size_t l2 = static_cast<std::size_t>(device.props().l2CacheSize);
  std::vector<std::size_t> sizes;
  if (device.full()) sizes = {std::size_t{256} << 20, std::size_t{1} << 30, std::size_t{2} << 30, std::size_t{4} << 30};
  else sizes = {std::size_t{2} << 30};
  for (std::size_t bytes : sizes) {
    if (bytes < 4 * l2) continue;
    for (Op op : {Op::memcpy, Op::copy_kernel, Op::copy_kernel_strided, Op::triad, Op::read_sum}) {
      if (op == Op::copy_kernel_strided && !device.full()) continue;  // the layout comparison
      if (op == Op::read_sum && bytes / sizeof(float) > 0x7fffffffu) continue;  // cuBLAS's int n
      const MemCase c{op, bytes};
      register_case(c.name(), [c](benchmark::State& st) {
        if (c.op == Op::memcpy || c.op == Op::copy_kernel || c.op == Op::copy_kernel_strided) copy_case(st, c);
        else if (c.op == Op::triad) triad_case(st, c);
        else read_sum_case(st, c);
      });
    }
  }
}

}  // namespace gpucheck
