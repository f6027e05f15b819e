// The families' tables (benchmarks/cases/*.hpp) listed per suite without a GPU, against
// fixtures/case_names.txt: the names each family's code at b8ecbae registered per suite, in
// order (generated from that code before the tables became rows), and the rows added since
// (issue 22's attention shapes end the attention block; issue 40's llm suite follows matmul's
// burn, written from the models' dimensions; issue 39's held eager chains follow the unheld
// chains of each suite). A renamed case, a case moved to
// another suite or a changed order fails here. The binary may leave out what the
// device cannot hold (memory sizes under 4x L2) or register as skipped (fp8 before cc 8.9).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cases/attention.hpp"
#include "cases/bmm.hpp"
#include "cases/conv.hpp"
#include "cases/launch.hpp"
#include "cases/matmul.hpp"
#include "cases/memory.hpp"
#include "cases/nccl.hpp"
#include "cases/pcie.hpp"
#include "gpucheck/core/contract.hpp"

namespace gpucheck {
namespace {

constexpr Suite kSuites[] = {Suite::quick, Suite::full, Suite::accept, Suite::burn, Suite::llm};

// "suite<TAB>name" lines, families in the fixture's order, through each family's cases()
// (what the binary registers and --list prints) with no axes given, on the reference GPU.
std::vector<std::string> listed() {
  std::vector<std::string> out;
  auto add = [&](Suite s, const std::string& n) { out.push_back(std::string(to_string(s)) + "\t" + n); };
  const axes::DeviceFacts h200;
  for (Suite s : kSuites)
    for (const auto& c : matmul::cases(s, nullptr)) add(s, c.name());
  for (Suite s : kSuites)
    for (const auto& c : memory::cases(s, nullptr, h200.l2_bytes)) add(s, c.name());
  for (Suite s : kSuites)
    for (const auto& c : pcie::cases(s, nullptr)) add(s, c.name());
  for (Suite s : kSuites)
    for (const auto& c : conv::cases(s, nullptr)) add(s, c.name());
  for (Suite s : kSuites)
    for (const auto& c : attention::cases(s, nullptr)) add(s, c.name());
  for (Suite s : kSuites)
    for (const auto& c : bmm::cases(s, nullptr)) add(s, c.name());
  for (Suite s : kSuites)
    for (const auto& c : launch::cases(s, nullptr)) add(s, c.name());
  return out;
}

// The points of `args` (--axis values) over a family's axes; fails the test on a bad one.
std::vector<axes::Point> points(const axes::CaseModel& model, const std::vector<std::string>& args,
                                Suite s = Suite::quick) {
  std::vector<axes::Override> os;
  std::string err;
  for (const std::string& a : args) {
    axes::Override o;
    EXPECT_TRUE(axes::parse_override(a, &o, &err)) << err;
    os.push_back(o);
  }
  std::vector<axes::Point> ps;
  EXPECT_TRUE(axes::select(model, s, os, &ps, &err)) << err;
  return ps;
}

template <class C>
std::vector<std::string> names(const std::vector<C>& cs) {
  std::vector<std::string> out;
  for (const C& c : cs) out.push_back(c.name());
  return out;
}

// Every family's case model.
std::vector<axes::CaseModel> models() {
  return {matmul::model(), memory::model(), pcie::model(), conv::model(),
          attention::model(), bmm::model(),   launch::model(), nccl::model()};
}

// Axis values as the -a arguments a user would type.
std::vector<std::string> as_args(const axes::Values& vs) {
  std::vector<std::string> out;
  for (const auto& [name, values] : vs) out.push_back(name + "=" + values);
  return out;
}

// A family's case names (suite s, or the user's points) on the reference GPU, 8 ranks for nccl.
std::vector<std::string> family_names(std::string_view family, Suite s, const std::vector<axes::Point>* user) {
  const axes::DeviceFacts h200;
  if (family == "matmul") return names(matmul::cases(s, user));
  if (family == "memory") {  // a user's size under 4x the L2 is a case registered skipped: left out here, as a suite does
    std::vector<std::string> out;
    for (const auto& c : memory::cases(s, user, h200.l2_bytes))
      if (!c.cached) out.push_back(c.name());
    return out;
  }
  if (family == "pcie") return names(pcie::cases(s, user));
  if (family == "conv") return names(conv::cases(s, user));
  if (family == "attention") return names(attention::cases(s, user));
  if (family == "bmm") return names(bmm::cases(s, user));
  if (family == "launch") return names(launch::cases(s, user));
  if (family == "nccl") return names(nccl::cases(s, user, 8));
  ADD_FAILURE() << "no family " << family;
  return {};
}

// Every family's axes: their defaults expand (in both suites), and a point that is a row of
// the table gets the row's name (a user's case compares and baselines like ours).
TEST(CaseTables, AxesNameTheirCasesAsTheTables) {
  for (const axes::CaseModel& m : models())
    for (Suite s : {Suite::quick, Suite::full}) {
      EXPECT_FALSE(points(m, {}, s).empty()) << m.family << " " << to_string(s);
      EXPECT_FALSE(points(m, as_args(m.find(s)->defaults), s).empty()) << m.family << " " << to_string(s);
    }
  auto ps = points(matmul::model(), {"dtype=bf16", "M=4096", "N=14336", "K=4096", "variant=cublaslt"});
  EXPECT_EQ(names(matmul::cases(Suite::quick, &ps)), (std::vector<std::string>{"matmul/cublaslt/bf16/4096x14336x4096"}));
  ps = points(attention::model(), {"causal=true", "head_dim=128", "seq_q=4096", "backend=flash"});
  EXPECT_EQ(names(attention::cases(Suite::quick, &ps)),
            (std::vector<std::string>{"attention/flash/fp16/b4h16s4096d128/causal"}));
  ps = points(attention::model(), {"backend=flash", "kv_heads=8", "seq_k=8192", "seq_q=1"});
  EXPECT_EQ(names(attention::cases(Suite::quick, &ps)),
            (std::vector<std::string>{"attention/flash/fp16/b4h16kv8s1sk8192d128"}));
  EXPECT_FALSE(attention::unrunnable(attention::cases(Suite::quick, &ps).front()));  // GQA runs
  ps = points(attention::model(), {"backend=flash,naive", "head_dim=256"});
  const auto d256 = attention::cases(Suite::quick, &ps);
  ASSERT_EQ(d256.size(), 2u);
  EXPECT_FALSE(attention::unrunnable(d256[0]));  // flash at 256: the device decides (hopper runs it)
  EXPECT_FALSE(attention::unrunnable(d256[1]));  // naive runs any head dim
  ps = points(bmm::model(), {"batch=512", "M=128", "K=64", "path=strided"});
  EXPECT_EQ(names(bmm::cases(Suite::quick, &ps)), (std::vector<std::string>{"bmm/strided/fp16/b512m128n128k64"}));
  ps = points(conv::model(), {"C=256", "K=64", "R=1", "dtype=fp16", "layout=nhwc"});
  EXPECT_EQ(names(conv::cases(Suite::quick, &ps)), (std::vector<std::string>{"conv/nhwc/fp16/n64c256h56w56k64r1s1"}));
  ps = points(pcie::model(), {"direction=h2d", "memory=pinned", "bytes=4KiB"});
  EXPECT_EQ(names(pcie::cases(Suite::quick, &ps)), (std::vector<std::string>{"pcie/h2d/pinned/4KiB"}));
  ps = points(memory::model(), {"variant=triad", "bytes=64MiB,2GiB"});
  const auto mem = memory::cases(Suite::quick, &ps, axes::DeviceFacts{}.l2_bytes);
  EXPECT_EQ(names(mem), (std::vector<std::string>{"memory/triad/fp32/64MiB", "memory/triad/fp32/2GiB"}));
  EXPECT_TRUE(mem[0].cached);  // under 4x L2: registered skipped
  ps = points(launch::model(), {"mode=graph", "kernel=small", "length=100"});
  EXPECT_EQ(names(launch::cases(Suite::quick, &ps)), (std::vector<std::string>{"launch/graph/small/100"}));
  ps = points(nccl::model(), {"collective=allreduce", "bytes=1GiB"});
  EXPECT_EQ(names(nccl::cases(Suite::quick, &ps, 8)), (std::vector<std::string>{"nccl/allreduce/fp32/1GiB/g8"}));
}

// A suite's cases are its declared axis values: each set, given as -a over the suite's
// defaults, names the same cases, and the sets one after the other are the suite, in order.
TEST(CaseTables, ASuiteIsTheExpansionOfItsDeclaredSets) {
  for (const axes::CaseModel& m : models())
    for (Suite s : {Suite::quick, Suite::full}) {
      std::vector<std::string> expanded;
      for (const axes::Values& set : m.find(s)->sets) {
        const std::vector<axes::Point> ps = points(m, as_args(set), s);
        for (std::string& n : family_names(m.family, s, &ps)) expanded.push_back(std::move(n));
      }
      const std::vector<std::string> suite = family_names(m.family, s, nullptr);
      EXPECT_FALSE(suite.empty()) << m.family << " " << to_string(s);
      EXPECT_EQ(suite, expanded) << m.family << " " << to_string(s);
    }
  // matmul's quick suite, spelled out: the burst set over every dtype at the acceptance size,
  // the two transformer shapes, and the sustained bf16 and tf32 cases.
  const auto& q = matmul::model().find(Suite::quick)->sets;
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(names(matmul::cases(Suite::quick, nullptr)),
            (std::vector<std::string>{"matmul/cublaslt/fp32/8192x8192x8192", "matmul/cublaslt/tf32/8192x8192x8192",
                                      "matmul/cublaslt/fp16/8192x8192x8192", "matmul/cublaslt/bf16/8192x8192x8192",
                                      "matmul/cublaslt/fp8e4m3/8192x8192x8192", "matmul/cublaslt/bf16/4096x14336x4096",
                                      "matmul/cublaslt/bf16/16x28672x8192",
                                      "matmul/cublaslt_sustained/bf16/8192x8192x8192",
                                      "matmul/cublaslt_sustained/tf32/8192x8192x8192"}));
  // The burn's set names a word -a may not (matmul's burn load).
  EXPECT_EQ(names(matmul::cases(Suite::burn, nullptr)), (std::vector<std::string>{contract::burn_name()}));
}

// -a multiplies with the suite's defaults for the axes it leaves unnamed.
TEST(CaseTables, AxisValuesMultiplyWithTheSuitesDefaults) {
  auto ps = points(matmul::model(), {"M=1024"});  // quick: burst and sustained, every dtype
  const auto quick = names(matmul::cases(Suite::quick, &ps));
  ASSERT_EQ(quick.size(), 10u);
  EXPECT_EQ(quick.front(), "matmul/cublaslt/fp32/1024x1024x1024");
  EXPECT_EQ(quick[4], "matmul/cublaslt/fp8e4m3/1024x1024x1024");
  EXPECT_EQ(quick[5], "matmul/cublaslt_sustained/fp32/1024x1024x1024");
  ps = points(matmul::model(), {"M=1024"}, Suite::full);  // full: burst only
  EXPECT_EQ(names(matmul::cases(Suite::full, &ps)).size(), 5u);
  ps = points(matmul::model(), {"dtype=bf16"}, Suite::full);  // full: M 2^[10:14], squares
  EXPECT_EQ(names(matmul::cases(Suite::full, &ps)),
            (std::vector<std::string>{"matmul/cublaslt/bf16/1024x1024x1024", "matmul/cublaslt/bf16/2048x2048x2048",
                                      "matmul/cublaslt/bf16/4096x4096x4096", "matmul/cublaslt/bf16/8192x8192x8192",
                                      "matmul/cublaslt/bf16/16384x16384x16384"}));
}

// A suite without defaults (acceptance's, the burn's) takes no -a: its cases are what is judged.
TEST(CaseTables, FixedSuitesRefuseAxes) {
  for (const axes::CaseModel& m : models())
    for (Suite s : {Suite::accept, Suite::burn}) {
      const axes::SuiteAxes* x = m.find(s);
      if (x) {
        EXPECT_TRUE(x->defaults.empty()) << m.family << " " << to_string(s);
      }
      std::vector<axes::Override> os(1);
      std::string err;
      ASSERT_TRUE(axes::parse_override(m.axes.front().name + "=1", &os[0], &err));
      std::vector<axes::Point> ps;
      EXPECT_FALSE(axes::select(m, s, os, &ps, &err)) << m.family << " " << to_string(s);
      EXPECT_EQ(err, "--axis " + m.axes.front().name + "=1: the " + std::string(to_string(s)) +
                         " suite's cases are fixed (acceptance judges them); axes apply to --suite quick or full");
    }
  EXPECT_TRUE(matmul::model().find(Suite::accept) && matmul::model().find(Suite::burn));
}

// Issue 22's shapes: head dim 256, grouped-query K/V, decode-length queries over long K/V.
TEST(CaseTables, GroupedQueryHeadDim256AndDecodeShapes) {
  using attention::Shape;
  EXPECT_EQ(attention::shape_label(Shape{4, 16, 4096, 256}), "b4h16s4096d256");
  EXPECT_EQ(attention::shape_label(Shape{4, 32, 4096, 128, 8}), "b4h32kv8s4096d128");
  EXPECT_EQ(attention::shape_label(Shape{8, 32, 1, 128, 8, 8192}), "b8h32kv8s1sk8192d128");
  EXPECT_EQ(attention::shape_label(Shape{1, 16, 1, 128, 0, 8192}), "b1h16s1sk8192d128");
  // kv and sk equal to h and s are left out of the name, given or not: the old names stay.
  EXPECT_EQ(attention::shape_label(Shape{4, 16, 4096, 128, 16, 4096}), "b4h16s4096d128");

  std::set<std::string> full;
  for (const std::string& l : listed())
    if (l.starts_with("full\t")) full.insert(l.substr(5));
  for (const char* n : {"attention/flash/fp16/b4h16s4096d256", "attention/flash_hopper/fp16/b4h16s4096d256/causal",
                        "attention/cudnn/fp16/b4h32kv8s4096d128", "attention/naive/fp16/b4h32kv8s4096d128/causal",
                        "attention/flash/fp16/b8h32kv8s1sk8192d128", "attention/cudnn/fp16/b8h32kv8s128sk8192d128",
                        "attention/flash_mma_sync/fp16/b4h16s4096d256"})
    EXPECT_EQ(full.count(n), 1u) << n;
  // Decode rows are not causal (one query row sees every key anyway); no bf16 rows; the quick
  // suite (the gate's stored baselines) is unchanged.
  EXPECT_EQ(full.count("attention/flash/fp16/b8h32kv8s1sk8192d128/causal"), 0u);
  EXPECT_EQ(full.count("attention/flash/bf16/b4h16s4096d256"), 0u);
  EXPECT_EQ(attention::cases(Suite::quick, nullptr).size(), 9u);

  // Why a full-suite case cannot run, before any device: mma_sync at 256 only.
  for (const auto& c : attention::cases(Suite::full, nullptr)) {
    const auto why = attention::unrunnable(c);
    const std::string n = c.name();
    if (n.starts_with("attention/flash_mma_sync/fp16/b4h16s4096d256")) {  // plain and causal
      ASSERT_TRUE(why) << n;
      EXPECT_NE(why->find("head_dim 64 and 128"), std::string::npos) << *why;
    } else if (c.backend->only && *c.backend->only != c.config.dtype) {
      EXPECT_TRUE(why) << n;
    } else {
      EXPECT_FALSE(why) << n << ": " << why.value_or("");
    }
  }

  // The same through the axes, with the reasons a user sees.
  auto reason = [&](const std::vector<std::string>& args) {
    auto ps = points(attention::model(), args);
    const auto cs = attention::cases(Suite::quick, &ps);
    EXPECT_EQ(cs.size(), 1u);
    return cs.empty() ? std::optional<std::string>("no case") : attention::unrunnable(cs.front());
  };
  for (const char* b : {"backend=naive", "backend=flash", "backend=cudnn", "backend=flash_hopper",
                        "backend=flash_hopper_serial", "backend=flash_mma_sync"}) {
    EXPECT_FALSE(reason({b, "heads=32", "kv_heads=8"})) << b;                             // GQA, group 4
    EXPECT_FALSE(reason({b, "heads=32", "kv_heads=1"})) << b;                             // multi-query
    EXPECT_FALSE(reason({b, "heads=32", "kv_heads=8", "seq_q=1", "seq_k=8192"})) << b;    // decode
    EXPECT_FALSE(reason({b, "heads=32", "kv_heads=8", "seq_q=128", "seq_k=8192", "causal=true"})) << b;
    EXPECT_NE(reason({b, "heads=8", "kv_heads=3"}).value_or("").find("kv_heads 3 must divide heads 8"),
              std::string::npos) << b;
    EXPECT_NE(reason({b, "heads=8", "kv_heads=16"}).value_or("").find("must divide"), std::string::npos) << b;
    EXPECT_NE(reason({b, "seq_q=8192", "seq_k=1", "causal=true"}).value_or("").find("seq_q <= seq_k"),
              std::string::npos) << b;
  }
  for (const char* b : {"backend=flash", "backend=flash_hopper", "backend=flash_hopper_serial", "backend=naive",
                        "backend=cudnn"})
    EXPECT_FALSE(reason({b, "head_dim=256"})) << b;
  EXPECT_NE(reason({"backend=flash_mma_sync", "head_dim=256"}).value_or("").find("hopper kernels only"),
            std::string::npos);
  EXPECT_NE(reason({"backend=flash", "head_dim=96"}).value_or("").find("head_dim 64, 128 and 256 (got 96)"),
            std::string::npos);
  EXPECT_FALSE(reason({"backend=naive", "head_dim=96"}));  // naive runs any head dim
}

// The must-show lists, without a GPU.
TEST(CaseTables, TheMustShowLists) {
  auto ps = points(matmul::model(), {"dtype=bf16", "M=1024", "N=2048", "K=512"});
  EXPECT_EQ(names(matmul::cases(Suite::quick, &ps)),
            (std::vector<std::string>{"matmul/cublaslt/bf16/1024x2048x512", "matmul/cublaslt_sustained/bf16/1024x2048x512"}));
  ps = points(attention::model(), {"seq_q=2^[10:13]", "head_dim=64,128"});
  const auto att = attention::cases(Suite::quick, &ps);
  ASSERT_EQ(att.size(), 24u);  // 8 per backend of the quick suite (naive, flash, cudnn)
  EXPECT_EQ(att.front().name(), "attention/naive/fp16/b4h16s1024d64");
  EXPECT_EQ(att[7].name(), "attention/naive/fp16/b4h16s8192d128");
  ps = points(nccl::model(), {"bytes[pow2]=[3:33]"});
  const auto nc = nccl::cases(Suite::quick, &ps, 1);
  ASSERT_EQ(nc.size(), 93u);  // 31 sizes for each of the 3 collectives
  EXPECT_EQ(nc.front().name(), "nccl/allreduce/fp32/8B/g1");
  EXPECT_EQ(nc[30].name(), "nccl/allreduce/fp32/8GiB/g1");
}

// Issue 40: the projection GEMMs of Llama-3 8B and 70B as F.linear runs them (y = x W^T, m and
// n swapped for cuBLASLt), at 6 token counts, bf16, fp16 and fp8; only bench_matmul has them.
TEST(CaseTables, TheLlmSuiteIsLlamaProjectionsAsFLinearRunsThem) {
  using matmul::Projection;
  const std::vector<Projection> p = matmul::projections();
  ASSERT_EQ(p.size(), 8u);
  auto nk = [](const Projection& x) { return std::pair{x.n, x.k}; };
  EXPECT_EQ(nk(p[0]), (std::pair<std::int64_t, std::int64_t>{(32 + 2 * 8) * 128, 4096}));  // 8B QKV
  EXPECT_EQ(nk(p[2]), (std::pair<std::int64_t, std::int64_t>{2 * 14336, 4096}));          // 8B gate/up
  EXPECT_EQ(nk(p[4]), (std::pair<std::int64_t, std::int64_t>{(64 + 2 * 8) * 128, 8192}));  // 70B QKV
  EXPECT_EQ(nk(p[7]), (std::pair<std::int64_t, std::int64_t>{8192, 28672}));              // 70B down
  EXPECT_EQ(p[6].name, "gate/up");
  EXPECT_EQ(p[6].model, "Llama-3 70B");

  const auto llm = matmul::cases(Suite::llm, nullptr);
  ASSERT_EQ(llm.size(), 8u * 3u * 6u);
  EXPECT_EQ(llm.front().name(), "matmul/linear/bf16/1x6144x4096");
  EXPECT_EQ(llm[6].name(), "matmul/linear/fp16/1x6144x4096");
  EXPECT_EQ(llm.back().name(), "matmul/linear/fp8e4m3/8192x8192x28672");
  for (const auto& c : llm) {
    EXPECT_EQ(c.operands, matmul::Operands::linear) << c.name();
    EXPECT_EQ(c.load, matmul::Load::burst) << c.name();
    EXPECT_EQ(c.lt_mnk(), (std::array<std::int64_t, 3>{c.n, c.m, c.k})) << c.name();  // cuBLASLt's m is N
  }
  const matmul::GemmCase tn = matmul::cases(Suite::quick, nullptr).front();
  EXPECT_EQ(tn.lt_mnk(), (std::array<std::int64_t, 3>{tn.m, tn.n, tn.k}));
  for (const axes::CaseModel& m : models())
    if (m.family != "matmul") {
      EXPECT_EQ(m.find(Suite::llm), nullptr) << m.family;
    }

  // -a in the llm suite: another projection at the suite's tokens and dtypes; -a variant=linear
  // in the others.
  auto ps = points(matmul::model(), {"N=1024", "K=512"}, Suite::llm);
  const auto one = names(matmul::cases(Suite::llm, &ps));
  ASSERT_EQ(one.size(), 18u);
  EXPECT_EQ(one[5], "matmul/linear/bf16/8192x1024x512");
  ps = points(matmul::model(), {"variant=linear", "dtype=bf16", "M=16", "N=28672", "K=8192"});
  EXPECT_EQ(names(matmul::cases(Suite::quick, &ps)), (std::vector<std::string>{"matmul/linear/bf16/16x28672x8192"}));
}

TEST(CaseTables, EverySuiteListsTheNamesItRegisteredBefore) {
  std::ifstream in(GPUCHECK_CASE_NAMES);
  ASSERT_TRUE(in) << GPUCHECK_CASE_NAMES;
  std::vector<std::string> before;
  for (std::string line; std::getline(in, line);) before.push_back(line);
  const std::vector<std::string> now = listed();
  ASSERT_EQ(now.size(), before.size());
  for (std::size_t i = 0; i < now.size(); ++i) ASSERT_EQ(now[i], before[i]) << "line " << i + 1;
}

// Every name acceptance and the report judge by is one a family registers, in the suite
// that `gpucheck accept` runs (accept; the burn in burn).
TEST(CaseTables, TheJudgedNamesAreRegistered) {
  std::set<std::string> accept, burn, any;
  for (const std::string& l : listed()) {
    const std::string suite = l.substr(0, l.find('\t')), name = l.substr(l.find('\t') + 1);
    any.insert(name);
    if (suite == "accept") accept.insert(name);
    if (suite == "burn") burn.insert(name);
  }
  for (std::string_view k : contract::kAcceptGemmPeaks) EXPECT_EQ(accept.count(*contract::accept_gemm_name(k)), 1u) << k;
  for (std::string_view d : contract::kAcceptPcieDirections) EXPECT_EQ(accept.count(contract::accept_pcie_name(d)), 1u) << d;
  for (std::string_view v : contract::kAcceptMemoryVariants)
    EXPECT_EQ(accept.count(contract::accept_memory_name(v)), 1u) << v;
  EXPECT_EQ(burn.count(contract::burn_name()), 1u);
  // The report's pairs: each side is a segment some registered name has (the torch
  // reference's own names, fused/sdpa/einsum, come from ci/torch_reference.py).
  std::set<std::string> segments;
  for (const std::string& n : any)
    for (const std::string& s : split_name(n)) segments.insert(s);
  for (const auto& p : contract::kReportPairs)
    for (std::string_view side : {p.candidate, p.reference}) {
      if (side == "fused" || side == "sdpa" || side == "einsum" || side == "fp8") continue;
      EXPECT_EQ(segments.count(std::string(side)), 1u) << side;
    }
}

// F.linear rows rotate their operands over copies that keep each out of the L2 between uses,
// and decode rows warm up first (ci/torch_reference.py's linear_copies and linear_warmup_s are
// tested against the same figures).
TEST(CaseTables, LinearRowsRotateCopiesDecodeRowsWarmUpLargerRowsTimeThePlateau) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20, kGiB = kMiB << 10, l2 = 50 * kMiB;  // an H200's
  EXPECT_EQ(matmul::linear_copies(32 * kMiB + 8192, l2), 5);      // 1x4096x4096 bf16: 4 others hold 128 MiB
  EXPECT_EQ(matmul::linear_copies(48 * kMiB + 131072, l2), 4);    // 16x6144x4096 bf16
  EXPECT_EQ(matmul::linear_copies(100 * kMiB, l2), 4);            // twice the L2: 4 placements all the same
  EXPECT_EQ(matmul::linear_copies(100 * kMiB - 1, l2), 4);        // 3 for the L2, 4 placements
  EXPECT_EQ(matmul::linear_copies(std::uint64_t{940} * kMiB, l2), 4);
  EXPECT_EQ(matmul::linear_copies(2 * kGiB, l2), 4);              // 8 GiB of copies: still 4
  EXPECT_EQ(matmul::linear_copies(2 * kGiB + 1, l2), 1);          // over it: one, read in place
  EXPECT_EQ(matmul::linear_copies(std::uint64_t{1} << 62, l2), 1);
  EXPECT_EQ(matmul::linear_copies(kMiB, l2), matmul::kMaxLinearCopies);  // capped
  EXPECT_EQ(matmul::linear_copies(0, l2), 1);
  EXPECT_EQ(matmul::linear_copies(kMiB, 0), 4);                   // no L2 reported: the placements
  EXPECT_EQ(matmul::kMaxLinearCopies, 8);  // the two sides' constants (test_torch_reference.py pins its own)
  EXPECT_EQ(matmul::kMinLinearCopies, 4);
  EXPECT_EQ(matmul::kPlacementCopiesBytes, 8 * kGiB);
  EXPECT_EQ(matmul::kLinearWarmupS, 0.2);
  EXPECT_EQ(matmul::kLinearMethod, 8);
  EXPECT_EQ(matmul::kLinearGroups, 5);
  EXPECT_EQ(matmul::kLinearGroupsMaxTokens, 128);
  EXPECT_EQ(matmul::kLinearFp8WorkspaceBytes, kMiB);  // torch._scaled_mm's (PyTorch 2.11)
  EXPECT_EQ(matmul::kLinearPlateauLoadS, 0.2);
  EXPECT_EQ(matmul::kLinearPlateauS, 0.4);
  // Decode rows (at most 16 tokens) are bursts after 0.2 s of warm-up; the others are timed
  // on the plateau (no warm-up time of their own: the load before the window is theirs).
  for (const std::int64_t decode : {1, 16}) {
    EXPECT_EQ(matmul::linear_warmup_s(decode), 0.2) << decode;
    EXPECT_FALSE(matmul::linear_plateau(decode)) << decode;
    EXPECT_EQ(matmul::linear_groups(decode), 5) << decode;
  }
  // Rows of at most 128 tokens (half weight) are timed in groups too, each its own plateau.
  for (const std::int64_t tokens : {17, 128, 129, 1024, 8192}) {
    EXPECT_EQ(matmul::linear_warmup_s(tokens), 0.0) << tokens;
    EXPECT_TRUE(matmul::linear_plateau(tokens)) << tokens;
    EXPECT_EQ(matmul::linear_groups(tokens), tokens <= 128 ? 5 : 1) << tokens;
  }
}

// A cuBLASLt burst whose A has at most 16 rows reads its B from HBM like a decode row: timed
// in the decode rows' groups, with a method of its own; nothing else changes.
TEST(CaseTables, WeightBoundBurstsAreTimedInGroupsWithTheirOwnMethod) {
  using matmul::GemmCase;
  using matmul::Load;
  using matmul::Operands;
  const GemmCase gemv{DType::bf16, 16, 28672, 8192};
  EXPECT_TRUE(matmul::weight_bound(gemv));
  EXPECT_EQ(matmul::case_groups(gemv), matmul::kLinearGroups);
  EXPECT_EQ(matmul::kWeightBoundMethod, 2);
  EXPECT_TRUE(matmul::weight_bound(GemmCase{DType::fp16, 1, 4096, 4096}));
  for (const GemmCase& other : {GemmCase{DType::bf16, 17, 28672, 8192},             // one row past
                                GemmCase{DType::bf16, 8192, 8192, 8192},            // a square
                                GemmCase{DType::bf16, 16, 28672, 8192, Load::sustained},
                                GemmCase{DType::bf16, 16, 28672, 8192, Load::burn}}) {
    EXPECT_FALSE(matmul::weight_bound(other)) << other.name();
    EXPECT_EQ(matmul::case_groups(other), 1) << other.name();
  }
  // An F.linear row is not weight-bound (its own method); its groups are linear_groups'.
  for (const std::int64_t tokens : {16, 128, 129}) {
    const GemmCase linear{DType::bf16, tokens, 28672, 8192, Load::burst, Operands::linear};
    EXPECT_FALSE(matmul::weight_bound(linear)) << linear.name();
    EXPECT_EQ(matmul::case_groups(linear), matmul::linear_groups(tokens)) << linear.name();
  }
}

}  // namespace
}  // namespace gpucheck
