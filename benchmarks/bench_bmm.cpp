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
//   loop         b cublasGemmEx calls. Timed WITHOUT holding the stream: the host issue rate
//                of b launches is part of what a loop costs (and b = 512 launches queued behind
//                the harness's spin kernel would approach the launch queue's depth)
// All other paths are timed by the harness (stream held until queued, back-to-back calls).
// strided is checked on sampled outputs against a double host reference; every other path's
// output must equal strided's: exactly for permute_bmm (same inputs, same call), within a
// tight accumulation-order tolerance for the others (another kernel may be chosen).
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpucheck/core/bmm_model.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/verify.hpp"
#include "gpucheck/harness/check.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/harness/timing.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/permute.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;

enum class Path { strided, strided_mbk, permute_bmm, permute, ptr_array, loop };

std::string_view path_name(Path p) {
  switch (p) {
    case Path::strided: return "strided";
    case Path::strided_mbk: return "strided_mbk";
    case Path::permute_bmm: return "permute_bmm";
    case Path::permute: return "permute";
    case Path::ptr_array: return "ptr_array";
    case Path::loop: return "loop";
  }
  return "unknown";
}

struct BmmCase {
  Path path;
  DType dtype;
  BmmShape shape;
  std::string name() const { return bench_name({"bmm", path_name(path), to_string(dtype), bmm_shape_label(shape)}); }
};

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::fp32: return CUDA_R_32F;
    case DType::fp16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    default: throw std::invalid_argument("bmm: unsupported dtype " + std::string(to_string(t)));
  }
}

// Like PyTorch: one handle, bound to the stream with a user workspace (cublasSetStream resets
// the workspace, so it is set again after every rebinding). 32 MiB is PyTorch's Hopper default.
// Handle and workspace live until the process exits (no teardown after the CUDA runtime's).
constexpr std::size_t kWorkspaceBytes = 32u << 20;

cublasHandle_t cublas_on(cudaStream_t s) {
  static cublasHandle_t h = nullptr;
  static void* ws = nullptr;
  static cudaStream_t bound = nullptr;
  static bool have_bound = false;
  if (h == nullptr) {
    GPUCHECK_CUBLAS(cublasCreate(&h));
    GPUCHECK_CUDA(cudaMalloc(&ws, kWorkspaceBytes));
    GPUCHECK_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // fp32 stays fp32: no TF32
    GPUCHECK_CUBLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  }
  if (!have_bound || bound != s) {
    GPUCHECK_CUBLAS(cublasSetStream(h, s));
    GPUCHECK_CUBLAS(cublasSetWorkspace(h, ws, kWorkspaceBytes));
    bound = s;
    have_bound = true;
  }
  return h;
}

void require_positive(double v, const char* what, const std::string& name) {
  if (!(v > 0) || !std::isfinite(v))
    throw GpuError(name + ": counter " + what + " is not a positive finite number (" + std::to_string(v) + ")");
}

// Operands of one case. A is generated as [b,m,k]; its [m,b,k] copy (the einsum layout) is
// made with the permute kernel, so every path multiplies the very same values.
class Bmm {
 public:
  explicit Bmm(const BmmCase& c)
      : c_(c), type_(cuda_type(c.dtype)), eb_(storage_bytes(c.dtype)),
        na_(static_cast<std::size_t>(c.shape.b) * static_cast<std::size_t>(c.shape.m) * static_cast<std::size_t>(c.shape.k)),
        nb_(static_cast<std::size_t>(c.shape.b) * static_cast<std::size_t>(c.shape.k) * static_cast<std::size_t>(c.shape.n)),
        nc_(static_cast<std::size_t>(c.shape.b) * static_cast<std::size_t>(c.shape.m) * static_cast<std::size_t>(c.shape.n)) {
    const BmmShape& s = c.shape;
    // cuBLAS takes int extents and leading dimensions.
    for (std::int64_t v : {s.m, s.n, s.k, s.b, s.b * s.k})
      if (v > INT32_MAX) throw std::invalid_argument(c.name() + ": extent exceeds int");
    cudaStream_t st = harness::Device::get().stream();
    a_bmk_ = DeviceBuffer(na_ * eb_);
    a_mbk_ = DeviceBuffer(na_ * eb_);
    a_tmp_ = DeviceBuffer(na_ * eb_);
    b_ = DeviceBuffer(nb_ * eb_);
    c_ref_ = DeviceBuffer(nc_ * eb_);
    if (c.path != Path::strided && c.path != Path::permute) out_ = DeviceBuffer(nc_ * eb_);
    seed_ = std::random_device{}();
    kernels::fill_uniform(a_bmk_.get(), na_, c.dtype, seed_, -1.f, 1.f, st);
    kernels::fill_uniform(b_.get(), nb_, c.dtype, seed_ + 1, -1.f, 1.f, st);
    kernels::permute3d(a_mbk_.get(), a_bmk_.get(), {s.b, s.m, s.k}, {1, 0, 2}, eb_, st);
    if (c.path == Path::ptr_array) {
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

  // One call of this case's path (GEMM paths write c_, or c_ref_ for strided).
  void run(cudaStream_t st) const {
    const BmmShape& s = c_.shape;
    switch (c_.path) {
      case Path::strided: strided(a_bmk_.get(), s.k, s.m * s.k, c_ref_.get(), st); return;
      case Path::strided_mbk: strided(a_mbk_.get(), s.b * s.k, s.k, out_.get(), st); return;
      case Path::permute_bmm:
        permute(st);
        strided(a_tmp_.get(), s.k, s.m * s.k, out_.get(), st);
        return;
      case Path::permute: permute(st); return;
      case Path::ptr_array: {
        const float alpha = 1.f, beta = 0.f;
        GPUCHECK_CUBLAS(cublasGemmBatchedEx(cublas_on(st), CUBLAS_OP_N, CUBLAS_OP_N, i32(s.n), i32(s.m), i32(s.k),
                                            &alpha, ptr_a_.as<const void* const>(), type_, i32(s.n),
                                            ptr_b_.as<const void* const>(), type_, i32(s.k), &beta,
                                            ptr_c_.as<void* const>(), type_, i32(s.n), i32(s.b), CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT));
        return;
      }
      case Path::loop: {
        const float alpha = 1.f, beta = 0.f;
        cublasHandle_t h = cublas_on(st);
        for (std::int64_t i = 0; i < s.b; ++i)
          GPUCHECK_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, i32(s.n), i32(s.m), i32(s.k), &alpha,
                                       byte_at(b_, static_cast<std::size_t>(i * s.k * s.n)), type_, i32(s.n),
                                       byte_at(a_bmk_, static_cast<std::size_t>(i * s.m * s.k)), type_, i32(s.k),
                                       &beta, byte_at(out_, static_cast<std::size_t>(i * s.m * s.n)), type_, i32(s.n),
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return;
      }
    }
  }

  // strided into c_ref_, checked on sampled outputs against a double reference; then this
  // case's own output against c_ref_.
  void verify_or_throw() const {
    cudaStream_t st = harness::Device::get().stream();
    kernels::poison(c_ref_.get(), c_ref_.bytes(), st);
    const BmmShape& s = c_.shape;
    strided(a_bmk_.get(), s.k, s.m * s.k, c_ref_.get(), st);
    check_reference(st);
    switch (c_.path) {
      case Path::strided: return;
      case Path::permute: {
        kernels::poison(a_tmp_.get(), a_tmp_.bytes(), st);
        permute(st);
        expect_equal(a_tmp_.get(), a_bmk_.get(), na_, 0, 0, 0, "permuted A");
        return;
      }
      case Path::permute_bmm:  // the same call on bitwise the same operands
        kernels::poison(out_.get(), out_.bytes(), st);
        kernels::poison(a_tmp_.get(), a_tmp_.bytes(), st);
        run(st);
        expect_equal(out_.get(), c_ref_.get(), nc_, 0, 0, 0, "C");
        return;
      default: {
        kernels::poison(out_.get(), out_.bytes(), st);
        run(st);
        const PathTolerance tol = bmm_path_tolerance(c_.dtype, s.k, 1.0);
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
    const BmmShape& s = c_.shape;
    const float alpha = 1.f, beta = 0.f;
    GPUCHECK_CUBLAS(cublasGemmStridedBatchedEx(cublas_on(st), CUBLAS_OP_N, CUBLAS_OP_N, i32(s.n), i32(s.m), i32(s.k),
                                               &alpha, b_.get(), type_, i32(s.n), s.k * s.n, a, type_, i32(lda),
                                               stride_a, &beta, c, type_, i32(s.n), s.m * s.n, i32(s.b),
                                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }

  void permute(cudaStream_t st) const {
    const BmmShape& s = c_.shape;
    kernels::permute3d(a_tmp_.get(), a_mbk_.get(), {s.m, s.b, s.k}, {1, 0, 2}, eb_, st);
  }

  void expect_equal(const void* got, const void* want, std::size_t n, double rtol, double atol, double rel_l2,
                    const char* what) const {
    const kernels::DiffStats d =
        kernels::compare_arrays(got, want, n, c_.dtype, rtol, atol, harness::Device::get().stream());
    if (d.mismatches != 0 || d.nonfinite != 0 || d.rel_l2() > rel_l2)
      throw VerificationError(c_.name() + ": " + what + " differs from the strided bmm's: " +
                              std::to_string(d.mismatches) + " of " + std::to_string(n) + " over rtol " +
                              std::to_string(rtol) + " atol " + std::to_string(atol) + ", " +
                              std::to_string(d.nonfinite) + " non-finite, max abs err " +
                              std::to_string(d.max_abs_err) + ", rel_l2 " + std::to_string(d.rel_l2()));
  }

  // 4 batches x 8 rows x 8 columns, always including the last of each (edge tiles).
  void check_reference(cudaStream_t st) const {
    const BmmShape& s = c_.shape;
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
    const auto a = kernels::gather_to_host_double(a_bmk_.get(), ia, c_.dtype, st);
    const auto b = kernels::gather_to_host_double(b_.get(), ib, c_.dtype, st);
    const auto got = kernels::gather_to_host_double(c_ref_.get(), ic, c_.dtype, st);
    SampleChecker check(reduction_tolerance(c_.dtype, c_.dtype, static_cast<std::size_t>(s.k)));
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
      throw VerificationError(c_.name() + ": strided bmm wrong against the host reference: " + r.describe());
  }

  BmmCase c_;
  cudaDataType_t type_;
  std::size_t eb_, na_, nb_, nc_;
  std::uint64_t seed_ = 0;
  DeviceBuffer a_bmk_, a_mbk_, a_tmp_, b_, c_ref_, out_, ptr_a_, ptr_b_, ptr_c_;
};

// Events around each call on an idle stream, no spin kernel holding it: the time is what the
// call costs end to end once the host starts issuing it (host issue rate included).
harness::Timing time_unheld(benchmark::State& state, const harness::Work& work) {
  cudaStream_t s = harness::Device::get().stream();
  harness::Event start, stop;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    work(s);
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i + 1 >= 3 && ms >= 50) break;
  }
  harness::Timing t;
  double total = 0;
  for ([[maybe_unused]] auto _ : state) {
    start.record(s);
    work(s);
    stop.record(s);
    const double sec = stop.elapsed_ms_since(start) / 1e3;
    state.SetIterationTime(sec);
    total += sec;
    ++t.calls;
    t.samples_s.push_back(sec);
  }
  if (t.calls == 0) throw GpuError("timing: no iterations were run");
  t.mean_s = total / static_cast<double>(t.calls);
  std::vector<double> sorted = t.samples_s;
  std::sort(sorted.begin(), sorted.end());
  t.median_s = sorted[sorted.size() / 2];
  t.min_s = sorted.front();
  return t;
}

void bmm(benchmark::State& state, const BmmCase& c) {
  Bmm op(c);
  op.verify_or_throw();
  const auto work = [&](cudaStream_t s) { op.run(s); };
  const bool unheld = c.path == Path::loop;
  const harness::Timing t = unheld ? time_unheld(state, work) : harness::time_on_stream(state, work);
  std::string label = unheld ? "timing=unheld(host issue of " + std::to_string(c.shape.b) + " calls included)"
                             : "timing=held";
  if (c.path == Path::permute) {
    const double gbps = harness::gbps(
        permute_traffic_bytes(c.shape.b * c.shape.m * c.shape.k, storage_bytes(c.dtype)), t);
    require_positive(gbps, "GBps", c.name());
    state.counters["GBps"] = gbps;
    label += " A[m,b,k]->[b,m,k] bytes=read+write";
  } else {
    const double tf = harness::tflops(bmm_flops(c.shape), t);
    require_positive(tf, "TFLOPS", c.name());
    state.counters["TFLOPS"] = tf;
    if (auto peak = harness::Device::get().peak_tflops(c.dtype)) state.counters["pct_of_peak"] = 100.0 * tf / *peak;
    if (c.path == Path::strided_mbk) label += " A[m,b,k] read in place (lda=b*k)";
    if (c.path == Path::permute_bmm) label += " permute+strided timed together";
  }
  state.SetLabel(label);
}

}  // namespace

void harness::register_benchmarks(Device& device) {
  const std::vector<Path> paths{Path::strided,  Path::strided_mbk, Path::permute_bmm,
                                Path::permute, Path::ptr_array,   Path::loop};
  std::vector<BmmCase> cases;
  if (device.full()) {
    // Attention-like (b64 512^3, b512 128x128x64) and a wide MLP-like batch (b16 2048^2 x 128).
    for (DType t : {DType::fp16, DType::bf16, DType::fp32})
      for (BmmShape s : {BmmShape{64, 512, 512, 512}, BmmShape{512, 128, 128, 64}, BmmShape{16, 2048, 2048, 128}})
        for (Path p : paths) cases.push_back({p, t, s});
  } else {
    for (Path p : paths) cases.push_back({p, DType::fp16, BmmShape{64, 512, 512, 512}});
  }
  for (const BmmCase& c : cases) register_case(c.name(), [c](benchmark::State& s) { bmm(s, c); });
}

}  // namespace gpucheck
