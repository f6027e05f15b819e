#include "gpucheck/core/options.hpp"

#include <cstdlib>
#include <unistd.h>
#include <set>
#include <string_view>
#include <vector>

#include "gpucheck/core/args.hpp"
#include "gpucheck/core/text.hpp"

namespace gpucheck {

std::string_view to_string(Suite s) {
  switch (s) {
    case Suite::quick: return "quick";
    case Suite::full: return "full";
    case Suite::accept: return "accept";
    case Suite::burn: return "burn";
    case Suite::llm: return "llm";
  }
  return "?";
}

std::optional<Suite> parse_suite(std::string_view s) {
  for (Suite x : {Suite::quick, Suite::full, Suite::accept, Suite::burn, Suite::llm})
    if (to_string(x) == s) return x;
  return std::nullopt;
}

const args::OptionSet& option_set() {
  // Unknown arguments are passed on in order: a family's own flags, then Google Benchmark's.
  static const args::OptionSet o{{"--device", "--suite", "--burn-seconds", "--specs", "--format", "-b", "-e", "-f"},
                                 {"--help", "-h", "--list"},
                                 {"--axis", "-a"},
                                 {},
                                 {"--help", "-h"},
                                 /*pass_unknown=*/true,
                                 /*last_wins=*/true,
                                 /*aliases=*/{{"-d", "--device"}}};
  return o;
}

bool parse_options(int* argc, char** argv, Options* out, std::string* err) {
  const std::vector<std::string> in = args::from_argv(*argc, argv);
  args::Parsed p;
  args::ParseError e;
  if (!args::parse(in, option_set(), &p, &e)) {
    *err = e.str();
    return false;
  }
  Options o;
  if (const auto v = p.value("--device")) {
    const auto d = args::to_integer(*v);
    if (!d || *d < 0 || *d > 1 << 20) {
      *err = "--device wants a device index (0, 1, ...), got '" + visible_excerpt(*v) + "'";
      return false;
    }
    o.device = static_cast<int>(*d);
  }
  if (const auto v = p.value("--suite")) {
    const std::optional<Suite> suite = parse_suite(*v);
    if (!suite) {
      *err = "--suite wants quick, full, accept, burn or llm, got '" + visible_excerpt(*v) + "'";
      return false;
    }
    o.suite = *suite;
  }
  if (const auto v = p.value("--burn-seconds")) {
    const auto sec = args::to_number(*v);
    if (!sec || !(*sec > 0) || *sec > 86400) {
      *err = "--burn-seconds wants seconds in (0, 86400], got '" + visible_excerpt(*v) + "'";
      return false;
    }
    o.burn_seconds = *sec;
  }
  if (const auto v = p.value("--specs")) {
    if (v->empty()) {
      *err = "--specs needs a file";
      return false;
    }
    o.specs_path = *v;
  }
  if (const auto v = p.value("--format")) {
    if (*v != "json" && *v != "text") {
      *err = "--format wants text or json, got '" + visible_excerpt(*v) + "'";
      return false;
    }
    o.json = *v == "json";
  }
  for (const char* opt : {"--axis", "-a"})
    for (const std::string& a : p.list(opt)) o.axes.push_back(a);
  o.bytes_min = p.value("-b").value_or("");
  o.bytes_max = p.value("-e").value_or("");
  o.bytes_factor = p.value("-f").value_or("");
  if (o.bytes_min.empty() && (!o.bytes_max.empty() || !o.bytes_factor.empty())) {
    *err = std::string(o.bytes_max.empty() ? "-f" : "-e") + " needs -b MIN (nccl-tests' -b MIN -e MAX -f FACTOR)";
    return false;
  }
  o.list = p.flag("--list");
  o.help = p.flag("--help") || p.flag("-h");  // passed on: Google Benchmark prints its part too
  args::keep_passed(argc, argv, p);
  *out = o;
  return true;
}

bool check_passed_arguments(int argc, char** argv, const std::vector<std::string>& family_options, std::string* err) {
  args::OptionSet gbench{{}, {"--help", "-h"}, {}, {"--benchmark_", "--v="}};
  // Suggestions only: these were parsed before (ours) or by the family.
  for (const auto& names : {option_set().with_value, std::set<std::string>(family_options.begin(), family_options.end())})
    gbench.flags.insert(names.begin(), names.end());
  const std::vector<std::string> in = args::from_argv(argc, argv);
  args::Parsed p;
  args::ParseError e;
  if (args::parse(in, gbench, &p, &e) && p.positional.empty()) return true;
  *err = p.positional.empty() ? e.str() : "unexpected argument '" + visible_excerpt(p.positional.front()) + "'";
  return false;
}

std::string options_help(std::string_view program) {
  return std::string(program) +
         " [gpucheck flags] [Google Benchmark flags]\n"
         "gpucheck flags:\n"
         "  -a, --axis NAME=VALUES  set an axis (repeatable): a list 1024,4096, a range [start:stop:step],\n"
         "                      powers of two 2^[10:14] or NAME[pow2]=[10:14], sizes 4KiB 8GiB, dtypes\n"
         "                      by name; the axes multiply into cases (names as the suite's)\n"
         "  --list              print the cases and exit (no GPU needed: without one, the\n"
         "                      reference GPU's defaults, an H200, one GPU); also --benchmark_list_tests\n"
         "  --format json       with --list: the cases with their axes, for scripts\n"
         "  -d, --device N      CUDA device index to measure (default 0)\n"
         "  --suite S           quick: a representative handful (default); full: the sweeps;\n"
         "                      accept: what `gpucheck accept` judges; burn: sustained checked load;\n"
         "                      llm: Llama-3 8B/70B projection GEMMs (bench_matmul)\n"
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
