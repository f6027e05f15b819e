// bench_attention's case model: the backends, the axes of a problem, and the suites as values
// of them. Pure: the binary maps a backend's name to its op.
#pragma once
#include <array>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/options.hpp"
#include "listing.hpp"

namespace gpucheck::attention {

// kv (key/value heads) and sk (keys per query sequence) are 0 when they equal h and s: the
// name shows them only where they differ (b4h32kv8s4096d128, b1h16s1sk8192d128).
struct Shape {
  int b, h, s, d;
  int kv = 0, sk = 0;
  int kv_heads() const { return kv > 0 ? kv : h; }
  int seq_k() const { return sk > 0 ? sk : s; }
};

inline std::string shape_label(const Shape& s) {
  char buf[96];  // (snprintf: g++ 12 misreports -Wrestrict on a chain of string + to_string)
  char kv[24] = "", sk[24] = "";
  if (s.kv_heads() != s.h) std::snprintf(kv, sizeof kv, "kv%d", s.kv_heads());
  if (s.seq_k() != s.s) std::snprintf(sk, sizeof sk, "sk%d", s.seq_k());
  std::snprintf(buf, sizeof buf, "b%dh%d%ss%d%sd%d", s.b, s.h, kv, s.s, sk, s.d);
  return buf;
}

struct Config {
  Shape shape;
  DType dtype;
  bool causal;
};

struct Backend {
  std::string_view name;
  std::optional<DType> only;     // nullopt: every dtype; else only this input dtype runs
  std::optional<DType> naive_s;  // a naive row's S dtype (its GBps counts S's bytes); nullopt when fused
};

inline const std::vector<Backend>& backends() {
  namespace seg = contract::segment;
  static const std::vector<Backend> b{
      {seg::naive, std::nullopt, DType::fp32},
      {seg::flash, std::nullopt, std::nullopt},
      {seg::cudnn, std::nullopt, std::nullopt},
      {"naive_s16", DType::fp16, DType::fp16},
      {"flash_mma_sync", std::nullopt, std::nullopt},
      {"flash_hopper_serial", std::nullopt, std::nullopt},
      {"flash_hopper", std::nullopt, std::nullopt},
  };
  return b;
}

inline std::string case_name(const Config& c, const Backend& b) {
  namespace fam = contract::family;
  return c.causal ? bench_name({fam::attention, b.name, to_string(c.dtype), shape_label(c.shape), "causal"})
                  : bench_name({fam::attention, b.name, to_string(c.dtype), shape_label(c.shape)});
}

struct Case {
  Config config;
  const Backend* backend;
  std::string name() const { return case_name(config, *backend); }
  Coordinates coordinates() const {
    const Shape& s = config.shape;
    return {{"backend", std::string(backend->name)}, {"dtype", std::string(to_string(config.dtype))},
            {"batch", std::to_string(s.b)},          {"heads", std::to_string(s.h)},
            {"kv_heads", std::to_string(s.kv_heads())}, {"seq_q", std::to_string(s.s)},
            {"seq_k", std::to_string(s.seq_k())},    {"head_dim", std::to_string(s.d)},
            {"causal", config.causal ? "true" : "false"}};
  }
};

// The axes: kv_heads follows heads and seq_k follows seq_q unless given. The suites, each
// configuration with its backends (naive_s16 runs fp16 only). The full suite's shapes of
// current models (issue 22), fp16: head dim 256 (Gemma), grouped-query K/V (Llama's 32 query
// heads over 8 K/V heads) and decode-length queries over a long K/V cache (one token, and a
// 128-token chunk, against 8192 keys) come last, so that the names and order before them stay
// as the stored baselines know them. Acceptance and burn-in run other families.
inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  std::vector<std::string> names;
  for (const Backend& b : backends()) names.emplace_back(b.name);
  constexpr int kMax = 1 << 20;
  const auto shape = [](int b, int h, int sq, int d, const std::string& t, const std::string& causal, int kv = 0,
                        int sk = 0) {
    axes::Values v{{"dtype", t}, {"batch", std::to_string(b)}, {"heads", std::to_string(h)}, {"seq_q", std::to_string(sq)},
                   {"head_dim", std::to_string(d)}, {"causal", causal}};
    if (kv > 0) v.push_back({"kv_heads", std::to_string(kv)});
    if (sk > 0) v.push_back({"seq_k", std::to_string(sk)});
    return v;
  };
  axes::SuiteAxes q{quick,
                    {{"backend", "naive,flash,cudnn"}, {"dtype", "fp16"}, {"batch", "4"}, {"heads", "16"},
                     {"seq_q", "4096"}, {"head_dim", "128"}, {"causal", "false"}},
                    {shape(4, 16, 4096, 128, "fp16", "false"), shape(4, 16, 4096, 128, "fp16", "true"),
                     shape(4, 16, 4096, 64, "fp16", "false")}};
  axes::SuiteAxes f{full,
                    {{"backend", "naive,flash,cudnn"}, {"dtype", "fp16,bf16"}, {"batch", "4"}, {"heads", "16"},
                     {"seq_q", "2^[9:14]"}, {"head_dim", "64,128"}, {"causal", "false,true"}},
                    {}};
  const auto with_backends = [](axes::Values v) {  // v.front(): the dtype
    std::vector<std::string> bs;
    for (const Backend& b : backends())
      if (!b.only || to_string(*b.only) == v.front().second) bs.emplace_back(b.name);
    v.insert(v.begin(), {"backend", value_list(bs)});
    return v;
  };
  for (const std::string t : {"fp16", "bf16"})
    for (auto [b, h, sq, d] : {std::array<int, 4>{8, 16, 1024, 64}, {4, 16, 4096, 64}, {4, 16, 4096, 128},
                               {1, 32, 16384, 128}, {16, 16, 512, 64}})
      for (const std::string c : {"false", "true"}) f.sets.push_back(with_backends(shape(b, h, sq, d, t, c)));
  for (const std::string c : {"false", "true"}) {
    f.sets.push_back(with_backends(shape(4, 16, 4096, 256, "fp16", c)));
  }
  for (const std::string c : {"false", "true"}) f.sets.push_back(with_backends(shape(4, 32, 4096, 128, "fp16", c, 8)));
  for (int sq : {1, 128}) f.sets.push_back(with_backends(shape(8, 32, sq, 128, "fp16", "false", 8, 8192)));
  return {std::string(contract::family::attention),
          {{"backend", Kind::word, "naive (GEMM, softmax, GEMM), our flash kernels, cuDNN SDPA", names, 1, 1},
           {"dtype", Kind::dtype, "Q, K, V and O", {"fp16", "bf16"}, 1, 1},
           {"batch", Kind::integer, "batch", {}, 1, kMax},
           {"heads", Kind::integer, "query heads", {}, 1, kMax},
           {"kv_heads", Kind::integer, "key/value heads", {}, 1, kMax, "heads"},
           {"seq_q", Kind::integer, "queries per sequence", {}, 1, 1 << 30},
           {"seq_k", Kind::integer, "keys per sequence", {}, 1, 1 << 30, "seq_q"},
           {"head_dim", Kind::integer, "per head", {}, 1, 1024},
           {"causal", Kind::boolean, "a causal (bottom-right aligned) mask", {}, 0, 1}},
          {q, f}};
}

// Why a case of the user's axes cannot run here, before any device: nullopt when it can. (The
// device may still refuse: a kernel's compute capability, cuDNN's engines, free memory.)
inline std::optional<std::string> unrunnable(const Case& c) {
  const Shape& s = c.config.shape;
  const std::string_view b = c.backend->name;
  if (c.backend->only && *c.backend->only != c.config.dtype)
    return std::string(b) + " runs " + std::string(to_string(*c.backend->only)) + " only";
  if (s.kv_heads() > s.h || s.h % s.kv_heads() != 0)
    return "kv_heads " + std::to_string(s.kv_heads()) + " must divide heads " + std::to_string(s.h);
  if (c.config.causal && s.s > s.seq_k()) return "causal needs seq_q <= seq_k (a bottom-right aligned mask)";
  if (b.starts_with("flash") && s.d != 64 && s.d != 128 && s.d != 256)
    return "our flash kernels are built for head_dim 64, 128 and 256 (got " + std::to_string(s.d) + ")";
  // `flash` at 256 is left to the device: the hopper kernel runs it, mma_sync (what
  // `automatic` picks off Hopper) does not, and the library says so (a skip with its reason).
  if (b == "flash_mma_sync" && s.d == 256)
    return "flash_mma_sync is built for head_dim 64 and 128 (head_dim 256 runs on the hopper kernels only)";
  return std::nullopt;
}

// A suite's cases (or the user's points), in order (a backend that has one dtype only is
// still a user's case: registered skipped, with why).
inline std::vector<Case> cases(Suite s, const std::vector<axes::Point>* user) {
  std::vector<Case> out;
  for (const axes::Point& p : points_of(model(), s, user)) {
    const auto n = [&p](std::string_view a) { return static_cast<int>(p.n(a)); };
    Shape sh{n("batch"), n("heads"), n("seq_q"), n("head_dim"), n("kv_heads"), n("seq_k")};
    const Config c{sh, *parse_dtype(p.text("dtype")), p.n("causal") != 0};
    for (const Backend& b : backends())
      if (b.name == p.text("backend")) out.push_back({c, &b});
  }
  return out;
}

}  // namespace gpucheck::attention
