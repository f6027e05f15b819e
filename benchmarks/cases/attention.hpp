// bench_attention's tables: problem configurations and backends, each row with the suites it
// belongs to; a case is a configuration and a backend that share the suite (and the dtype,
// for a backend that has only one). Pure: the binary hands in how to make each backend's op.
#pragma once
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/options.hpp"

namespace gpucheck::attention {

struct Shape {
  int b, h, s, d;
};

inline std::string shape_label(const Shape& s) {
  char buf[64];  // (snprintf: g++ 12 misreports -Wrestrict on a chain of string + to_string)
  std::snprintf(buf, sizeof buf, "b%dh%ds%dd%d", s.b, s.h, s.s, s.d);
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

}  // namespace gpucheck::attention
