// bench_attention's tables: problem configurations and backends, each row with the suites it
// belongs to; a case is a configuration and a backend that share the suite (and the dtype,
// for a backend that has only one). Pure: the binary hands in how to make each backend's op.
#pragma once
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
  Suites suites;
};

inline std::vector<Config> configs() {
  using enum Suite;
  std::vector<Config> c;
  for (bool causal : {false, true}) c.push_back({Shape{4, 16, 4096, 128}, DType::fp16, causal, {quick}});
  c.push_back({Shape{4, 16, 4096, 64}, DType::fp16, false, {quick}});
  for (DType t : {DType::fp16, DType::bf16})
    for (Shape s : {Shape{8, 16, 1024, 64}, Shape{4, 16, 4096, 64}, Shape{4, 16, 4096, 128}, Shape{1, 32, 16384, 128},
                    Shape{16, 16, 512, 64}})
      for (bool causal : {false, true}) c.push_back({s, t, causal, {full}});
  // The shapes of current models (issue 22), fp16: head dim 256 (Gemma), grouped-query K/V
  // (Llama's 32 query heads over 8 K/V heads) and decode-length queries over a long K/V
  // cache (one token, and a 128-token chunk, against 8192 keys). After the rows above, so
  // that their names and order stay as the stored baselines know them.
  for (Shape s : {Shape{4, 16, 4096, 256}, Shape{4, 32, 4096, 128, 8}})
    for (bool causal : {false, true}) c.push_back({s, DType::fp16, causal, {full}});
  for (int sq : {1, 128}) c.push_back({Shape{8, 32, sq, 128, 8, 8192}, DType::fp16, false, {full}});
  return c;  // acceptance and burn-in run other families
}

template <class Make>
struct Backend {
  std::string_view name;
  Suites suites;
  std::optional<DType> only;     // nullopt: every dtype; else only this input dtype has the row
  std::optional<DType> naive_s;  // a naive row's S dtype (its GBps counts S's bytes); nullopt when fused
  Make make;
};

template <class Make>
std::vector<Backend<Make>> backends(Make naive, Make flash, Make cudnn, Make flash_mma_sync, Make flash_hopper_serial,
                                    Make flash_hopper) {
  using enum Suite;
  namespace seg = contract::segment;
  return {
      {seg::naive, {quick, full}, std::nullopt, DType::fp32, naive},
      {seg::flash, {quick, full}, std::nullopt, std::nullopt, flash},
      {seg::cudnn, {quick, full}, std::nullopt, std::nullopt, cudnn},
      {"naive_s16", {full}, DType::fp16, DType::fp16, naive},
      {"flash_mma_sync", {full}, std::nullopt, std::nullopt, flash_mma_sync},
      {"flash_hopper_serial", {full}, std::nullopt, std::nullopt, flash_hopper_serial},
      {"flash_hopper", {full}, std::nullopt, std::nullopt, flash_hopper},
  };
}

template <class Make>
bool pairs(const Config& c, const Backend<Make>& b, Suite s) {
  return c.suites.has(s) && b.suites.has(s) && (!b.only || *b.only == c.dtype);
}

template <class Make>
std::string case_name(const Config& c, const Backend<Make>& b) {
  namespace fam = contract::family;
  return c.causal ? bench_name({fam::attention, b.name, to_string(c.dtype), shape_label(c.shape), "causal"})
                  : bench_name({fam::attention, b.name, to_string(c.dtype), shape_label(c.shape)});
}

template <class Make>
struct Case {
  Config config;
  const Backend<Make>* backend;
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

// The axes --axis sets; kv_heads follows heads and seq_k follows seq_q unless given.
inline std::vector<axes::Axis> axis_table() {
  using axes::Kind;
  std::vector<std::string> names;
  for (const auto& b : backends(0, 0, 0, 0, 0, 0)) names.emplace_back(b.name);
  constexpr int kMax = 1 << 20;
  return {
      {"backend", Kind::word, "naive (GEMM, softmax, GEMM), our flash kernels, cuDNN SDPA", names, 1, 1,
       "naive,flash,cudnn", "naive,flash,cudnn"},
      {"dtype", Kind::dtype, "Q, K, V and O", {"fp16", "bf16"}, 1, 1, "fp16", "fp16,bf16"},
      {"batch", Kind::integer, "batch", {}, 1, kMax, "4", "4"},
      {"heads", Kind::integer, "query heads", {}, 1, kMax, "16", "16"},
      {"kv_heads", Kind::integer, "key/value heads", {}, 1, kMax, "", "", "heads"},
      {"seq_q", Kind::integer, "queries per sequence", {}, 1, 1 << 30, "4096", "2^[9:14]"},
      {"seq_k", Kind::integer, "keys per sequence", {}, 1, 1 << 30, "", "", "seq_q"},
      {"head_dim", Kind::integer, "per head", {}, 1, 1024, "128", "64,128"},
      {"causal", Kind::boolean, "a causal (bottom-right aligned) mask", {}, 0, 1, "false", "false,true"},
  };
}

// Why a case of the user's axes cannot run here, before any device: nullopt when it can. (The
// device may still refuse: a kernel's compute capability, cuDNN's engines, free memory.)
template <class Make>
std::optional<std::string> unrunnable(const Case<Make>& c) {
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

// A suite's cases, in order: the configurations and backends that pair in it, or the axes'
// points (a backend that has one dtype only is still a case: registered skipped, with why).
template <class Make>
std::vector<Case<Make>> cases(const std::vector<Backend<Make>>& bs, Suite s, const std::vector<axes::Point>* points) {
  std::vector<Case<Make>> out;
  if (!points) {
    for (const Config& c : configs())
      for (const auto& b : bs)
        if (pairs(c, b, s)) out.push_back({c, &b});
    return out;
  }
  for (const axes::Point& p : *points) {
    const auto n = [&p](std::string_view a) { return static_cast<int>(p.n(a)); };
    Shape sh{n("batch"), n("heads"), n("seq_q"), n("head_dim"), n("kv_heads"), n("seq_k")};
    const Config c{sh, *parse_dtype(p.text("dtype")), p.n("causal") != 0, {s}};
    for (const auto& b : bs)
      if (b.name == p.text("backend")) out.push_back({c, &b});
  }
  return out;
}

}  // namespace gpucheck::attention
