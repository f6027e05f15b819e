// bench_attention: scaled-dot-product attention forward, O = softmax(scale Q K^T [causal]) V,
// in TFLOP/s (4*b*h*s_q*s_k*d per call; causal counts the visible (query, key) pairs instead,
// attention_flops: the work a causal kernel must do), three ways, so a user sees what fusion
// buys on their GPU and catches a regression in the vendor path:
//   naive   cuBLAS strided-batched GEMM S = Q K^T (fp32 S in HBM), our softmax kernel
//           (scale, causal mask, max subtraction; P in fp16/bf16 in HBM), cuBLAS GEMM P V.
//           Grouped-query attention without copying K/V: each GEMM batches over the K/V heads
//           with the group's query heads stacked as rows (Naive::run).
//           Also GBps: the bytes S and P cost (written, read back, and the inputs/output).
//   naive_s16  (full suite, fp16 only) the same with S in fp16, as a framework's matmul
//           writes it: PyTorch's matmul-softmax-matmul moves these bytes (ci/torch_reference.py
//           times that composition as attention/naive_s16). bf16 S fails the 1e-2 check with
//           large logits (docs/ATTENTION.md), so it has no bf16 row.
//   flash   our fused kernel (kernels/attention.cuh) as `automatic` picks it: one of the
//           Hopper wgmma/TMA schedules on cc 9.0 (the label names it), mma.sync elsewhere. The full suite also times each of
//           our kernels by name (flash_mma_sync, flash_hopper_serial, flash_hopper) for the
//           version log in docs/ATTENTION.md.
//   cudnn   cuDNN's fused SDPA through its graph (backend) API (attention_cudnn.hpp); where
//           this cuDNN or GPU lacks it, the case is skipped with the reason.
// Layout BHSD: Q, O [b, h, s_q, d]; K, V [b, kv_heads, s_k, d] (kv_heads divides h; query head
// i reads K/V head i / (h / kv_heads)). Every case is checked before it is timed, on fresh random
// inputs with large logits (Q, K uniform in [-4, 4]: scale q.k reaches ~20, where an
// unstable fp16 softmax overflows): the output is poisoned first and must have no NaN/Inf
// (every element written), and 256 sampled rows must match a float64-accumulating reference
// to a relative L2 error under 1e-2. The timed calls run on the same inputs. Each case is a
// burst (0.3 s idle, 5 warm-up calls, 20 samples): harness::power_burst.
#include <cublas_v2.h>
#include <cudnn.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention_check.hpp"
#include "attention_cudnn.hpp"
#include "cases/attention.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/harness/check.hpp"
#include "gpucheck/harness/check_cudnn.hpp"
#include "gpucheck/harness/cublas_handle.hpp"
#include "gpucheck/harness/cudnn_handle.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/dtype_enums.hpp"
#include "gpucheck/harness/libraries.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/attention.cuh"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using harness::DeviceBuffer;
using kernels::AttentionProblem;

using attention::Shape;

// 4 d FLOPs per (query, key) pair (two GEMMs of 2 d each), over the pairs the mask leaves
// visible. Causal (bottom-right aligned, seq_q <= seq_k): query i sees i + seq_k - seq_q + 1
// keys, i.e. seq_q * (seq_k - seq_q / 2) pairs counting the diagonal by half, which is
// FlashAttention 3's benchmark count and, for seq_q == seq_k, the anchors' s^2/2 (the quick
// suite's figures unchanged). Without the diagonal's half the exact count is seq_q / 2 pairs
// more: 0.01% at s4096, 0.1% at s512, and for one query over s_k keys 1 / (2 s_k).
double attention_flops(const AttentionProblem& p) {
  const double per_pair = 4.0 * p.batch * p.heads * p.head_dim;
  const double sq = p.seq_q, sk = p.seq_k;
  return per_pair * (p.causal ? sq * (sk - sq / 2) : sq * sk);
}

// What the family's cases share, kept by the registry.
struct AttentionState {
  harness::CublasHandle cublas;
  harness::CudnnHandle cudnn;
};

// Inputs and output of one problem, and the check every backend passes before timing.
class Attention : public harness::Op {
 public:
  Attention(std::string name, const AttentionProblem& p, harness::Device& dev)
      : name_(std::move(name)), p_(p), dev_(dev), q_(p.q_elems() * 2), k_(p.kv_elems() * 2), v_(p.kv_elems() * 2),
        o_(p.q_elems() * 2), seed_(std::random_device{}()) {
    kernels::validate_attention(p);
    attention_check::fill_inputs(p, q_.get(), k_.get(), v_.get(), seed_, dev_.stream());
  }
  void verify() override {
    cudaStream_t s = dev_.stream();
    kernels::poison(o_.get(), o_.bytes(), s);
    run(s);
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    if (const std::string e = attention_check::output_error(p_, q_.get(), k_.get(), v_.get(), o_.get(), seed_ + 3, s);
        !e.empty())
      throw VerificationError(name_ + ": " + e);
  }

 protected:
  std::string name_;
  AttentionProblem p_;
  harness::Device& dev_;
  DeviceBuffer q_, k_, v_, o_;
  std::uint64_t seed_;
};

cudaDataType_t cuda_type(DType t) { return harness::cuda_data_type(t, "attention"); }

// GEMM, softmax, GEMM with S (fp32, or the input dtype) and P (the input dtype) in HBM.
class Naive final : public Attention {
 public:
  Naive(std::string name, const AttentionProblem& p, harness::Device& dev, harness::CublasHandle& cublas, DType s_dtype)
      : Attention(std::move(name), p, dev), cublas_(cublas), sp_(softmax_problem(p, s_dtype)),
        s_(static_cast<std::size_t>(p.batch) * p.heads * static_cast<std::size_t>(p.seq_q) * p.seq_k *
           storage_bytes(s_dtype)),
        pm_(static_cast<std::size_t>(p.batch) * p.heads * static_cast<std::size_t>(p.seq_q) * p.seq_k * 2) {
    kernels::validate_softmax(sp_);
    if (static_cast<long long>(p.group()) * p.seq_q > 0x7fffffffLL ||
        static_cast<long long>(p.batch) * p.kv() > 0x7fffffffLL)
      throw Unsupported("naive: group * seq_q and batch * kv_heads must fit cuBLAS's int extents");
  }
  // The softmax between the two GEMMs: S in, P in the input dtype out, scale and mask fused.
  static kernels::SoftmaxProblem softmax_problem(const AttentionProblem& p, DType s_dtype) {
    kernels::SoftmaxProblem sp;
    sp.matrices = static_cast<long long>(p.batch) * p.heads;
    sp.seq_q = p.seq_q;
    sp.seq_k = p.seq_k;
    sp.s_dtype = s_dtype;
    sp.p_dtype = p.dtype;
    sp.scale = p.scale;
    sp.causal = p.causal;
    return sp;
  }
  // Grouped-query attention: the group() query heads of one K/V head are contiguous in Q, so
  // Q [b, h, sq, d] is the same memory as [b, kv, group*sq, d], and S, P [b, h, sq, sk] as
  // [b, kv, group*sq, sk]: each GEMM is one strided batch over the b*kv K/V heads with
  // m or n = group*sq rows, K and V read once per K/V head, nothing copied. The softmax
  // still sees b*h matrices of sq rows, so its per-row causal mask is unchanged.
  void run(cudaStream_t s) override {
    const long long mats = static_cast<long long>(p_.batch) * p_.kv();
    const int sq = p_.seq_q, sk = p_.seq_k, d = p_.head_dim;
    const int rows = p_.group() * sq;  // query rows per K/V head (< 2^31: checked in the constructor)
    const float one = 1.f, zero = 0.f;
    cublasHandle_t h = cublas_.on(s);
    // Row-major S[rows, sk] = Q K^T is column-major S^T = K Q^T (m = sk, n = rows, k = d).
    GPUCHECK_CUBLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, sk, rows, d, &one, k_.get(),
                                               cuda_type(p_.dtype), d, static_cast<long long>(sk) * d, q_.get(),
                                               cuda_type(p_.dtype), d, static_cast<long long>(rows) * d, &zero,
                                               s_.get(), cuda_type(sp_.s_dtype), sk,
                                               static_cast<long long>(rows) * sk, static_cast<int>(mats),
                                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    kernels::softmax_rows(sp_, s_.get(), pm_.get(), s);
    // Row-major O[rows, d] = P V is column-major O^T = V^T P^T (m = d, n = rows, k = sk).
    GPUCHECK_CUBLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, d, rows, sk, &one, v_.get(),
                                               cuda_type(p_.dtype), d, static_cast<long long>(sk) * d, pm_.get(),
                                               cuda_type(p_.dtype), sk, static_cast<long long>(rows) * sk, &zero,
                                               o_.get(), cuda_type(p_.dtype), d, static_cast<long long>(rows) * d,
                                               static_cast<int>(mats), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  std::string label() const override {
    return "S=" + std::string(to_string(sp_.s_dtype)) + " P=" + std::string(to_string(p_.dtype)) + " in HBM";
  }
  // What S and P cost: S written by the GEMM, read (visible entries) and P written by the
  // softmax, P read by the second GEMM; plus Q, K, V read and O written once.
  static double bytes(const AttentionProblem& p, DType s_dtype) {
    const kernels::SoftmaxProblem sp = softmax_problem(p, s_dtype);
    const double scores = static_cast<double>(sp.matrices) * p.seq_q * p.seq_k;
    const double io = 2.0 * (2.0 * static_cast<double>(p.q_elems()) + 2.0 * static_cast<double>(p.kv_elems()));
    return static_cast<double>(storage_bytes(s_dtype)) * scores +
           static_cast<double>(kernels::softmax_traffic_bytes(sp)) + 2.0 * scores + io;
  }

 private:
  harness::CublasHandle& cublas_;
  kernels::SoftmaxProblem sp_;
  DeviceBuffer s_, pm_;
};

// Our fused kernel, by name.
class Fused final : public Attention {
 public:
  Fused(std::string name, const AttentionProblem& p, harness::Device& dev, kernels::AttentionKernel kernel)
      : Attention(std::move(name), p, dev), kernel_(kernels::resolve_attention_kernel(kernel, dev.index(), p)) {
    if (!kernels::attention_kernel_available(kernel_, dev.index()))
      throw Unsupported(std::string("our ") + kernels::to_string(kernel_) + " attention kernel needs " +
                        (kernel_ == kernels::AttentionKernel::mma_sync ? "compute capability 8.0" : "compute capability 9.0 and an sm_90a build"));
  }
  void run(cudaStream_t s) override { kernels::flash_attention_fwd(p_, q_.get(), k_.get(), v_.get(), o_.get(), nullptr, s, kernel_); }
  // The problem passed validate_attention and the buffers are cudaMalloc's, so what the kernel
  // still refuses with invalid_argument is a shape it is not built for (head_dim 256 on
  // mma_sync, which `flash` picks off Hopper): a skip with the library's reason, not an error.
  void verify() override {
    try {
      Attention::verify();
    } catch (const std::invalid_argument& e) {
      throw Unsupported(std::string("our ") + kernels::to_string(kernel_) + " kernel: " + e.what());
    }
  }
  std::string label() const override { return std::string("kernel=") + kernels::to_string(kernel_); }

 private:
  kernels::AttentionKernel kernel_;
};

// cuDNN's fused SDPA.
class Cudnn final : public Attention {
 public:
  Cudnn(std::string name, const AttentionProblem& p, harness::Device& dev, cudnnHandle_t h)
      : Attention(std::move(name), p, dev),
        h_(h),
        sdpa_(h, attention_cudnn::spec_for(p), std::size_t{1} << 30),
        ws_(sdpa_.workspace_bytes()) {}
  void run(cudaStream_t s) override {
    GPUCHECK_CUDNN(cudnnSetStream(h_, s));
    sdpa_.execute(h_, q_.get(), k_.get(), v_.get(), o_.get(), ws_.get());
  }
  std::string label() const override { return sdpa_.engine_label(); }

 private:
  cudnnHandle_t h_;
  attention_cudnn::Sdpa sdpa_;
  DeviceBuffer ws_;
};

// A backend's op (benchmarks/cases/attention.hpp holds the table), by its name; a naive
// row passes its S dtype.
std::unique_ptr<harness::Op> make(const attention::Backend& be, const std::string& n, const AttentionProblem& p,
                                  harness::Device& d, AttentionState& st) {
  using K = kernels::AttentionKernel;
  namespace seg = contract::segment;
  const std::string_view b = be.name;
  if (be.naive_s) return std::make_unique<Naive>(n, p, d, st.cublas, *be.naive_s);
  if (b == seg::cudnn) return std::make_unique<Cudnn>(n, p, d, st.cudnn.get());
  const K k = b == "flash_mma_sync" ? K::mma_sync : b == "flash_hopper_serial" ? K::hopper_serial
            : b == "flash_hopper"   ? K::hopper
                                    : K::automatic;
  return std::make_unique<Fused>(n, p, d, k);
}

void register_cases(harness::Registry& r) {
  harness::record_cublas_version();
  harness::record_cudnn_version();
  harness::Device& dev = r.device();
  const Suite suite = dev.suite();
  const auto cases = attention::cases(suite, r.points());
  if (cases.empty()) return;
  AttentionState& state = r.keep<AttentionState>();
  for (const auto& ac : cases) {
    const attention::Config& cfg = ac.config;
    const attention::Backend& be = *ac.backend;
    if (const auto why = attention::unrunnable(ac)) {
      r.add_unsupported(ac.name(), *why);
      continue;
    }
    {
      AttentionProblem p;
      p.batch = cfg.shape.b;
      p.heads = cfg.shape.h;
      p.kv_heads = cfg.shape.kv_heads();
      p.seq_q = cfg.shape.s;
      p.seq_k = cfg.shape.seq_k();
      p.head_dim = cfg.shape.d;
      p.dtype = cfg.dtype;
      p.scale = 1.0f / std::sqrt(static_cast<float>(cfg.shape.d));
      p.causal = cfg.causal;
      const double io = static_cast<double>(2 * p.q_elems() + 2 * p.kv_elems()) * static_cast<double>(storage_bytes(p.dtype));
      const double s_bytes = be.naive_s ? static_cast<double>(p.rows()) * p.seq_k * (4.0 + static_cast<double>(storage_bytes(*be.naive_s))) : 0;
      if (const auto why = harness::exceeds_free_memory(static_cast<std::uint64_t>(io + s_bytes))) {
        r.add_unsupported(ac.name(), *why);
        continue;
      }
      harness::Case c;
      c.name = ac.name();
      c.rates = {harness::tflops(attention_flops(p))};
      if (be.naive_s) c.rates.push_back(harness::gbps(Naive::bytes(p, *be.naive_s)));
      // Fused attention draws past the H200's power limit within tens of milliseconds, like a
      // GEMM: measured back to back, later repetitions ran slower than the first as the SM
      // clock fell. So each case is a power burst.
      c.measure = harness::power_burst(r.defaults());
      c.setup = [&be, name = c.name, p, &dev, &state] { return make(be, name, p, dev, state); };
      r.add(std::move(c));
    }
  }
}

}  // namespace

harness::Family harness::family() {
  Family f;
  f.model = attention::model();
  f.register_cases = register_cases;
  f.summary = "bench_attention: attention forward (TFLOP/s, 4*b*h*s_q*s_k*d per call; causal: 4*b*h*d per visible "
              "(query, key) pair), naive (GEMM, softmax, GEMM) against fused (our flash kernels, cuDNN SDPA), each "
              "checked against naive.";
  f.list = [](Suite s, const std::vector<axes::Point>* p, const axes::DeviceFacts&) {
    return listed(attention::cases(s, p));
  };
  f.own_help =
      "Grouped-query attention: kv_heads (default: heads) must divide heads; K and V have kv_heads heads and seq_k\n"
      "keys (default: seq_q). Causal masks are bottom-right aligned (query i sees keys <= i + seq_k - seq_q).\n"
      "Cases a device or kernel cannot run are reported skipped with the reason: flash at head_dim other than 64,\n"
      "128 or 256 (flash_mma_sync: 64 and 128; 256 needs the hopper kernels), kv_heads not dividing heads, causal\n"
      "with seq_q > seq_k, what this cuDNN or GPU lacks, sizes past free memory (naive holds S: b*h*s_q*s_k).\n"
      "Examples:\n"
      "  bench_attention -a seq_q=2^[10:13] -a head_dim=64,128 --list\n"
      "  bench_attention -a backend=flash,cudnn -a dtype=bf16 -a batch=1 -a heads=32 -a seq_q=8192 -a causal=true\n"
      "  bench_attention -a backend=naive,flash,cudnn -a heads=32 -a kv_heads=8 -a seq_q=1,128 -a seq_k=8192\n";
  return f;
}

}  // namespace gpucheck
