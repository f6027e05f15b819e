#include "gpucheck/core/options.hpp"

#include <charconv>
#include <cstdlib>
#include <unistd.h>
#include <string_view>
#include <vector>

namespace gpucheck {

std::string_view to_string(Suite s) {
  switch (s) {
    case Suite::quick: return "quick";
    case Suite::full: return "full";
    case Suite::accept: return "accept";
    case Suite::burn: return "burn";
  }
  return "?";
}

std::optional<Suite> parse_suite(std::string_view s) {
  for (Suite x : {Suite::quick, Suite::full, Suite::accept, Suite::burn})
    if (to_string(x) == s) return x;
  return std::nullopt;
}

namespace {
// Matches `--name value` or `--name=value`; advances *i past what it consumed.
bool take_value(int argc, char** argv, int* i, std::string_view name, std::string* value,
                bool* matched, std::string* err) {
  std::string_view a = argv[*i];
  *matched = false;
  if (a == name) {
    *matched = true;
    if (*i + 1 >= argc) {
      *err = std::string(name) + " needs a value";
      return false;
    }
    *value = argv[++*i];
    return true;
  }
  if (a.size() > name.size() && a.substr(0, name.size()) == name && a[name.size()] == '=') {
    *matched = true;
    *value = std::string(a.substr(name.size() + 1));
    return true;
  }
  return true;
}
}  // namespace

bool parse_options(int* argc, char** argv, Options* out, std::string* err) {
  Options o;
  std::vector<char*> keep;
  keep.push_back(argv[0]);
  for (int i = 1; i < *argc; ++i) {
    std::string value;
    bool matched = false;
    if (!take_value(*argc, argv, &i, "--device", &value, &matched, err)) return false;
    if (matched) {
      int d = -1;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
      if (ec != std::errc() || p != value.data() + value.size() || d < 0) {
        *err = "--device wants a device index (0, 1, ...), got '" + value + "'";
        return false;
      }
      o.device = d;
      continue;
    }
    if (!take_value(*argc, argv, &i, "--suite", &value, &matched, err)) return false;
    if (matched) {
      const std::optional<Suite> suite = parse_suite(value);
      if (!suite) {
        *err = "--suite wants quick, full, accept or burn, got '" + value + "'";
        return false;
      }
      o.suite = *suite;
      continue;
    }
    if (!take_value(*argc, argv, &i, "--burn-seconds", &value, &matched, err)) return false;
    if (matched) {
      double sec = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), sec);
      if (ec != std::errc() || p != value.data() + value.size() || !(sec > 0) || sec > 86400) {
        *err = "--burn-seconds wants seconds in (0, 86400], got '" + value + "'";
        return false;
      }
      o.burn_seconds = sec;
      continue;
    }
    if (!take_value(*argc, argv, &i, "--specs", &value, &matched, err)) return false;
    if (matched) {
      if (value.empty()) {
        *err = "--specs needs a file";
        return false;
      }
      o.specs_path = value;
      continue;
    }
    std::string_view a = argv[i];
    if (a == "--help" || a == "-h") o.help = true;  // Google Benchmark prints its part too
    keep.push_back(argv[i]);
  }
  for (std::size_t j = 0; j < keep.size(); ++j) argv[j] = keep[j];
  *argc = static_cast<int>(keep.size());
  argv[*argc] = nullptr;
  *out = o;
  return true;
}

std::string options_help(std::string_view program) {
  return std::string(program) +
         " [gpucheck flags] [Google Benchmark flags]\n"
         "gpucheck flags:\n"
         "  --device N          CUDA device index to measure (default 0)\n"
         "  --suite S           quick: a representative handful (default); full: the sweeps;\n"
         "                      accept: what `gpucheck accept` judges; burn: sustained checked load\n"
         "  --burn-seconds S    length of the burn suite's load (default 60)\n"
         "  --specs FILE        SKU datasheet figures (default $GPUCHECK_SPECS, else\n"
         "                      share/gpucheck/specs.json beside the binary's folder)\n"
         "Useful Google Benchmark flags: --benchmark_filter=REGEX --benchmark_out=FILE\n"
         "  --benchmark_out_format=json --benchmark_repetitions=N --benchmark_min_time=SECONDS\n";
}

std::string executable_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string path(buf, static_cast<std::size_t>(n));
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string resolve_specs_path(const Options& o) {
  if (!o.specs_path.empty()) return o.specs_path;
  if (const char* env = std::getenv("GPUCHECK_SPECS"); env && *env) return env;
  const std::string dir = executable_dir();
  return (dir.empty() ? std::string(".") : dir) + "/../share/gpucheck/specs.json";
}

}  // namespace gpucheck
