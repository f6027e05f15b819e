// Checks a benchmark binary's Google Benchmark JSON: every case named family/variant/dtype/
// shape under the expected family, no errors, the listed counters present, finite and
// positive, the listed context keys known, and the device context's VALUES plausible: NVML
// loaded, clocks, power limit, PCIe link and temperature numbers in the ranges a real GPU
// reports (a broken NVML binding writes "unknown" and fails here). Usage:
//   gpu_json_check FILE --family NAME [--counter C]... [--context KEY]... [--min-cases N]
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_json_check FILE --family NAME [--counter C]... [--min-cases N]\n");
    return 2;
  }
  std::string file = argv[1], family;
  std::vector<std::string> counters, context_keys;
  long min_cases = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--family") family = argv[i + 1];
    else if (f == "--counter") counters.emplace_back(argv[i + 1]);
    else if (f == "--context") context_keys.emplace_back(argv[i + 1]);
    else if (f == "--min-cases") min_cases = std::stol(argv[i + 1]);
    else {
      std::fprintf(stderr, "gpu_json_check: unknown flag %s\n", f.c_str());
      return 2;
    }
  }
  std::ifstream in(file);
  if (!in) {
    std::printf("FAIL: %s: cannot open\n", file.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // Google Benchmark writes bare NaN/Infinity: make them strings so they parse (and fail below).
  for (const char* tok : {"-Infinity", "Infinity", "NaN"}) {
    for (std::size_t p = text.find(tok); p != std::string::npos; p = text.find(tok, p + 2)) {
      if (p > 0 && text[p - 1] == '"') continue;
      text.replace(p, std::strlen(tok), std::string("\"") + tok + "\"");
    }
  }
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
    for (const char* k : {"samples", "cv_pct"})
      if (!b.contains(k) || !b[k].is_number() || !std::isfinite(b[k].get<double>()) || b[k].get<double>() < 0)
        fail(name + ": counter " + k + " missing or not a finite number >= 0");
    const auto& t = b.value("real_time", nlohmann::json());
    if (!t.is_number() || !(t.get<double>() > 0)) fail(name + ": real_time not positive");
    for (const auto& c : counters) {
      if (!b.contains(c)) {
        // pct_of_peak is absent on SKUs with no datasheet entry; every other counter is required.
        if (c != "pct_of_peak" || ctx.value("gpu_sku", "unknown") != "unknown") fail(name + ": counter " + c + " missing");
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
  std::printf("%s: %ld cases, %d failures (gpu %s, driver %s)\n", failures ? "FAIL" : "PASS", cases, failures,
              ctx.value("gpu_name", std::string("?")).c_str(), ctx.value("driver_version", std::string("?")).c_str());
  return failures ? 1 : 0;
}
