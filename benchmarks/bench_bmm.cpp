// bench_bmm: batched GEMM C[b] = A[b] B[b] (row-major, PyTorch's torch.bmm convention) in
// TFLOP/s (2*b*m*n*k per call), fp32 accumulate, for fp16, bf16 and fp32 (no TF32), through
// the paths a framework may take:
//   strided      cublasGemmStridedBatchedEx on contiguous A [b,m,k] (what torch.bmm calls)
//   strided_mbk  the same call on A stored [m,b,k] read in place (lda = b*k, batch stride k):
//                what torch.einsum("mbk,bkn->bmn") does with that layout (a view, no copy)
//   permute_bmm  A stored [m,b,k] materialised as [b,m,k] by our permute kernel, then strided;
//                the pair is timed together
//   permute      that permute alone, counter GBps (bytes read + written): it explains the
//                difference between permute_bmm and strided
//   ptr_array    cublasGemmBatchedEx with device arrays of per-batch pointers
//   loop         b cublasGemmEx calls. Timed per call (stream NOT held): the host issue rate
//                of b launches is part of what a loop costs (and b = 512 launches queued behind
//                the engine's spin kernel would approach the launch queue's depth)
// All other paths are timed held (device time: stream held until queued, back-to-back calls).
// strided is checked on sampled outputs against a double host reference; every other path's
// output must equal strided's: exactly for permute_bmm (same inputs, same call), within a
// tight accumulation-order tolerance for the others (another kernel may be chosen).
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cases/bmm.hpp"
#include "gpucheck/core/bmm_model.hpp"
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
#include "gpucheck/kernels/permute.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;

using harness::CublasHandle;

class Bmm;

// A path's call (benchmarks/cases/bmm.hpp holds the table of paths and shapes).
using Run = void (Bmm::*)(cudaStream_t) const;
using Path = bmm::Path;
using bmm::Check;

// A path's call, by its name.
Run run_of(std::string_view path);

// Operands of one case. A is generated as [b,m,k]; its [m,b,k] copy (the einsum layout) is
// made with the permute kernel, so every path multiplies the very same values.
class Bmm final : public harness::Op {
 public:
  Bmm(std::string name, const Path& path, DType dtype, const BmmShape& shape, harness::Device& dev, CublasHandle& cublas)
      : name_(std::move(name)), path_(path), dtype_(dtype), shape_(shape), dev_(dev), cublas_(cublas),
        type_(harness::cuda_data_type(dtype, "bmm")), eb_(storage_bytes(dtype)),
        na_(static_cast<std::size_t>(shape.b) * static_cast<std::size_t>(shape.m) * static_cast<std::size_t>(shape.k)),
        nb_(static_cast<std::size_t>(shape.b) * static_cast<std::size_t>(shape.k) * static_cast<std::size_t>(shape.n)),
        nc_(static_cast<std::size_t>(shape.b) * static_cast<std::size_t>(shape.m) * static_cast<std::size_t>(shape.n)) {
    const BmmShape& s = shape;
    // cuBLAS takes int extents and leading dimensions.
    for (std::int64_t v : {s.m, s.n, s.k, s.b, s.b * s.k})
      if (v > INT32_MAX) throw std::invalid_argument(name_ + ": extent exceeds int");
    cudaStream_t st = dev_.stream();
    a_bmk_ = DeviceBuffer(na_ * eb_);
    a_mbk_ = DeviceBuffer(na_ * eb_);
    a_tmp_ = DeviceBuffer(na_ * eb_);
    b_ = DeviceBuffer(nb_ * eb_);
    c_ref_ = DeviceBuffer(nc_ * eb_);
    if (path.needs_out) out_ = DeviceBuffer(nc_ * eb_);
    seed_ = std::random_device{}();
    kernels::fill_uniform(a_bmk_.get(), na_, dtype, seed_, -1.f, 1.f, st);
    kernels::fill_uniform(b_.get(), nb_, dtype, seed_ + 1, -1.f, 1.f, st);
    kernels::permute3d(a_mbk_.get(), a_bmk_.get(), {s.b, s.m, s.k}, {1, 0, 2}, eb_, st);
    if (run_ == &Bmm::ptr_array) {
      std::vector<const void*> pa(static_cast<std::size_t>(s.b)), pb(static_cast<std::size_t>(s.b));
      std::vector<void*> pc(static_cast<std::size_t>(s.b));
      for (std::size_t i = 0; i < pa.size(); ++i) {
        pa[i] = byte_at(b_, i * static_cast<std::size_t>(s.k * s.n));  // cuBLAS's A is our B
        pb[i] = byte_at(a_bmk_, i * static_cast<std::size_t>(s.m * s.k));
        pc[i] = byte_at(out_, i * static_cast<std::size_t>(s.m * s.n));
      }
      ptr_a_ = DeviceBuffer(pa.size() * sizeof(void*));
      ptr_b_ = DeviceBuffer(pb.size() * sizeof(void*));
      ptr_c_ = DeviceBuffer(pc.size() * sizeof(void*));
      GPUCHECK_CUDA(cudaMemcpyAsync(ptr_a_.get(), pa.data(), ptr_a_.bytes(), cudaMemcpyHostToDevice, st));
      GPUCHECK_CUDA(cudaMemcpyAsync(ptr_b_.get(), pb.data(), ptr_b_.bytes(), cudaMemcpyHostToDevice, st));
      GPUCHECK_CUDA(cudaMemcpyAsync(ptr_c_.get(), pc.data(), ptr_c_.bytes(), cudaMemcpyHostToDevice, st));
    }
    GPUCHECK_CUDA(cudaStreamSynchronize(st));  // the host vectors above go out of scope
  }

  void run(cudaStream_t st) override { (this->*run_)(st); }

  // The paths (rows of the table): GEMM paths write out_, or c_ref_ for strided.
  void strided_bmk(cudaStream_t st) const { strided(a_bmk_.get(), shape_.k, shape_.m * shape_.k, c_ref_.get(), st); }
  void strided_mbk(cudaStream_t st) const { strided(a_mbk_.get(), shape_.b * shape_.k, shape_.k, out_.get(), st); }
  void permute_bmm(cudaStream_t st) const {
    permute(st);
    strided(a_tmp_.get(), shape_.k, shape_.m * shape_.k, out_.get(), st);
  }
  void permute(cudaStream_t st) const {
    kernels::permute3d(a_tmp_.get(), a_mbk_.get(), {shape_.m, shape_.b, shape_.k}, {1, 0, 2}, eb_, st);
  }
  void ptr_array(cudaStream_t st) const {
    const BmmShape& s = shape_;
    const float alpha = 1.f, beta = 0.f;
    GPUCHECK_CUBLAS(cublasGemmBatchedEx(cublas_.on(st), CUBLAS_OP_N, CUBLAS_OP_N, i32(s.n), i32(s.m), i32(s.k), &alpha,
                                        ptr_a_.as<const void* const>(), type_, i32(s.n), ptr_b_.as<const void* const>(),
                                        type_, i32(s.k), &beta, ptr_c_.as<void* const>(), type_, i32(s.n), i32(s.b),
                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  void loop(cudaStream_t st) const {
    const BmmShape& s = shape_;
    const float alpha = 1.f, beta = 0.f;
    cublasHandle_t h = cublas_.on(st);
    for (std::int64_t i = 0; i < s.b; ++i)
      GPUCHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, i32(s.n), i32(s.m), i32(s.k), &alpha,
                                   byte_at(b_, static_cast<std::size_t>(i * s.k * s.n)), type_, i32(s.n),
                                   byte_at(a_bmk_, static_cast<std::size_t>(i * s.m * s.k)), type_, i32(s.k), &beta,
                                   byte_at(out_, static_cast<std::size_t>(i * s.m * s.n)), type_, i32(s.n),
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  std::string label() const override { return std::string(path_.label); }
  void add_counters(benchmark::State& state, const harness::Measurement& m) const override {
    if (path_.permute_only) return;  // GBps: a rate of the case
    if (auto peak = dev_.peak_tflops(dtype_)) state.counters[contract::counter::pct_of_peak] = 100.0 * bmm_flops(shape_) / m.per_call_s / 1e12 / *peak;
  }

  // strided into c_ref_, checked on sampled outputs against a double reference; then this
  // case's own output against c_ref_.
  void verify() override {
    cudaStream_t st = dev_.stream();
    kernels::poison(c_ref_.get(), c_ref_.bytes(), st);
    strided_bmk(st);
    check_reference(st);
    switch (path_.check) {
      case Check::reference_only: return;
      case Check::permuted_equal:
        kernels::poison(a_tmp_.get(), a_tmp_.bytes(), st);
        permute(st);
        expect_equal(a_tmp_.get(), a_bmk_.get(), na_, 0, 0, 0, "permuted A");
        return;
      case Check::exact:  // the same call on bitwise the same operands
        kernels::poison(out_.get(), out_.bytes(), st);
        kernels::poison(a_tmp_.get(), a_tmp_.bytes(), st);
        run(st);
        expect_equal(out_.get(), c_ref_.get(), nc_, 0, 0, 0, "C");
        return;
      case Check::tolerance: {
        kernels::poison(out_.get(), out_.bytes(), st);
        run(st);
        const PathTolerance tol = bmm_path_tolerance(dtype_, shape_.k, 1.0);
        expect_equal(out_.get(), c_ref_.get(), nc_, tol.rtol, tol.atol, tol.rel_l2, "C");
        return;
      }
    }
  }

 private:
  static int i32(std::int64_t v) { return static_cast<int>(v); }
  void* byte_at(const DeviceBuffer& buf, std::size_t elem) const { return static_cast<char*>(buf.get()) + elem * eb_; }

  // Row-major C[b,m,n] = A B as column-major C^T = B^T A^T: cuBLAS's (m, n, k) = (n, m, k),
  // its A is our B (n x k, ld n), its B is our A (ld = a's row stride), C ld n.
  void strided(const void* a, std::int64_t lda, std::int64_t stride_a, void* c, cudaStream_t st) const {
    const BmmShape& s = shape_;
    const float alpha = 1.f, beta = 0.f;
    GPUCHECK_CUBLAS(cublasGemmStridedBatchedEx(cublas_.on(st), CUBLAS_OP_N, CUBLAS_OP_N, i32(s.n), i32(s.m), i32(s.k),
                                               &alpha, b_.get(), type_, i32(s.n), s.k * s.n, a, type_, i32(lda),
                                               stride_a, &beta, c, type_, i32(s.n), s.m * s.n, i32(s.b),
                                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  void expect_equal(const void* got, const void* want, std::size_t n, double rtol, double atol, double rel_l2,
                    const char* what) const {
    const kernels::DiffStats d = kernels::compare_arrays(got, want, n, dtype_, rtol, atol, dev_.stream());
    if (d.mismatches != 0 || d.nonfinite != 0 || d.rel_l2() > rel_l2)
      throw VerificationError(name_ + ": " + what + " differs from the strided bmm's: " +
                              std::to_string(d.mismatches) + " of " + std::to_string(n) + " over rtol " +
                              std::to_string(rtol) + " atol " + std::to_string(atol) + ", " +
                              std::to_string(d.nonfinite) + " non-finite, max abs err " +
                              std::to_string(d.max_abs_err) + ", rel_l2 " + std::to_string(d.rel_l2()));
  }

  // 4 batches x 8 rows x 8 columns, always including the last of each (edge tiles).
  void check_reference(cudaStream_t st) const {
    const BmmShape& s = shape_;
    std::mt19937_64 rng(seed_);
    auto pick = [&](std::int64_t extent, int count) {
      std::vector<std::int64_t> v(static_cast<std::size_t>(std::min<std::int64_t>(count, extent)));
      for (auto& x : v) x = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(extent));
      v[0] = extent - 1;
      return v;
    };
    const auto bi = pick(s.b, 4);
    std::vector<std::size_t> ia, ib, ic;
    struct Entry {
      std::size_t arow, bcol;  // offsets into the gathered A rows and B columns
    };
    std::vector<Entry> entries;
    for (std::int64_t bb : bi) {
      const auto ri = pick(s.m, 8);
      const auto cj = pick(s.n, 8);
      const std::size_t row0 = ia.size(), col0 = ib.size();
      for (std::int64_t r : ri)
        for (std::int64_t kk = 0; kk < s.k; ++kk) ia.push_back(static_cast<std::size_t>((bb * s.m + r) * s.k + kk));
      for (std::int64_t j : cj)
        for (std::int64_t kk = 0; kk < s.k; ++kk) ib.push_back(static_cast<std::size_t>((bb * s.k + kk) * s.n + j));
      for (std::size_t r = 0; r < ri.size(); ++r)
        for (std::size_t j = 0; j < cj.size(); ++j) {
          ic.push_back(static_cast<std::size_t>((bb * s.m + ri[r]) * s.n + cj[j]));
          entries.push_back({row0 + r * static_cast<std::size_t>(s.k), col0 + j * static_cast<std::size_t>(s.k)});
        }
    }
    const auto a = kernels::gather_to_host_double(a_bmk_.get(), ia, dtype_, st);
    const auto b = kernels::gather_to_host_double(b_.get(), ib, dtype_, st);
    const auto got = kernels::gather_to_host_double(c_ref_.get(), ic, dtype_, st);
    SampleChecker check(reduction_tolerance(dtype_, dtype_, static_cast<std::size_t>(s.k)));
    for (std::size_t e = 0; e < entries.size(); ++e) {
      double ref = 0, scale = 0;
      for (std::int64_t kk = 0; kk < s.k; ++kk) {
        const double p = a[entries[e].arow + static_cast<std::size_t>(kk)] * b[entries[e].bcol + static_cast<std::size_t>(kk)];
        ref += p;
        scale += std::fabs(p);
      }
      check.add(ic[e], ref, got[e], scale);
    }
    if (const CheckReport r = check.report(); !r.ok())
      throw VerificationError(name_ + ": strided bmm wrong against the host reference: " + r.describe());
  }

  std::string name_;
  const Path& path_;
  Run run_ = run_of(path_.name);
  DType dtype_;
  BmmShape shape_;
  harness::Device& dev_;
  CublasHandle& cublas_;
  cudaDataType_t type_;
  std::size_t eb_, na_, nb_, nc_;
  std::uint64_t seed_ = 0;
  DeviceBuffer a_bmk_, a_mbk_, a_tmp_, b_, c_ref_, out_, ptr_a_, ptr_b_, ptr_c_;
};

Run run_of(std::string_view path) {
  if (path == "strided") return &Bmm::strided_bmk;
  if (path == "strided_mbk") return &Bmm::strided_mbk;
  if (path == "permute_bmm") return &Bmm::permute_bmm;
  if (path == "permute") return &Bmm::permute;
  if (path == "ptr_array") return &Bmm::ptr_array;
  return &Bmm::loop;
}

void register_cases(harness::Registry& r) {
  harness::record_cublas_version();
  harness::Device& dev = r.device();
  const Suite suite = dev.suite();
  const auto cases = bmm::cases(suite, r.points());
  if (cases.empty()) return;
  CublasHandle& cublas = r.keep<CublasHandle>();
  for (const auto& bc : cases) {
    const bmm::Shaped& sh = bc.shaped;
    const Path& p = *bc.path;
    {
      const double elems = static_cast<double>(sh.shape.b) *
                           static_cast<double>(sh.shape.m * sh.shape.k + sh.shape.k * sh.shape.n + 2 * sh.shape.m * sh.shape.n);
      if (const auto why = harness::exceeds_free_memory(static_cast<std::uint64_t>(2 * elems * static_cast<double>(storage_bytes(sh.dtype))))) {
        r.add_unsupported(bc.name(), *why);
        continue;
      }
      harness::Case c;
      c.name = bc.name();
      c.measure = r.defaults();
      c.measure.mode = p.timing;
      if (p.permute_only)
        c.rates = {harness::gbps(permute_traffic_bytes(sh.shape.b * sh.shape.m * sh.shape.k, storage_bytes(sh.dtype)))};
      else
        c.rates = {harness::tflops(bmm_flops(sh.shape))};
      c.setup = [name = c.name, &p, sh, &dev, &cublas] { return std::make_unique<Bmm>(name, p, sh.dtype, sh.shape, dev, cublas); };
      r.add(std::move(c));
    }
  }
}

}  // namespace

harness::Family harness::family() {
  Family f;
  f.model = bmm::model();
  f.register_cases = register_cases;
  f.summary = "bench_bmm: one batched product C[b] = A[b] B[b] computed the ways frameworks do (strided batched GEMM, "
              "einsum's permute then GEMM, pointer arrays, a per-batch loop), TFLOP/s, each checked against strided.";
  f.list = [](Suite s, const std::vector<axes::Point>* p, const axes::DeviceFacts&) {
    return listed(bmm::cases(s, p));
  };
  f.own_help =
      "Paths: strided (cublasGemmStridedBatched, A[b,m,k]), strided_mbk (A[m,b,k] read in place, as einsum can),\n"
      "permute_bmm (A[m,b,k] materialised to [b,m,k], then strided: einsum's fallback), permute (that copy alone,\n"
      "GB/s), ptr_array (cublasGemmBatched), loop (one GEMM per batch, host issue included).\n"
      "Examples:\n"
      "  bench_bmm -a batch=64,512 -a M=128,512 -a K=64 --list\n"
      "  bench_bmm -a dtype=bf16 -a batch=16 -a M=2048 -a K=128 -a path=strided,permute_bmm --benchmark_out=b.json\n";
  return f;
}

}  // namespace gpucheck
