// bench_memory: HBM bandwidth in GB/s (1e9 bytes/s), counting bytes read plus bytes written:
// a device-to-device cudaMemcpyAsync, our 16-byte-per-thread copy kernel (and, in the full
// suite, its persistent SM-sized-grid twin, measured slower on H200), a STREAM triad
// (a = b + s*c: two reads, one write) and a read-only sum. Sizes are far past L2 (>= 4x),
// so every call streams from HBM and no flush is needed. Every case checks its output.
#include <cublas_v2.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cases/memory.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/verify.hpp"
#include "gpucheck/harness/check.hpp"
#include "gpucheck/harness/cublas_handle.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/libraries.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/stream.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;

// Copies: src filled with a byte pattern, dst poisoned, every byte checked before and after
// timing (the timed calls wrote the same bytes).
class Copy final : public harness::Op {
 public:
  using Enqueue = std::function<void(void* dst, const void* src, std::size_t bytes, cudaStream_t s)>;
  Copy(std::string name, std::size_t bytes, harness::Device& dev, Enqueue enqueue, std::string label)
      : name_(std::move(name)), dev_(dev), src_(bytes), dst_(bytes), enqueue_(std::move(enqueue)),
        label_(std::move(label)), seed_(static_cast<std::uint32_t>(std::random_device{}())) {
    kernels::fill_pattern_u8(src_.get(), bytes, seed_, dev_.stream());
  }
  void run(cudaStream_t s) override { enqueue_(dst_.get(), src_.get(), src_.bytes(), s); }
  void verify() override {
    kernels::poison(dst_.get(), dst_.bytes(), dev_.stream());
    run(dev_.stream());
    verify_after();
  }
  void verify_after() override {
    if (auto bad = kernels::count_pattern_mismatches(dst_.get(), dst_.bytes(), seed_, dev_.stream()); bad != 0)
      throw VerificationError(name_ + ": " + std::to_string(bad) + " of " + std::to_string(dst_.bytes()) +
                              " bytes differ from the source");
  }
  std::string label() const override { return label_; }

 private:
  std::string name_;
  harness::Device& dev_;
  DeviceBuffer src_, dst_;
  Enqueue enqueue_;
  std::string label_;
  std::uint32_t seed_;
};

// STREAM triad a = b + s*c: every element written (the poison would show as non-finite),
// 4096 sampled elements against the host twin of the generator.
class Triad final : public harness::Op {
 public:
  Triad(std::string name, std::size_t bytes, harness::Device& dev)
      : name_(std::move(name)), dev_(dev), n_(bytes / sizeof(float)), a_(bytes), b_(bytes), c_(bytes),
        seed_(std::random_device{}()), launch_(kernels::stream_launch_for_device(dev.index())) {
    kernels::fill_uniform(b_.get(), n_, DType::fp32, seed_, -1.f, 1.f, dev_.stream());
    kernels::fill_uniform(c_.get(), n_, DType::fp32, seed_ + 1, -1.f, 1.f, dev_.stream());
  }
  void run(cudaStream_t s) override {
    kernels::triad_f32(a_.as<float>(), b_.as<float>(), c_.as<float>(), kScalar, n_, launch_, s);
  }
  void verify() override {
    cudaStream_t s = dev_.stream();
    kernels::poison(a_.get(), a_.bytes(), s);
    run(s);
    const auto written = kernels::compare_arrays(a_.get(), b_.get(), n_, DType::fp32, INFINITY, INFINITY, s);
    if (written.nonfinite != 0)
      throw VerificationError(name_ + ": " + std::to_string(written.nonfinite) + " elements not written");
    std::mt19937_64 rng(seed_);
    std::vector<std::size_t> idx(4096);
    for (auto& i : idx) i = rng() % n_;
    idx[0] = n_ - 1;
    const auto got = kernels::gather_to_host_double(a_.get(), idx, DType::fp32, s);
    SampleChecker check(Tolerance{0x1p-23, 0x1p-23, 1e-6});
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const double bv = kernels::uniform_at(seed_, idx[j], -1.f, 1.f);
      const double cv = kernels::uniform_at(seed_ + 1, idx[j], -1.f, 1.f);
      check.add(idx[j], bv + kScalar * cv, got[j], std::fabs(bv) + std::fabs(kScalar * cv));
    }
    if (const CheckReport r = check.report(); !r.ok()) throw VerificationError(name_ + ": wrong result: " + r.describe());
  }

 private:
  static constexpr float kScalar = 3.0f;
  std::string name_;
  harness::Device& dev_;
  std::size_t n_;
  DeviceBuffer a_, b_, c_;
  std::uint64_t seed_;
  kernels::StreamLaunch launch_;
};

// Read-only sum, checked against cuBLAS's own reduction (the values are non-negative, so
// asum is the sum).
class ReadSum final : public harness::Op {
 public:
  ReadSum(std::string name, std::size_t bytes, harness::Device& dev)
      : name_(std::move(name)), dev_(dev), n_(bytes / sizeof(float)), launch_(kernels::stream_launch_for_device(dev.index())),
        src_(bytes), partial_(sizeof(double) * static_cast<std::size_t>(launch_.blocks)) {
    kernels::fill_uniform(src_.get(), n_, DType::fp32, std::random_device{}(), 0.f, 1.f, dev_.stream());
  }
  void run(cudaStream_t s) override { kernels::read_sum_f32(src_.as<float>(), n_, partial_.as<double>(), launch_, s); }
  void verify() override {
    cudaStream_t s = dev_.stream();
    run(s);
    std::vector<double> parts(static_cast<std::size_t>(launch_.blocks));
    GPUCHECK_CUDA(cudaMemcpyAsync(parts.data(), partial_.get(), partial_.bytes(), cudaMemcpyDeviceToHost, s));
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    double sum = 0;
    for (double p : parts) sum += p;
    harness::CublasHandle cublas;
    float ref = 0;
    GPUCHECK_CUBLAS(cublasSasum(cublas.on(s), static_cast<int>(n_), src_.as<float>(), 1, &ref));
    if (!(std::fabs(sum - ref) <= 1e-4 * std::fabs(ref)))
      throw VerificationError(name_ + ": sum " + std::to_string(sum) + " differs from cuBLAS's " + std::to_string(ref));
  }

 private:
  std::string name_;
  harness::Device& dev_;
  std::size_t n_;
  kernels::StreamLaunch launch_;
  DeviceBuffer src_, partial_;
};

std::unique_ptr<harness::Op> make_copy(const std::string& name, std::size_t bytes, harness::Device& dev,
                                       kernels::CopyVariant v, bool with_label) {
  const kernels::StreamLaunch l = kernels::stream_launch_for_device(dev.index());
  return std::make_unique<Copy>(
      name, bytes, dev, [l, v](void* d, const void* s, std::size_t b, cudaStream_t st) { kernels::copy_vec16(d, s, b, l, st, v); },
      with_label ? "grid=" + std::to_string(l.blocks) + "x" + std::to_string(l.threads) : std::string());
}

// A variant's op (benchmarks/cases/memory.hpp holds the table), by its name.
std::unique_ptr<harness::Op> make(std::string_view variant, const std::string& n, std::size_t b, harness::Device& d) {
  namespace seg = contract::segment;
  if (variant == seg::memcpy_d2d)
    return std::make_unique<Copy>(n, b, d, [](void* dst, const void* src, std::size_t bytes, cudaStream_t s) {
      GPUCHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
    }, std::string());
  if (variant == seg::copy_kernel) return make_copy(n, b, d, kernels::CopyVariant::flat, false);
  if (variant == "copy_kernel_persistent") return make_copy(n, b, d, kernels::CopyVariant::strided, true);
  if (variant == "triad") return std::make_unique<Triad>(n, b, d);
  return std::make_unique<ReadSum>(n, b, d);
}

void register_cases(harness::Registry& r) {
  harness::record_cublas_version();
  harness::Device& dev = r.device();
  const Suite suite = dev.suite();
  // At least 4x L2 so that nothing is served from cache.
  const auto l2 = static_cast<std::uint64_t>(dev.props().l2CacheSize);
  for (const memory::Case& mc : memory::cases(suite, r.points(), l2)) {
    const memory::Variant& v = *mc.variant;
    const std::size_t bytes = mc.bytes;
    {
      const std::string name = mc.name();
      if (mc.cached) {
        r.add_unsupported(name, "under 4x the L2 (" + bytes_label(l2) + "): it would be served from cache");
        continue;
      }
      // Arrays held = bytes through HBM per array byte: read_sum one, the copies two, triad three.
      if (const auto why = harness::exceeds_free_memory(static_cast<std::uint64_t>(v.traffic * static_cast<double>(bytes)))) {
        r.add_unsupported(name, *why);
        continue;
      }
      if (v.name == "read_sum" && bytes / sizeof(float) > 0x7fffffffu) {
        r.add_unsupported(name, "cuBLAS's reference sum takes an int count: over 2^31 floats");
        continue;
      }
      harness::Case c;
      c.name = name;
      c.rates = {harness::gbps(v.traffic * static_cast<double>(bytes))};
      c.measure = r.defaults();
      c.setup = [&v, name, bytes, &dev] { return make(v.name, name, bytes, dev); };
      r.add(std::move(c));
    }
  }
}

}  // namespace

harness::Family harness::family() {
  Family f;
  f.model = memory::model();
  f.register_cases = register_cases;
  f.summary = "bench_memory: HBM bandwidth (GB/s, bytes read + written per call) of device-to-device copies, a copy "
              "kernel, a triad and a read-only sum, at sizes far past the L2.";
  f.list = [](Suite s, const std::vector<axes::Point>* p, const axes::DeviceFacts& d) {
    return listed(memory::cases(s, p, d.l2_bytes));
  };
  f.own_help =
      "A size under 4x the L2 is left out of a suite and reported skipped when given with -a.\n"
      "Examples:\n"
      "  bench_memory -a bytes=512MiB,8GiB -a variant=memcpy_d2d,triad --list\n"
      "  bench_memory -b 256M -e 8G -f 2 -a variant=copy_kernel --benchmark_out=copy.json\n";
  return f;
}

}  // namespace gpucheck
