// bench_matmul: cuBLASLt GEMM throughput in TFLOP/s (2*m*n*k per call) for fp32 (no TF32),
// tf32, fp16, bf16 (fp32 accumulate) and fp8 e4m3 (bf16 out) where the device has it.
// Layout "TN" (A transposed, column-major), the one every dtype including fp8 supports; the
// variant `linear` (suite llm) gives cuBLASLt m and n swapped, as PyTorch's F.linear does.
// Each case is verified on sampled outputs against a double-precision host reference
// before it is timed; pct_of_peak is against the SKU's dense datasheet figure. FP16 vs FP32
// is read off the dtype axis.
//
// Two ways to read a rate. `cublaslt` is a burst: from a card left idle for 0.3 s, 5 warm-up
// calls, then 20 timed (the median reported), about what a framework step and PyTorch's own
// timing see, before the board's power limiter acts. `cublaslt_sustained`
// keeps the tensor cores busy for 1 s first and then measures for 1 s: on an H200 a bf16
// GEMM draws past the power cap soon after it starts and the SM clock falls (the case's
// sm_clock_MHz and throttled counters say so; docs/PERFORMANCE.md has the figures). The burst
// figure compares with other tools; the ratio of the two shows power capping.
// `linear` rows (suite llm, F.linear's order) are timed as a model's step meets them: the
// operands rotate over copies (at least 4, each its own allocation) that keep each out of
// the L2 between its uses; every sample is a CUDA graph replay of a whole number of turns of
// them; decode rows (at most 16 tokens) are bursts after 0.2 s of warm-up calls; rows of more
// tokens are timed on the power limit's plateau (samples queued back to back), 0.2 s of load
// not counted, then 0.4 s counted; rows of at most 128 tokens in 5 groups, each after the
// memory state is drawn again, the fastest reported (matmul::linear_copies, linear_warmup_s,
// linear_plateau, linear_groups; ci/gemm_parity.sh times PyTorch's side alike).
// `burn` (suite burn, `gpucheck accept --burn`): bf16 8192^3 GEMMs for --burn-seconds, every
// result compared bit for bit with the first verified one (silent corruption under load is
// an error), the SM clock and temperature tracked.
// Each row's label names the algorithm (cuBLASLt's heuristic result: its id, tile, stages,
// split-K) and the kernel it ran, read with CUPTI on the verification call (kernel_name.hpp).
#include <cublasLt.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cases/matmul.hpp"
#include "kernel_name.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/verify.hpp"
#include "gpucheck/harness/check.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/dtype_enums.hpp"
#include "gpucheck/harness/libraries.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

using matmul::GemmCase;
using matmul::Load;

struct LtTypes {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  DType out;
};

LtTypes lt_types(DType t) {
  switch (t) {
    case DType::fp32:
    case DType::tf32:
    case DType::fp16:
    case DType::bf16:
    case DType::fp8e4m3: break;
    default: throw std::invalid_argument("matmul: unsupported dtype " + std::string(to_string(t)));
  }
  const DType out = t == DType::fp8e4m3 ? DType::bf16 : storage_dtype(t);  // fp8 GEMMs write bf16
  return {harness::cuda_data_type(t), harness::cuda_data_type(out), harness::cublas_compute_type(t), out};
}

// One cuBLASLt handle for the binary, owned by the registry (destroyed before the device).
class LtHandle {
 public:
  LtHandle() { GPUCHECK_CUBLAS(cublasLtCreate(&h_)); }
  ~LtHandle() {
    if (h_) cublasLtDestroy(h_);
  }
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

constexpr std::size_t kWorkspaceBytes = 64u << 20;

// The fp8 F.linear rows run as torch._scaled_mm: scales read from device memory, a 1 MiB
// workspace (matmul::kLinearFp8WorkspaceBytes).
bool scaled_mm(const GemmCase& c) { return c.operands == matmul::Operands::linear && c.dtype == DType::fp8e4m3; }
std::size_t workspace_bytes(const GemmCase& c) { return scaled_mm(c) ? matmul::kLinearFp8WorkspaceBytes : kWorkspaceBytes; }

// The bytes of a case's two operands, A and B (a double: a user's axes may ask for more than
// any device holds; compared with free memory, never allocated from this figure).
double operand_bytes(const GemmCase& c) {
  return (static_cast<double>(c.m) + static_cast<double>(c.n)) * static_cast<double>(c.k) *
         static_cast<double>(storage_bytes(c.dtype));
}

// How many copies of its operands a case's calls rotate over: matmul::linear_copies for the
// F.linear rows, 1 for the others.
int operand_copies(const GemmCase& c, const harness::Device& dev) {
  if (c.operands != matmul::Operands::linear) return 1;
  return matmul::linear_copies(static_cast<std::uint64_t>(operand_bytes(c)),
                               static_cast<std::uint64_t>(std::max(0, dev.props().l2CacheSize)));
}

// cuBLASLt's problem: D (m x n, column-major) = A^T B, A stored k x m, B k x n.
struct LtProblem {
  std::int64_t m, n, k;
};

// Owns the descriptors of one GEMM D = A^T B (column-major), its operands and the chosen
// algorithm. For F.linear's order (Operands::linear) A holds W and B holds x.
class Gemm : public harness::Op {
 public:
  Gemm(const GemmCase& c, harness::Device& dev, cublasLtHandle_t lt)
      : c_(c), p_{c.lt_mnk()[0], c.lt_mnk()[1], c.lt_mnk()[2]}, types_(lt_types(c.dtype)), dev_(dev), lt_(lt) {
    const std::size_t in_bytes = storage_bytes(c.dtype);
    const std::size_t out_bytes = storage_bytes(types_.out);
    a_ = harness::DeviceBuffer(in_bytes * p_.k * p_.m);
    b_ = harness::DeviceBuffer(in_bytes * p_.k * p_.n);
    d_ = harness::DeviceBuffer(out_bytes * p_.m * p_.n);
    ws_ = harness::DeviceBuffer(workspace_bytes(c));
    seed_ = std::random_device{}();
    cudaStream_t s = dev_.stream();
    kernels::fill_uniform(a_.get(), p_.k * p_.m, c.dtype, seed_, -1.f, 1.f, s);
    kernels::fill_uniform(b_.get(), p_.k * p_.n, c.dtype, seed_ + 1, -1.f, 1.f, s);
    turns_.emplace_back(a_.get(), b_.get());
    const int copies = operand_copies(c, dev);  // F.linear rows: see matmul::linear_copies
    for (int i = 1; i < copies; ++i) {
      copies_.push_back({harness::DeviceBuffer(a_.bytes()), harness::DeviceBuffer(b_.bytes())});
      GPUCHECK_CUDA(cudaMemcpyAsync(copies_.back().a.get(), a_.get(), a_.bytes(), cudaMemcpyDeviceToDevice, s));
      GPUCHECK_CUDA(cudaMemcpyAsync(copies_.back().b.get(), b_.get(), b_.bytes(), cudaMemcpyDeviceToDevice, s));
      turns_.emplace_back(copies_.back().a.get(), copies_.back().b.get());
    }

    GPUCHECK_CUBLAS(cublasLtMatmulDescCreate(&op_, types_.compute, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    GPUCHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    GPUCHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (scaled_mm(c)) {  // A's scale (W's) and B's (x's), 1.0 each, where the kernel reads them
      // Each its own allocation, as PyTorch's scale tensors: one at 4 bytes past the other
      // made every fp8 cublasLtMatmul return NOT_SUPPORTED (an H200, 2026-12-04).
      const float one = 1.f;
      for (harness::DeviceBuffer* scale : {&scale_a_, &scale_b_}) {
        *scale = harness::DeviceBuffer(sizeof one);
        GPUCHECK_CUDA(cudaMemcpy(scale->get(), &one, sizeof one, cudaMemcpyHostToDevice));
      }
      const void* sa = scale_a_.get();
      const void* sb = scale_b_.get();
      GPUCHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
      GPUCHECK_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
    }
    // A is stored k x m (lda = k), B k x n (ldb = k), D m x n (ldd = m).
    GPUCHECK_CUBLAS(cublasLtMatrixLayoutCreate(&la_, types_.ab, static_cast<std::uint64_t>(p_.k),
                                               static_cast<std::uint64_t>(p_.m), p_.k));
    GPUCHECK_CUBLAS(cublasLtMatrixLayoutCreate(&lb_, types_.ab, static_cast<std::uint64_t>(p_.k),
                                               static_cast<std::uint64_t>(p_.n), p_.k));
    GPUCHECK_CUBLAS(cublasLtMatrixLayoutCreate(&ld_, types_.cd, static_cast<std::uint64_t>(p_.m),
                                               static_cast<std::uint64_t>(p_.n), p_.m));

    cublasLtMatmulPreference_t pref = nullptr;
    GPUCHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    std::size_t ws = ws_.bytes();
    GPUCHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_, op_, la_, lb_, ld_, ld_, pref, 1, &heur_, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    GPUCHECK_CUBLAS(st);
    if (found == 0) throw GpuError("matmul: cuBLASLt found no algorithm for " + c.name());
  }
  ~Gemm() override {
    if (ld_) cublasLtMatrixLayoutDestroy(ld_);
    if (lb_) cublasLtMatrixLayoutDestroy(lb_);
    if (la_) cublasLtMatrixLayoutDestroy(la_);
    if (op_) cublasLtMatmulDescDestroy(op_);
  }
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // Each call reads the next copy of the operands (the first is the verified one; F.linear
  // rows only: the others are byte copies of it, so every call computes the same D).
  void run(cudaStream_t s) override {
    const float alpha = 1.f, beta = 0.f;
    const auto [a, b] = turns_[next_turn_];
    next_turn_ = (next_turn_ + 1) % turns_.size();
    GPUCHECK_CUBLAS(cublasLtMatmul(lt_, op_, &alpha, a, la_, b, lb_, &beta, d_.get(), ld_, d_.get(), ld_, &heur_.algo,
                                   ws_.get(), ws_.bytes(), s));
  }

  // Poisons D, runs once (traced: the kernel's name), and checks 16 x 16 sampled outputs
  // against a double reference computed from the stored inputs.
  void verify() override {
    cudaStream_t s = dev_.stream();
    kernels::poison(d_.get(), d_.bytes(), s);
    next_turn_ = 0;  // the verified call reads the first copy
    check_copies(s);
    name_kernel(s);
    const LtProblem& p = p_;
    std::mt19937_64 rng(seed_);
    const int rows = static_cast<int>(std::min<std::int64_t>(16, p.m));
    const int cols = static_cast<int>(std::min<std::int64_t>(16, p.n));
    std::vector<std::int64_t> ri(rows), cj(cols);
    for (auto& r : ri) r = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.m));
    for (auto& j : cj) j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.n));
    ri[0] = p.m - 1;  // the last row and column catch edge-tile bugs
    cj[0] = p.n - 1;
    std::vector<std::size_t> ia, ib, id;
    for (auto r : ri)
      for (std::int64_t kk = 0; kk < p.k; ++kk) ia.push_back(static_cast<std::size_t>(r * p.k + kk));
    for (auto j : cj)
      for (std::int64_t kk = 0; kk < p.k; ++kk) ib.push_back(static_cast<std::size_t>(j * p.k + kk));
    for (auto j : cj)
      for (auto r : ri) id.push_back(static_cast<std::size_t>(j * p.m + r));
    const DType in = storage_dtype(c_.dtype);
    const auto a = kernels::gather_to_host_double(a_.get(), ia, in, s);
    const auto b = kernels::gather_to_host_double(b_.get(), ib, in, s);
    const auto d = kernels::gather_to_host_double(d_.get(), id, types_.out, s);
    SampleChecker check(reduction_tolerance(c_.dtype, types_.out, static_cast<std::size_t>(p.k)));
    const std::int64_t splits = splits_reduced_in_output_type();
    for (int jj = 0; jj < cols; ++jj)
      for (int rr = 0; rr < rows; ++rr) {
        double ref = 0, scale = 0;
        const double* ar = &a[static_cast<std::size_t>(rr) * p.k];
        const double* bc = &b[static_cast<std::size_t>(jj) * p.k];
        for (std::int64_t kk = 0; kk < p.k; ++kk) {
          ref += ar[kk] * bc[kk];
          scale += std::fabs(ar[kk] * bc[kk]);
        }
        check.add(static_cast<std::size_t>(cj[jj] * p.m + ri[rr]), ref, d[static_cast<std::size_t>(jj) * rows + rr],
                  scale, matmul::split_k_allowance(ar, bc, p.k, splits, unit_roundoff(types_.out)));
      }
    const CheckReport rep = check.report();
    if (!rep.ok()) throw VerificationError(c_.name() + ": wrong result: " + rep.describe());
  }

  // "algo=<id> tile=<id> stages=<id> splitk=<n> ws=<bytes> kernel=<name>": traces a
  // regression to an algorithm change, and names the kernel a PyTorch profile shows.
  std::string label() const override {
    int id = -1, tile = -1, stages = -1, splitk = -1;
    std::size_t w = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&heur_.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&heur_.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&heur_.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&heur_.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
    return "algo=" + std::to_string(id) + " tile=" + std::to_string(tile) + " stages=" + std::to_string(stages) +
           " splitk=" + std::to_string(splitk) + " ws=" + std::to_string(heur_.workspaceSize) +
           (turns_.size() > 1 ? " copies=" + std::to_string(turns_.size()) : std::string()) + " " +
           kernel_name::label(kernel_);
  }

  void add_counters(benchmark::State& state, const harness::Measurement& m) const override {
    if (auto peak = dev_.peak_tflops(c_.dtype)) state.counters[contract::counter::pct_of_peak] = 100.0 * c_.flops() / m.per_call_s / 1e12 / *peak;
  }

 protected:
  const harness::DeviceBuffer& d() const { return d_; }
  harness::Device& device() const { return dev_; }

 private:
  // The chosen algorithm's split-K when it reduces in the output type (each partial or running
  // sum rounded there: matmul::split_k_allowance), else 1.
  std::int64_t splits_reduced_in_output_type() const {
    int splitk = 1;
    std::uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
    std::size_t w = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&heur_.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&heur_.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme, &w);
    const bool in_output = (scheme & (CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE)) != 0;
    return splitk > 1 && in_output ? splitk : 1;
  }

  // The rotated copies must hold the verified operands bit for bit (F.linear rows): the 16-byte
  // words on the device, a last partial word on the host.
  void check_copies(cudaStream_t s) const {
    if (copies_.empty()) return;
    harness::DeviceBuffer count(sizeof(unsigned long long));
    GPUCHECK_CUDA(cudaMemsetAsync(count.get(), 0, count.bytes(), s));
    bool tails_equal = true;
    for (const Copy& c : copies_)
      for (const auto& [copy, first] : {std::pair{&c.a, &a_}, std::pair{&c.b, &b_}}) {
        const std::size_t whole = first->bytes() / 16 * 16, tail = first->bytes() - whole;
        if (whole > 0) kernels::add_differing_words(copy->get(), first->get(), whole, count.as<unsigned long long>(), s);
        if (tail == 0) continue;
        unsigned char x[16], y[16];
        GPUCHECK_CUDA(cudaMemcpyAsync(x, copy->as<unsigned char>() + whole, tail, cudaMemcpyDeviceToHost, s));
        GPUCHECK_CUDA(cudaMemcpyAsync(y, first->as<unsigned char>() + whole, tail, cudaMemcpyDeviceToHost, s));
        GPUCHECK_CUDA(cudaStreamSynchronize(s));
        tails_equal = tails_equal && std::memcmp(x, y, tail) == 0;
      }
    unsigned long long words = 0;
    GPUCHECK_CUDA(cudaMemcpyAsync(&words, count.get(), sizeof words, cudaMemcpyDeviceToHost, s));
    GPUCHECK_CUDA(cudaStreamSynchronize(s));
    if (words != 0 || !tails_equal)
      throw VerificationError(c_.name() + ": the operands' rotated copies differ from the verified ones (" +
                              std::to_string(words) + " 16-byte words" + (tails_equal ? "" : " and a last partial word") + ")");
  }

  // Runs the call once, to completion, under CUPTI: the kernel that ran, or "?" (the reason
  // on stderr once: the label says kernel=? and the case runs on).
  void name_kernel(cudaStream_t s) {
    std::string why;
    const auto records = kernel_name::trace([&] {
      run(s);
      GPUCHECK_CUDA(cudaStreamSynchronize(s));
    }, &why);
    kernel_ = records ? kernel_name::pick(*records) : std::nullopt;
    static bool said = false;
    if (!records && !said) {
      said = true;
      std::fprintf(stderr, "bench_matmul: no kernel names (labels say kernel=?): %s\n", why.c_str());
    }
  }

  GemmCase c_;
  LtProblem p_;
  LtTypes types_;
  harness::Device& dev_;
  cublasLtHandle_t lt_;
  harness::DeviceBuffer a_, b_, d_, ws_;
  harness::DeviceBuffer scale_a_, scale_b_;  // scaled_mm rows: A's and B's scale
  struct Copy {
    harness::DeviceBuffer a, b;
  };
  std::vector<Copy> copies_;  // the operands' other copies (F.linear rows)
  // The operands each call reads in turn: a_ and b_ (the verified ones), then the copies.
  std::vector<std::pair<const void*, const void*>> turns_;
  std::size_t next_turn_ = 0;
  std::uint64_t seed_ = 0;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulHeuristicResult_t heur_{};
  std::optional<kernel_name::Picked> kernel_;
};

// Burn: every call's result is compared, on the device and without a sync, with the first
// verified result; a single differing word makes the case an error. Clocks and temperature
// are the engine's readings plus a full telemetry read between samples (at most once a second).
class BurnGemm final : public Gemm {
 public:
  BurnGemm(const GemmCase& c, harness::Device& dev, cublasLtHandle_t lt)
      : Gemm(c, dev, lt), reference_(d().bytes()), mismatches_(sizeof(unsigned long long)) {}

  void verify() override {
    Gemm::verify();  // against the host reference; d() now holds a checked result
    GPUCHECK_CUDA(cudaMemcpyAsync(reference_.get(), d().get(), d().bytes(), cudaMemcpyDeviceToDevice, device().stream()));
    GPUCHECK_CUDA(cudaMemsetAsync(mismatches_.get(), 0, mismatches_.bytes(), device().stream()));
    GPUCHECK_CUDA(cudaStreamSynchronize(device().stream()));
  }
  void run(cudaStream_t s) override {
    Gemm::run(s);
    kernels::add_differing_words(d().get(), reference_.get(), d().bytes(), mismatches_.as<unsigned long long>(), s);
    ++calls_;
  }
  void verify_after() override {
    unsigned long long bad = 0;
    GPUCHECK_CUDA(cudaMemcpy(&bad, mismatches_.get(), sizeof bad, cudaMemcpyDeviceToHost));
    if (bad != 0)
      throw VerificationError("burn: " + std::to_string(bad) + " 16-byte words of the result differed from the "
                              "verified one over " + std::to_string(calls_) + " GEMMs (silent corruption under load)");
  }
  void between_samples() override {  // temperature, at most once a second
    const auto now = std::chrono::steady_clock::now();
    if (now - last_watch_ < std::chrono::seconds(1)) return;
    last_watch_ = now;
    const Telemetry t = device().refresh_telemetry();
    if (t.temperature_C && (!temperature_max_ || *t.temperature_C > *temperature_max_)) temperature_max_ = t.temperature_C;
  }
  void add_counters(benchmark::State& state, const harness::Measurement& m) const override {
    Gemm::add_counters(state, m);
    state.counters[contract::counter::burn_iterations] = static_cast<double>(calls_);  // ("iterations" is Google Benchmark's own field)
    state.counters[contract::counter::mismatches] = 0;  // verify_after threw otherwise
    if (m.sampled.sm_clock_MHz) state.counters[contract::counter::sm_clock_min_MHz] = *m.sampled.sm_clock_MHz;
    if (temperature_max_) state.counters[contract::counter::temperature_max_C] = *temperature_max_;
  }

 private:
  harness::DeviceBuffer reference_, mismatches_;
  std::uint64_t calls_ = 0;
  std::optional<unsigned> temperature_max_;
  std::chrono::steady_clock::time_point last_watch_{};
};

// How each load is measured: a burst stays ahead of the power limiter, and F.linear rows of
// more than 16 tokens are timed on its plateau (matmul.hpp); sustained and burn load the GPU
// first and then measure for a fixed time.
harness::MeasureOptions measure_for(const GemmCase& c, const harness::Registry& r, double burn_seconds, int copies) {
  harness::MeasureOptions o = r.defaults();
  o.plan.warmup_calls = 5;
  o.plan.batch_turns = copies;  // a graph replay ends where the next begins in the copies' rotation
  switch (c.load) {
    case Load::burst:
      if (c.operands != matmul::Operands::linear) {
        o = harness::power_burst(o);
        break;
      }
      if (matmul::linear_plateau(c.m)) {
        o = harness::power_plateau(o, matmul::kLinearPlateauLoadS, matmul::kLinearPlateauS);
      } else {
        o = harness::power_burst(o);
        o.plan.warmup_s = matmul::linear_warmup_s(c.m);  // decode: a busy card
        o.graph = true;  // graph replays, as the plateau's: no launch path in a 13-60 us call (matmul.hpp)
      }
      break;
    case Load::sustained:
      o.plan.warmup_s = 1.0;
      o.plan.stop.min_time_s = 1.0;
      o.plan.stop.max_time_s = 1.0;
      o.plan.stop.target_cv = o.plan.stop.target_rel_ci = 0;  // the whole second, whatever the noise
      break;
    case Load::burn:
      o.plan.warmup_s = 0.5;
      o.plan.stop.min_time_s = burn_seconds;
      o.plan.stop.max_time_s = burn_seconds;
      o.plan.stop.target_cv = o.plan.stop.target_rel_ci = 0;
      break;
  }
  o.groups = matmul::case_groups(c);  // a weight read from HBM: the memory state drawn again (matmul.hpp)
  return o;
}

void register_cases(harness::Registry& r) {
  harness::record_cublas_version();
  harness::Device& dev = r.device();
  const LtHandle& lt = r.keep<LtHandle>();
  const double burn_seconds = dev.options().burn_seconds;
  for (const GemmCase& c : matmul::cases(dev.suite(), r.points())) {
    if (c.dtype == DType::fp8e4m3 && dev.compute_capability() < 89) {
      r.add_unsupported(c.name(), "fp8 GEMMs need compute capability 8.9 or newer (this GPU is " +
                                      std::to_string(dev.compute_capability() / 10) + "." +
                                      std::to_string(dev.compute_capability() % 10) + ")");
      continue;
    }
    if (c.dtype == DType::fp8e4m3 && (c.m % 16 != 0 || c.n % 16 != 0 || c.k % 16 != 0)) {
      r.add_unsupported(c.name(), "cuBLASLt's fp8 GEMMs want M, N and K multiples of 16");
      continue;
    }
    const LtTypes t = lt_types(c.dtype);
    const int copies = operand_copies(c, dev);
    // The operands with their rotated copies (F.linear rows), and D.
    const auto need = static_cast<std::uint64_t>(
        operand_bytes(c) * copies +
        static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(storage_bytes(t.out)));
    harness::MeasureOptions measure = measure_for(c, r, burn_seconds, copies);
    const std::uint64_t redraw = measure.groups > 1 ? harness::kRedrawBytes : 0;  // harness::redraw_memory_state's
    if (const auto why = harness::exceeds_free_memory(need + workspace_bytes(c) + redraw)) {
      r.add_unsupported(c.name(), *why);
      continue;
    }
    harness::Case hc;
    hc.name = c.name();
    hc.rates = {harness::tflops(c.flops())};
    hc.measure = std::move(measure);
    if (c.operands == matmul::Operands::linear) hc.method = matmul::kLinearMethod;
    else if (matmul::weight_bound(c)) hc.method = matmul::kWeightBoundMethod;
    if (c.load == Load::burn) hc.setup = [c, &dev, &lt] { return std::make_unique<BurnGemm>(c, dev, lt.get()); };
    else hc.setup = [c, &dev, &lt] { return std::make_unique<Gemm>(c, dev, lt.get()); };
    r.add(std::move(hc));
  }
}

}  // namespace

harness::Family harness::family() {
  Family f;
  f.model = matmul::model();
  f.register_cases = register_cases;
  f.summary = "bench_matmul: cuBLASLt GEMM throughput (TFLOP/s, 2*M*N*K per call; layout TN) per dtype, a burst "
              "(cublaslt), under sustained load (cublaslt_sustained), and as PyTorch's F.linear runs it (linear: "
              "y = x W^T, suite llm: Llama-3 8B and 70B projections).";
  f.list = [](Suite s, const std::vector<axes::Point>* p, const axes::DeviceFacts&) {
    return listed(matmul::cases(s, p));  // fp8 before cc 8.9 is listed: it is reported skipped
  };
  f.own_help =
      "Cases a device cannot run are reported skipped with the reason: fp8 before compute capability 8.9 or with\n"
      "M, N, K not multiples of 16, sizes past free memory.\n"
      "Examples:\n"
      "  bench_matmul -a dtype=bf16 -a M=2^[9:14] --list          squares 512..16384 (N, K follow M)\n"
      "  bench_matmul -a dtype=fp16,bf16 -a M=4096 -a N=14336 -a K=4096 --benchmark_out=mlp.json\n"
      "  bench_matmul --suite llm -a N=6144 -a K=4096 --list     one projection at the llm suite's tokens\n"
      "Labels: algo=ID tile= stages= splitk= ws= (cuBLASLt's choice) kernel=NAME (CUPTI; ? without libcupti).\n";
  return f;
}

}  // namespace gpucheck
