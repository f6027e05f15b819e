#include "gpucheck/harness/main.hpp"

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <unistd.h>

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
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/registry.hpp"

namespace gpucheck::harness {
namespace {

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

}  // namespace

int run_family(int argc, char** argv, const Family& family) {
  Options options;
  std::string err;
  if (!parse_options(&argc, argv, &options, &err)) {
    std::fprintf(stderr, "gpucheck: %s\n", err.c_str());
    return 2;
  }
  if (family.take_args && !family.take_args(&argc, argv, &err)) {
    std::fprintf(stderr, "gpucheck: %s\n", err.c_str());
    return 2;
  }
  if (!check_passed_arguments(argc, argv, family.options, &err)) {
    std::fprintf(stderr, "gpucheck: %s\n", err.c_str());
    return 2;
  }
  if (options.help) std::fputs(options_help(argv[0]).c_str(), stdout);  // gbench adds its own
  // The environment is part of the measurement (core/environment.hpp): a variable that changes
  // what a figure means stops the binary before any device is touched, with or without a GPU.
  const Environment timing_env = timing_environment(environ);
  if (const auto why = environment_refusal(timing_env); why && !options.help) {
    std::fprintf(stderr, "gpucheck: %s\n", why->c_str());
    return 2;
  }

  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
    if (options.help) return 0;
    std::fprintf(stderr, "gpucheck: no CUDA device found (cudaGetDeviceCount: %s)\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 2;
  }
  if (options.device >= count) {
    std::fprintf(stderr, "gpucheck: --device %d out of range (%d device%s)\n", options.device, count,
                 count == 1 ? "" : "s");
    return 2;
  }

  OutputFile out;
  if (!out.take(argc, argv, &err)) {
    std::fprintf(stderr, "gpucheck: %s\n", err.c_str());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  int failed = 0, registered = 0;
  std::size_t ran = 0;
  try {
    Device device(options);
    for (const auto& [key, value] : device.context()) benchmark::AddCustomContext(key, value);
    benchmark::AddCustomContext(std::string(kEnvironmentContextKey), environment_record(timing_env));
    Registry registry(device);
    family.register_cases(registry);
    const bool prints = !family.prints || family.prints();
    NullReporter quiet;
    ran = prints ? benchmark::RunSpecifiedBenchmarks() : benchmark::RunSpecifiedBenchmarks(&quiet);
    failed = registry.failed();
    registered = registry.size();
    benchmark::ClearRegisteredBenchmarks();  // their bodies refer to the registry
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpucheck: %s\n", e.what());
    return 2;
  }
  benchmark::Shutdown();
  // Nothing to run is not a failure of this binary: a gate's filter may select another
  // family's cases only (Google Benchmark leaves an empty results file; the gate decides
  // whether a filter that matched nothing anywhere is an error).
  if (ran == 0)
    std::fprintf(stderr, "gpucheck: no %s case %s in the %s suite\n", std::string(family.name).c_str(),
                 registered == 0 ? "exists" : "matches --benchmark_filter", std::string(to_string(options.suite)).c_str());
  if (!out.commit(&err)) {
    std::fprintf(stderr, "gpucheck: %s\n", err.c_str());
    return 2;
  }
  if (failed > 0) {
    std::fprintf(stderr, "gpucheck: %d case%s failed (see error_message in the output)\n", failed,
                 failed == 1 ? "" : "s");
    return 1;
  }
  return 0;
}

}  // namespace gpucheck::harness
