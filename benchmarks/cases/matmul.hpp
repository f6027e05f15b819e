// bench_matmul's case model: the axes of a GEMM and the suites as values of them. Pure (no
// CUDA): the binary registers the cases, tests/unit/test_case_tables.cpp lists them per suite.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "listing.hpp"
#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/options.hpp"

namespace gpucheck::matmul {

enum class Load { burst, sustained, burn };

// How the operands are laid out for cuBLASLt. `tn`: D (M x N, column-major) = A^T B with A
// stored K x M and B K x N, cublasLtMatmul(T, N, m=M, n=N, k=K), bench_matmul's own. `linear`:
// PyTorch's F.linear, y = x W^T with x M x K, W N x K and y M x N, all row-major, which cuBLAS
// sees as (T, N, m=N, n=M, k=K): the same operation with m and n swapped, a different problem
// for cuBLASLt's heuristic wherever M != N (at M = 1 the tokens are cuBLAS's n).
enum class Operands { tn, linear };

struct GemmCase {
  DType dtype;
  std::int64_t m, n, k;
  Load load = Load::burst;
  Operands operands = Operands::tn;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  std::string_view variant() const {
    namespace seg = contract::segment;
    if (operands == Operands::linear) return seg::linear;
    return load == Load::burst ? seg::cublaslt : load == Load::sustained ? seg::cublaslt_sustained : seg::burn;
  }
  // The problem cuBLASLt is given: (m, n, k) of D (m x n) = A^T B, A stored k x m, B k x n.
  std::array<std::int64_t, 3> lt_mnk() const { return operands == Operands::linear ? std::array{n, m, k} : std::array{m, n, k}; }
  std::string name() const { return contract::matmul_name(variant(), dtype, m, n, k); }
  Coordinates coordinates() const {
    return {{"variant", std::string(variant())}, {"dtype", std::string(to_string(dtype))},
            {"M", std::to_string(m)}, {"N", std::to_string(n)}, {"K", std::to_string(k)}};
  }
};

// A model's projection GEMMs as F.linear runs them (N out features, K in features; M is the
// tokens): QKV (N = (heads + 2 kv_heads) x head_dim, K = hidden), O (hidden, hidden), gate and
// up fused (2 x MLP, hidden), down (hidden, MLP).
struct Projection {
  std::string_view model, name;
  std::int64_t n, k;
};
struct LlmConfig {
  std::string_view name;
  std::int64_t hidden, heads, kv_heads, head_dim, mlp;
};
inline constexpr std::array<LlmConfig, 2> kLlms{{{"Llama-3 8B", 4096, 32, 8, 128, 14336},
                                                 {"Llama-3 70B", 8192, 64, 8, 128, 28672}}};
inline std::vector<Projection> projections() {
  std::vector<Projection> out;
  for (const LlmConfig& c : kLlms) {
    out.push_back({c.name, "QKV", (c.heads + 2 * c.kv_heads) * c.head_dim, c.hidden});
    out.push_back({c.name, "O", c.hidden, c.hidden});
    out.push_back({c.name, "gate/up", 2 * c.mlp, c.hidden});
    out.push_back({c.name, "down", c.hidden, c.mlp});
  }
  return out;
}
inline constexpr std::string_view kLlmTokens = "1,16,128,1024,4096,8192";

// How an F.linear row (the llm suite) is timed, on both sides of ci/gemm_parity.sh alike, as a
// model's step meets the GEMM: its weights come from HBM, since the layers run between two
// calls of one projection evict them from the L2. So the operands are rotated over copies
// (linear_copies): one weight near the L2's size read again and again ran 14.2-15.4 us across
// four allocations of it in one process (16x6144x4096 bf16; PyTorch's 14.9-16.8), its L2 hits
// following where it landed. Decode rows (at most kLinearWarmMaxTokens tokens: HBM-bound,
// they draw little power) also warm up for kLinearWarmupS of calls, as a decode step finds
// the card busy: sampled within milliseconds of an idle card, 1x57344x8192 read 221 and
// 240 us on the two sides against 212 and 215 back to back. Rows of more tokens draw the
// card to its 700 W limit, where a burst's figure depends on when the limiter cut in (rows of
// 1024 tokens and more read 0.876-1.019 of PyTorch's, 2026-12-03): they are timed on the
// plateau instead (harness::power_plateau), kLinearPlateauLoadS of load not counted, then
// kLinearPlateauS counted. Continuous F.linear load on an H200 (6 shapes of 128-8192 tokens,
// 3 starts each, cool and hot) held within 1% of one figure per shape from 0.15 s to 0.75 s,
// and swung by 3-5% after it (docs/MATMUL.md).
inline constexpr double kLinearWarmupS = 0.2;
inline constexpr std::int64_t kLinearWarmMaxTokens = 16;
inline double linear_warmup_s(std::int64_t tokens) { return tokens <= kLinearWarmMaxTokens ? kLinearWarmupS : 0.0; }
inline constexpr double kLinearPlateauLoadS = 0.2, kLinearPlateauS = 0.4;
inline bool linear_plateau(std::int64_t tokens) { return tokens > kLinearWarmMaxTokens; }
inline constexpr int kMaxLinearCopies = 8;
// The fp8 F.linear rows as torch._scaled_mm runs them (PyTorch 2.11, per-tensor scales): the
// A and B scales read from device memory (1.0 here, each its own allocation) and cuBLASLt's
// workspace capped at CUBLASLT_WORKSPACE_SIZE's default, 1 MiB. With 64 MiB and no scales,
// ours ran a split-K kernel at 16x8192x28672 whose workspace is 16 bytes over 1 MiB: 0.949 of
// PyTorch's pick without split-K; with them, the same kernel, 1.008 (an H200, 2026-12-04).
// At 16x4096x4096 ours still runs the same kernel 0.35 us a call faster (7 us); not explained.
inline constexpr std::size_t kLinearFp8WorkspaceBytes = std::size_t{1} << 20;
// The F.linear rows' way of measuring (the counter `method`, on both sides of the parity): 8
// since a plateau's clock and energy readings are paced (energy::ReadPacer: read every sample,
// they left the card idle between samples; 2026-12-04); 7: the rows of 128 tokens timed in
// groups too and the fp8 rows run as
// torch._scaled_mm (6: the decode rows in kLinearGroups groups, the fastest reported; 5: their
// held samples graph replays, every batch whole turns of the copies, at least 4 copies; 4: the
// plateau's samples graph replays; 3: rows of more than 16 tokens timed on the plateau; 2: the
// rotated copies and the decode rows' warm-up; 2026-12-03/04), so that no comparison or
// history series spans a change.
inline constexpr int kLinearMethod = 8;
// Decode rows stream their weights from HBM, and that read runs at one of two speeds that the
// card's memory state decides, the same for every buffer, whatever the process: each write and
// free of other memory draws it anew, and it holds until the next (an H200, 2026-12-04: 1x57344x8192
// fp16 F.linear 213.6 or 234.2 us a call, 1x28672x4096 bf16 55.4 or 60.3, flat for seconds on
// either side of a 4 GiB write and free; of 30 such draws of 256 MiB-16 GiB, 1-10 slow; a 50 MB
// weight's read did not change). One process read one state for a whole row, so a decode row
// read 7-10% apart between fresh processes, on both sides of the parity. So a decode row is timed
// in groups (harness MeasureOptions::groups), each after a write and free of 256 MiB
// (harness::redraw_memory_state) and its own warm-up, and the fastest group is its figure: with
// a slow draw at most 1 in 3, all 5 slow is under 1 in 200. The rows of 128 tokens, timed on
// the plateau, still read half weight: 128x4096x4096 and 128x8192x8192 read ours 2-6% over
// PyTorch's in every alternation on two of three H200s, ours at the lower SM clock
// (fp16 128x8192x8192: 425 TFLOP/s at 1301 MHz against 402 at 1370; 2026-12-04), where
// the rows of 1024 tokens and more, compute-bound, agreed within 1.5%. Timed in groups, each
// its own plateau, their 5 groups read 2-10% apart within a process on both sides, so the
// plateau's rows of at most kLinearGroupsMaxTokens are timed in groups too. The fastest groups
// still left ours 1-3% over PyTorch's on 128x6144x4096 and bf16 128x8192x8192 (GPU-134ab7c5):
// that residual is not the state, and not yet explained.
inline constexpr int kLinearGroups = 5;
inline constexpr std::int64_t kLinearGroupsMaxTokens = 128;
inline int linear_groups(std::int64_t tokens) { return tokens <= kLinearGroupsMaxTokens ? kLinearGroups : 1; }
// A cuBLASLt burst row whose A has at most kLinearWarmMaxTokens rows (M) reads its B from HBM
// once a call, as a decode row reads its weight (the quick suite's 16x28672x8192 bf16: 448 MiB
// a call), and so reads the same memory state: over 28 fresh processes on 7 H200s it sat at
// 62.3-63.6, 68.0-68.5 or 69.6-70.1 TFLOP/s, the same kernel and algorithm in each, and it was
// gated at 19% (2026-12-02/03). So it is timed in kLinearGroups groups too, each after a
// redraw, the fastest reported; its `method` is kWeightBoundMethod, so that no baseline or
// history series spans the change.
inline constexpr int kWeightBoundMethod = 2;
inline bool weight_bound(const GemmCase& c) {
  return c.operands != Operands::linear && c.load == Load::burst && c.m <= kLinearWarmMaxTokens;
}
// The groups a case is timed in (MeasureOptions::groups): an F.linear row's linear_groups, a
// weight-bound burst's kLinearGroups, else 1.
inline int case_groups(const GemmCase& c) {
  if (c.operands == Operands::linear) return linear_groups(c.m);
  return weight_bound(c) ? kLinearGroups : 1;
}
// At least this many copies, each its own allocation, where they fit in kPlacementCopiesBytes:
// a weight that the L2 partly holds reads faster or slower with where it landed (over 4 copies,
// 1x6144x4096's five placements ran within 1.1%; an H200, 2026-12-03). The larger weights'
// 7-10% steps between processes, first put down to placement too, are the memory state above:
// 12 copies in one process all read one level (2026-12-04).
inline constexpr int kMinLinearCopies = 4;
inline constexpr std::uint64_t kPlacementCopiesBytes = std::uint64_t{8} << 30;
// The copies of a call's operands (operand_bytes: A and B of one call) to rotate over: enough
// that each copy has been evicted by the others before it is used again (the others hold at
// least twice the L2), at most kMaxLinearCopies; and at least kMinLinearCopies, to spread the
// placements, where that many hold at most kPlacementCopiesBytes.
inline int linear_copies(std::uint64_t operand_bytes, std::uint64_t l2_bytes) {
  if (operand_bytes == 0) return 1;
  int n = 1;
  if (operand_bytes < 2 * l2_bytes) {
    const std::uint64_t others = (2 * l2_bytes + operand_bytes - 1) / operand_bytes;
    n = static_cast<int>(std::min<std::uint64_t>(1 + others, kMaxLinearCopies));
  }
  if (operand_bytes <= kPlacementCopiesBytes / kMinLinearCopies) n = std::max(n, kMinLinearCopies);
  return n;
}

// The error a split-K may add to one output beyond core's tolerance (gpucheck/core/verify.hpp),
// when cuBLASLt reduces in the output type (reduction scheme INPLACE or OUTPUT_TYPE): each of
// the `splits` partial sums, or the running sum after each, is rounded there, at most u_out of
// its magnitude. a and b: the output's K inputs. The allowance is 2 u_out sum_j (|p_j| + |r_j|)
// over `splits` equal contiguous ranges of K (p_j a range's sum, r_j the running sum after
// it): the factor 2 covers split points elsewhere (cuBLASLt's fall on tile multiples).
inline double split_k_allowance(const double* a, const double* b, std::int64_t k, std::int64_t splits, double u_out) {
  if (splits <= 1 || k <= 0) return 0;
  double total = 0, running = 0;
  for (std::int64_t j = 0; j < splits; ++j) {
    double part = 0;
    for (std::int64_t i = j * k / splits; i < (j + 1) * k / splits; ++i) part += a[i] * b[i];
    running += part;
    total += std::fabs(part) + std::fabs(running);
  }
  return 2.0 * u_out * total;
}

inline constexpr std::array<DType, 5> kDTypes{DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8e4m3};

// The axes (TN for every dtype; the variant linear swaps m and n: Operands). N follows M and K
// follows N, so `-a M=2^[9:14]` is a sweep of squares. The suites, in the order their cases
// run: the gate's handful; acceptance's GEMMs (every dtype with a tensor-core peak: not fp32);
// the sweep (squares 1k-16k and transformer shapes, m = tokens: MLP up and down projections of
// 8B- and 70B-class models, and a skinny decode step of 16 tokens); the burn; llm.
inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  namespace seg = contract::segment;
  const std::string A = std::to_string(contract::kAcceptGemmSize);  // 8192: what acceptance and the burn read
  const std::string all = "fp32,tf32,fp16,bf16,fp8e4m3";
  const std::string burst(seg::cublaslt), sustained(seg::cublaslt_sustained);
  const std::string linear(seg::linear);
  axes::Axis variant{"variant", Kind::word, "burst, sustained load, or a burst of F.linear's y = x W^T (linear)",
                     {burst, sustained, linear}, 1, 1};
  variant.suite_words = {std::string(seg::burn)};
  axes::CaseModel m{std::string(contract::family::matmul),
                    {variant,
                     {"dtype", Kind::dtype, "input type (fp8e4m3: bf16 out)", dtype_names(kDTypes), 1, 1},
                     {"M", Kind::integer, "rows of A and C", {}, 1, 1 << 20},
                     {"N", Kind::integer, "columns of B and C", {}, 1, 1 << 20, "M"},
                     {"K", Kind::integer, "the reduced extent", {}, 1, 1 << 20, "N"}},
                    {}};
  axes::SuiteAxes q{quick, {{"variant", burst + "," + sustained}, {"dtype", all}, {"M", A}}, {}};
  q.sets = {{{"variant", burst}},
            {{"variant", burst}, {"dtype", "bf16"}, {"M", "4096"}, {"N", "14336"}, {"K", "4096"}},
            {{"variant", burst}, {"dtype", "bf16"}, {"M", "16"}, {"N", "28672"}, {"K", "8192"}},
            {{"variant", sustained}, {"dtype", "bf16"}},
            {{"variant", sustained}, {"dtype", "tf32"}}};
  axes::SuiteAxes f{full, {{"variant", burst}, {"dtype", all}, {"M", "2^[10:14]"}}, {}};
  for (DType t : kDTypes) {
    const std::string d(to_string(t));
    f.sets.push_back({{"dtype", d}});
    for (auto [mm, n, k] : {std::array<int, 3>{4096, 14336, 4096}, {4096, 4096, 14336}, {8192, 28672, 8192},
                            {8192, 8192, 28672}, {16, 28672, 8192}})
      f.sets.push_back({{"dtype", d}, {"M", std::to_string(mm)}, {"N", std::to_string(n)}, {"K", std::to_string(k)}});
  }
  f.sets.push_back({{"variant", sustained}, {"dtype", "bf16"}, {"M", A}});
  // llm: every projection of kLlms at kLlmTokens tokens, bf16, fp16 and fp8 (-a N= K= names
  // another projection at the same tokens and dtypes).
  axes::SuiteAxes l{llm, {{"variant", linear}, {"dtype", "bf16,fp16,fp8e4m3"}, {"M", std::string(kLlmTokens)}}, {}};
  for (const Projection& p : projections())
    l.sets.push_back({{"N", std::to_string(p.n)}, {"K", std::to_string(p.k)}});
  const axes::SuiteAxes a{accept, {}, {{{"variant", burst}, {"dtype", "tf32,fp16,bf16,fp8e4m3"}, {"M", A}}}};
  const axes::SuiteAxes b{burn, {}, {{{"variant", std::string(seg::burn)}, {"dtype", std::string(to_string(contract::kBurnDType))}, {"M", A}}}};
  m.suites = {q, f, a, b, l};
  return m;
}

// A suite's cases (or the user's points), in order.
inline std::vector<GemmCase> cases(Suite s, const std::vector<axes::Point>* user) {
  namespace seg = contract::segment;
  std::vector<GemmCase> out;
  for (const axes::Point& p : points_of(model(), s, user)) {
    const std::string& v = p.text("variant");
    out.push_back({*parse_dtype(p.text("dtype")), p.n("M"), p.n("N"), p.n("K"),
                   v == seg::cublaslt_sustained ? Load::sustained : v == seg::burn ? Load::burn : Load::burst,
                   v == seg::linear ? Operands::linear : Operands::tn});
  }
  return out;
}

}  // namespace gpucheck::matmul
