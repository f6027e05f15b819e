#include "gpucheck/harness/main.hpp"

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpucheck/core/environment.hpp"
#include "gpucheck/core/options.hpp"
#include "gpucheck/core/output.hpp"
#include "gpucheck/core/specs.hpp"
#include "gpucheck/core/text.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/check_cuda.hpp"
#include "gpucheck/harness/registry.hpp"

namespace gpucheck::harness {
namespace {

// The one error line of a binary that cannot run: "gpucheck: " and the reason, with control
// characters escaped (an argument's escape sequence never reaches the terminal raw); exit 2.
int bad_input(const std::string& why) {
  std::fprintf(stderr, "gpucheck: %s\n", visible_text(why).c_str());
  return 2;
}

// Console output for processes that should print nothing (MPI ranks other than 0).
class NullReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

// Google Benchmark writes --benchmark_out as it goes; a killed run would leave a truncated
// file that a later compare trips on. So it writes elsewhere and the output is put in place
// once every case ran (gpucheck/core/output.hpp): a regular file (or a new one) through its
// temp `.NAME.tmp-PID` beside it, flushed and renamed; standard output (`-`), a FIFO or a
// character device through a private temp whose bytes are then written to it in place.
class OutputFile {
 public:
  // Rewrites --benchmark_out=FILE in argv to the file Google Benchmark is to write. False
  // with a reason when FILE cannot be an output (a folder, a block device, a dangling link).
  bool take(int argc, char** argv, std::string* err) {
    constexpr std::string_view flag = "--benchmark_out=";
    for (int i = 1; i < argc; ++i) {
      const std::string_view a = argv[i];
      if (a.substr(0, flag.size()) != flag || a.size() == flag.size()) continue;
      final_ = std::string(a.substr(flag.size()));
      const PathFacts facts = final_ == "-" ? PathFacts{} : path_facts(final_);
      kind_ = classify_output(final_, facts);
      if (kind_ == OutputKind::refuse) {
        *err = "cannot write " + final_ + ": " + refusal_reason(facts);
        return false;
      }
      if (kind_ == OutputKind::replace) {
        replace_ = std::make_unique<AtomicReplace>(final_);
        written_ = replace_->temp_path();
      } else if (!make_private_temp(err)) {
        return false;
      }
      arg_ = std::string(flag) + written_;
      argv[i] = arg_.data();
    }
    return true;
  }
  ~OutputFile() {
    if (!private_.empty()) ::unlink(private_.c_str());
  }
  [[nodiscard]] const std::string& final_path() const { return final_; }
  // Returns false with a reason when the file could not be put in place.
  bool commit(std::string* err) {
    if (final_.empty()) return true;
    if (replace_) return replace_->commit(err);
    std::ifstream in(private_, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
      *err = "cannot read back " + private_ + " (the results for " + final_ + ")";
      return false;
    }
    return write_output(final_, text.str(), err);
  }

 private:
  bool make_private_temp(std::string* err) {
    const char* dir = std::getenv("TMPDIR");
    std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/gpucheck-out-XXXXXX";
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) {
      *err = "cannot create a temp file in " + tmpl.substr(0, tmpl.rfind('/')) + ": " + std::strerror(errno);
      return false;
    }
    ::close(fd);
    private_ = written_ = tmpl;
    return true;
  }

  std::string final_, written_, arg_, private_;
  OutputKind kind_ = OutputKind::replace;
  std::unique_ptr<AtomicReplace> replace_;
};

// The user's --axis (and nccl-tests' -b/-e/-f) as the family's points; false with the one
// line on a bad axis or value. *given is false (and points empty) when none was given.
bool select_points(const Family& family, const Options& o, std::vector<axes::Point>* points, bool* given,
                   std::string* err) {
  std::vector<axes::Override> overrides;
  for (const std::string& a : o.axes) {
    axes::Override ov;
    if (!axes::parse_override(a, &ov, err)) return false;
    overrides.push_back(std::move(ov));
  }
  if (!o.bytes_min.empty()) {
    const std::vector<axes::Axis>& ax = family.model.axes;
    if (std::none_of(ax.begin(), ax.end(), [](const axes::Axis& a) { return a.name == "bytes"; })) {
      *err = "-b/-e/-f: " + family.model.family + " has no bytes axis (its axes: " + axes::axis_names(ax) + ")";
      return false;
    }
    axes::Override ov;
    if (!axes::bytes_range_override(o.bytes_min, o.bytes_max.empty() ? o.bytes_min : o.bytes_max,
                                    o.bytes_factor.empty() ? "2" : o.bytes_factor, &ov, err))
      return false;
    overrides.push_back(std::move(ov));
  }
  *given = !overrides.empty();
  if (!*given) return true;
  if (family.model.axes.empty()) {
    *err = "--axis: " + family.model.family + " declares no axes";
    return false;
  }
  return axes::select(family.model, o.suite, overrides, points, err);
}

// Google Benchmark's --benchmark_list_tests[=true] and --benchmark_filter=REGEX, as left in argv.
bool wants_gbench_list(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--benchmark_list_tests" || a == "--benchmark_list_tests=true" || a == "--benchmark_list_tests=1") return true;
  }
  return false;
}
std::string gbench_filter(int argc, char** argv) {
  constexpr std::string_view flag = "--benchmark_filter=";
  std::string f;
  for (int i = 1; i < argc; ++i)
    if (std::string_view a = argv[i]; a.substr(0, flag.size()) == flag) f = std::string(a.substr(flag.size()));
  return f;
}

// What the list depends on of the device: this one's when there is one, else the reference
// GPU's (the suites are written for an H200), said on stderr.
axes::DeviceFacts list_facts(const Options& o) {
  axes::DeviceFacts f;
  const DeviceCount devices = cuda_device_count();
  cudaDeviceProp p{};
  if (devices.count > o.device && cudaGetDeviceProperties(&p, o.device) == cudaSuccess) {
    f.compute_capability = p.major * 10 + p.minor;
    f.l2_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
    f.gpus = devices.count;
    f.reference = false;
    return f;
  }
  std::fprintf(stderr, "gpucheck: no CUDA device: listing for the suite's reference GPU (NVIDIA H200, compute "
                       "capability 9.0, 50 MiB L2, one GPU)\n");
  return f;
}

// --list: the cases, one name a line (or JSON with their axes), without running anything.
int list_cases(const Family& family, const Options& o, const std::vector<axes::Point>* points, int argc, char** argv) {
  if (!family.list) {
    std::fprintf(stderr, "gpucheck: %s cannot list its cases without a device\n", family.model.family.c_str());
    return 2;
  }
  const axes::DeviceFacts facts = list_facts(o);
  std::vector<axes::Listed> cases = family.list(o.suite, points, facts);
  std::string err;
  if (!axes::filter_names(gbench_filter(argc, argv), &cases, &err)) {
    return bad_input(err);
  }
  if (o.json) {
    std::fputs(axes::listed_json(family.model, o.suite, cases, facts.reference).c_str(), stdout);
  } else {
    for (const axes::Listed& c : cases) std::printf("%s\n", c.name.c_str());
  }
  return 0;
}

void print_help(const Family& family, const char* program) {
  if (!family.summary.empty()) std::printf("%s\n\n", std::string(family.summary).c_str());
  std::fputs(options_help(program).c_str(), stdout);
  if (!family.model.axes.empty()) {
    std::printf("\n%s axes (-a NAME=VALUES; without -a, the suite's own table of cases):\n",
                family.model.family.c_str());
    std::fputs(axes::axes_help(family.model).c_str(), stdout);
  }
  if (!family.own_help.empty()) std::printf("\n%s", std::string(family.own_help).c_str());
  std::printf("\nGoogle Benchmark's flags:\n");
  std::fflush(stdout);
}

}  // namespace

int run_family(int argc, char** argv, const Family& family) {
  Options options;
  std::string err;
  if (!parse_options(&argc, argv, &options, &err)) {
    return bad_input(err);
  }
  if (family.take_args && !family.take_args(&argc, argv, &err)) {
    return bad_input(err);
  }
  if (!check_passed_arguments(argc, argv, family.options, &err)) {
    return bad_input(err);
  }
  if (options.help) {  // ours, then Google Benchmark's (it prints them and exits 0); no device needed
    print_help(family, argv[0]);
    benchmark::Initialize(&argc, argv);
    return 0;
  }
  // The environment is part of the measurement (core/environment.hpp): a variable that changes
  // what a figure means stops the binary before any device is touched, with or without a GPU.
  const Environment timing_env = timing_environment(environ);
  if (const auto why = environment_refusal(timing_env); why && !options.help) {
    return bad_input(*why);
  }
  // The user's own cases, checked before any device: a bad axis is exit 2 with or without a GPU.
  std::vector<axes::Point> points;
  bool axes_given = false;
  if (!select_points(family, options, &points, &axes_given, &err)) {
    return bad_input(err);
  }
  // A specs file named with --specs must load, listing or measuring alike: a typo is exit 2,
  // not a list that looks fine (without --specs, a missing default only costs % of peak).
  if (SpecDb specs; !options.specs_path.empty() && !SpecDb::load(options.specs_path, &specs, &err))
    return bad_input("--specs: " + err);
  if (options.list || wants_gbench_list(argc, argv))
    return list_cases(family, options, axes_given ? &points : nullptr, argc, argv);

  const DeviceCount devices = cuda_device_count();
  const int count = devices.count;
  if (count == 0) {
    return bad_input(devices.none);
  }
  if (options.device >= count) {
    std::fprintf(stderr, "gpucheck: --device %d out of range (%d device%s)\n", options.device, count,
                 count == 1 ? "" : "s");
    return 2;
  }

  OutputFile out;
  if (!out.take(argc, argv, &err)) {
    return bad_input(err);
  }
  // An output that names an input is bad input before anything is measured (issue 18).
  if (const std::string specs = resolve_specs_path(options);
      !out.final_path().empty() && out.final_path() != "-" && !specs.empty() && same_file(out.final_path(), specs)) {
    return bad_input("--benchmark_out=" + out.final_path() + ": names the specs file this binary reads (--specs)");
  }
  const std::string filter = gbench_filter(argc, argv);  // before Google Benchmark takes its flags out of argv
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  int failed = 0, registered = 0;
  std::size_t ran = 0;
  try {
    Device device(options);
    for (const auto& [key, value] : device.context()) benchmark::AddCustomContext(key, value);
    benchmark::AddCustomContext(std::string(kEnvironmentContextKey), environment_record(timing_env));
    Registry registry(device);
    registry.set_points(axes_given ? &points : nullptr);
    family.register_cases(registry);
    const bool prints = !family.prints || family.prints();
    NullReporter quiet;
    ran = prints ? benchmark::RunSpecifiedBenchmarks() : benchmark::RunSpecifiedBenchmarks(&quiet);
    failed = registry.failed();
    registered = registry.size();
    benchmark::ClearRegisteredBenchmarks();  // their bodies refer to the registry
  } catch (const std::exception& e) {
    return bad_input(e.what());
  }
  benchmark::Shutdown();
  // A filter that matches none of the suite's cases measured nothing: exit 2 with one line,
  // no results file (the runner reads the line as "nothing of this family", contract.hpp).
  // A suite with no case at all here (one GPU for a multi-GPU family) is not an error.
  if (ran == 0 && registered > 0)
    return bad_input(std::string(contract::kNoMatchPrefix) + visible_excerpt(filter) + " in the " +
                     family.model.family + " " + std::string(to_string(options.suite)) + " suite (list them with " +
                     argv[0] + " --list --suite " + std::string(to_string(options.suite)) + ")");
  if (ran == 0)
    std::fprintf(stderr, "gpucheck: no %s case exists in the %s suite\n", family.model.family.c_str(),
                 std::string(to_string(options.suite)).c_str());
  if (!out.commit(&err)) {
    return bad_input(err);
  }
  if (failed > 0) {
    std::fprintf(stderr, "gpucheck: %d case%s failed (see error_message in the output)\n", failed,
                 failed == 1 ? "" : "s");
    return 1;
  }
  return 0;
}

}  // namespace gpucheck::harness
