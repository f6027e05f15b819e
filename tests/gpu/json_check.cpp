// Checks a benchmark binary's Google Benchmark JSON: every case named family/variant/dtype/
// shape under the expected family, no errors, the listed counters present, finite and
// positive, and the device context filled. Usage:
//   gpu_json_check FILE --family NAME [--counter C]... [--min-cases N]
#include <algorithm>
#include <cmath>
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
  std::vector<std::string> counters;
  long min_cases = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    if (f == "--family") family = argv[i + 1];
    else if (f == "--counter") counters.emplace_back(argv[i + 1]);
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
  for (const char* key : {"gpu_name", "gpu_uuid", "gpu_cc", "gpu_sms", "gpu_memory_MiB", "gpu_l2_MiB", "driver_version",
                          "cuda_runtime", "cuda_driver_api", "cublas_version", "cudnn_version", "nccl_version",
                          "gpucheck_commit", "gpucheck_suite"}) {
    if (!ctx.contains(key) || !ctx[key].is_string() || ctx[key] == "unknown" || ctx[key] == "")
      fail(std::string("context.") + key + " missing or unknown");
  }
  for (const char* key : {"sm_clock_MHz", "mem_clock_MHz", "power_limit_W", "pcie_gen_current", "pcie_width_current",
                          "ecc", "throttle_reasons"})
    if (!ctx.contains(key)) fail(std::string("context.") + key + " missing");
  long cases = 0;
  for (const auto& b : j.value("benchmarks", nlohmann::json::array())) {
    const std::string name = b.value("name", "");
    ++cases;
    if (name.rfind(family + "/", 0) != 0) fail(name + ": not in family " + family);
    if (std::count(name.begin(), name.end(), '/') < 3) fail(name + ": not family/variant/dtype/shape");
    if (b.value("error_occurred", false) || b.contains("error_message"))
      fail(name + ": " + b.value("error_message", std::string("error")));
    if (b.value("skipped", false)) fail(name + ": skipped");
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
