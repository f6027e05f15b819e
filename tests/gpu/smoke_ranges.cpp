#include "smoke_ranges.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/names.hpp"

namespace gpucheck::smoke {
namespace {

namespace seg = contract::segment;
namespace ctr = contract::counter;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The bound a figure is held to, or why it has none here.
struct Bound {
  std::string counter;
  std::optional<double> bound;
  bool at_least = true;
  std::string what;  // "50% of the bf16 peak (989.4 TFLOP/s)"
  std::string why_none;
};

std::optional<Bound> bound_for(const std::string& name, const SkuSpec* sku, std::string_view gpu) {
  const std::vector<std::string> p = split_name(name);
  const std::string no_sku = "no datasheet for " + std::string(gpu) + " in specs.json";
  const std::int64_t A = contract::kAcceptGemmSize;
  if (p.size() == 4 && p[0] == contract::family::matmul && (p[1] == seg::cublaslt || p[1] == seg::cublaslt_sustained) &&
      p[3] == shape_mnk(A, A, A)) {
    Bound b{ctr::TFLOPS, std::nullopt, true, "", ""};
    const std::optional<DType> t = parse_dtype(p[2]);
    const std::optional<double> peak = sku && t ? sku->peak(*t) : std::nullopt;
    if (!sku) b.why_none = no_sku;
    else if (!peak) b.why_none = sku->id + " has no " + p[2] + " peak in specs.json";
    else {
      b.bound = kMinFractionOfPeak * *peak;
      b.what = num(100 * kMinFractionOfPeak) + "% of the " + p[2] + " peak (" + num(*peak) + " TFLOP/s)";
    }
    return b;
  }
  for (std::string_view v : contract::kAcceptMemoryVariants)
    if (name == contract::accept_memory_name(v)) {
      Bound b{ctr::GBps, std::nullopt, true, "", ""};
      if (!sku) b.why_none = no_sku;
      else if (!(sku->memory_GBps > 0)) b.why_none = sku->id + " has no memory bandwidth in specs.json";
      else {
        b.bound = kMinFractionOfHbm * sku->memory_GBps;
        b.what = num(100 * kMinFractionOfHbm) + "% of HBM (" + num(sku->memory_GBps) + " GB/s)";
      }
      return b;
    }
  if (p.size() == 4 && p[0] == contract::family::launch && p[2] == "empty")
    return Bound{ctr::us_per_launch, kMaxEmptyLaunchUs, false, num(kMaxEmptyLaunchUs) + " us", ""};
  return std::nullopt;
}

}  // namespace

std::string registered_name(std::string_view reported) {
  std::string out;
  for (const std::string& part : split_name(reported)) {
    if (part.find(':') != std::string::npos || part == "manual_time" || part == "real_time") break;
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

std::vector<RangeCheck> check_ranges(const std::vector<Figure>& figures, const SkuSpec* sku, std::string_view gpu_name) {
  std::vector<RangeCheck> out;
  for (const Figure& f : figures) {
    const std::string name = registered_name(f.name);
    const std::optional<Bound> b = bound_for(name, sku, gpu_name);
    if (!b) continue;
    RangeCheck c;
    c.name = name;
    c.counter = b->counter;
    c.at_least = b->at_least;
    const auto it = f.counters.find(b->counter);
    if (!b->bound) {
      c.verdict = Verdict::skipped;
      c.why = b->why_none;
    } else if (it == f.counters.end()) {
      c.verdict = Verdict::fail;
      c.why = "counter " + b->counter + " missing";
    } else {
      c.value = it->second;
      c.bound = *b->bound;
      const bool ok = b->at_least ? c.value > c.bound : c.value < c.bound;  // NaN fails both
      c.verdict = ok ? Verdict::pass : Verdict::fail;
      if (!ok) c.why = b->counter + " = " + num(c.value) + (b->at_least ? " is not above " : " is not under ") + b->what;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace gpucheck::smoke
