// Checks a benchmark binary's Google Benchmark JSON: every case named family/variant/dtype/
// shape under the expected family, no errors, the listed counters present, finite and
// positive, the listed context keys known, and the device context's VALUES plausible: NVML
// loaded, clocks, power limit, PCIe link and temperature numbers in the ranges a real GPU
// reports (a broken NVML binding writes "unknown" and fails here), and the figures against
// ranges a broken measurement cannot meet (smoke_ranges.hpp: GEMMs against the datasheet of
// the GPU the results name, the 2 GiB copies against HBM, empty launches under 50 us). Usage:
//   gpu_json_check FILE --family NAME [--counter C]... [--context KEY]... [--min-cases N] [--specs FILE]
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gpucheck/core/args.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/json_text.hpp"
#include "gpucheck/core/specs.hpp"
#include "smoke_ranges.hpp"

namespace ctr = gpucheck::contract::counter;

int main(int argc, char** argv) {
  static const char* kUsage =
      "usage: gpu_json_check FILE --family NAME [--counter C]... [--context KEY]... [--min-cases N] [--specs FILE]\n";
  const gpucheck::args::OptionSet flags{{"--family", "--min-cases", "--specs"}, {}, {"--counter", "--context"}};
  gpucheck::args::Parsed a;
  gpucheck::args::ParseError perr;
  if (!gpucheck::args::parse(gpucheck::args::from_argv(argc, argv), flags, &a, &perr) || a.positional.size() != 1) {
    if (!perr.message.empty()) std::fprintf(stderr, "gpu_json_check: %s\n", perr.str().c_str());
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string file = a.positional.front(), family = a.value("--family").value_or("");
  const std::vector<std::string> counters = a.list("--counter"), context_keys = a.list("--context");
  long min_cases = 1;
  if (const auto m = a.value("--min-cases")) {
    const auto v = gpucheck::args::to_integer(*m);
    if (!v || *v < 0) {
      std::fprintf(stderr, "gpu_json_check: --min-cases wants a count, got '%s'\n", m->c_str());
      return 2;
    }
    min_cases = static_cast<long>(*v);
  }
  std::ifstream in(file);
  if (!in) {
    std::printf("FAIL: %s: cannot open\n", file.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  // Google Benchmark writes bare NaN/Infinity: made strings so they parse (and fail below).
  const std::string text = gpucheck::quote_non_finite(ss.str());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    std::printf("FAIL: %s: not JSON: %s\n", file.c_str(), e.what());
    return 1;
  }
  int failures = 0;
  auto fail = [&](const std::string& m) {
    std::printf("FAIL: %s\n", m.c_str());
    ++failures;
  };
  const auto& ctx = j.value("context", nlohmann::json::object());
  std::vector<std::string> known{"gpu_name",    "gpu_uuid",        "gpu_cc",          "gpu_sms",       "gpu_memory_MiB",
                                 "gpu_l2_MiB",  "driver_version",  "cuda_runtime",    "cuda_driver_api", "gpucheck_commit",
                                 "gpucheck_suite", "host_cpu",     "ecc",             "throttle_reasons"};
  known.insert(known.end(), context_keys.begin(), context_keys.end());
  for (const auto& key : known) {
    if (!ctx.contains(key) || !ctx[key].is_string() || ctx[key] == "unknown" || ctx[key] == "")
      fail("context." + key + " missing or unknown");
  }
  if (ctx.value("nvml", std::string()) != "loaded") fail("context.nvml: " + ctx.value("nvml", std::string("missing")));
  // Numbers a real GPU reports, in ranges that catch a broken binding (0, garbage, "unknown").
  auto in_range = [&](const char* key, double lo, double hi) {
    const std::string v = ctx.value(key, std::string("missing"));
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end == v.c_str() || *end != '\0' || !(x >= lo && x <= hi))
      fail(std::string("context.") + key + " = \"" + v + "\" is not a number in [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]");
  };
  in_range("sm_clock_MHz", 100, 4000);
  in_range("sm_clock_max_MHz", 300, 4000);
  in_range("mem_clock_max_MHz", 300, 20000);
  in_range("power_limit_W", 20, 2000);
  in_range("temperature_C", 5, 110);
  in_range("pcie_gen_current", 1, 6);
  in_range("pcie_gen_max", 1, 6);
  in_range("pcie_width_current", 1, 32);
  in_range("pcie_width_max", 1, 32);
  {
    const std::string d = ctx.value("driver_version", std::string());
    if (d.find('.') == std::string::npos || !std::isdigit(static_cast<unsigned char>(d.empty() ? 'x' : d[0])))
      fail("context.driver_version = \"" + d + "\" is not a driver version");
  }
  long cases = 0;
  for (const auto& b : j.value("benchmarks", nlohmann::json::array())) {
    const std::string name = b.value("name", "");
    ++cases;
    if (name.rfind(family + "/", 0) != 0) fail(name + ": not in family " + family);
    if (std::count(name.begin(), name.end(), '/') < 3) fail(name + ": not family/variant/dtype/shape");
    if (b.value("error_occurred", false) || b.contains("error_message"))
      fail(name + ": " + b.value("error_message", std::string("error")));
    if (b.value("skipped", false)) fail(name + ": skipped");
    // Every case carries the engine's noise figures.
    for (const char* k : {ctr::samples, ctr::cv_pct})
      if (!b.contains(k) || !b[k].is_number() || !std::isfinite(b[k].get<double>()) || b[k].get<double>() < 0)
        fail(name + ": counter " + k + " missing or not a finite number >= 0");
    const auto& t = b.value("real_time", nlohmann::json());
    if (!t.is_number() || !(t.get<double>() > 0)) fail(name + ": real_time not positive");
    for (const auto& c : counters) {
      if (!b.contains(c)) {
        // pct_of_peak is absent on SKUs with no datasheet entry; every other counter is required.
        if (c != ctr::pct_of_peak || ctx.value("gpu_sku", "unknown") != "unknown") fail(name + ": counter " + c + " missing");
        continue;
      }
      if (!b[c].is_number() || !std::isfinite(b[c].get<double>()) || !(b[c].get<double>() > 0))
        fail(name + ": counter " + c + " = " + b[c].dump() + " is not finite and positive");
    }
    std::printf("%-60s %12.3f %s", name.c_str(), t.is_number() ? t.get<double>() : 0.0, b.value("time_unit", "").c_str());
    for (const auto& c : counters)
      if (b.contains(c) && b[c].is_number()) std::printf("  %s=%.2f", c.c_str(), b[c].get<double>());
    std::printf("\n");
  }
  if (cases < min_cases) fail("only " + std::to_string(cases) + " cases");
  // Values against ranges a broken measurement cannot meet (smoke_ranges.hpp).
  {
    std::vector<gpucheck::smoke::Figure> figures;
    for (const auto& b : j.value("benchmarks", nlohmann::json::array())) {
      if (b.value("run_type", std::string("iteration")) == "aggregate") continue;
      gpucheck::smoke::Figure f{b.value("name", ""), {}};
      for (const auto& [k, v] : b.items())
        if (v.is_number()) f.counters[k] = v.get<double>();
        else if (v.is_string() && gpucheck::contract::counter_info(k))  // a quoted NaN/Infinity
          f.counters[k] = std::strtod(v.get<std::string>().c_str(), nullptr);
      figures.push_back(std::move(f));
    }
    const std::string gpu = ctx.value("gpu_name", std::string("?"));
    gpucheck::SpecDb specs;
    const gpucheck::SkuSpec* sku = nullptr;
    bool have_specs = false;
    if (const auto path = a.value("--specs")) {
      std::string err;
      if (!gpucheck::SpecDb::load(*path, &specs, &err)) fail("specs: " + err);
      else {
        have_specs = true;
        sku = specs.lookup(gpu);
      }
    }
    for (const auto& c : gpucheck::smoke::check_ranges(figures, sku, gpu)) {
      using gpucheck::smoke::Verdict;
      if (c.verdict == Verdict::fail) fail(c.name + ": " + c.why);
      else if (c.verdict == Verdict::skipped)
        std::printf("SKIP range: %s: %s\n", c.name.c_str(), have_specs ? c.why.c_str() : "no --specs file given");
      else
        std::printf("range ok: %s %s=%.4g %s %.4g\n", c.name.c_str(), c.counter.c_str(), c.value, c.at_least ? ">" : "<",
                    c.bound);
    }
  }
  std::printf("%s: %ld cases, %d failures (gpu %s, driver %s)\n", failures ? "FAIL" : "PASS", cases, failures,
              ctx.value("gpu_name", std::string("?")).c_str(), ctx.value("driver_version", std::string("?")).c_str());
  return failures ? 1 : 0;
}
