// The flags every benchmark binary shares, parsed before Google Benchmark sees argv.
#pragma once
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

// quick: the gate's representative handful; full: the sweeps; accept: the figures
// `gpucheck accept` judges (link, copy, GEMM rates); burn: sustained checked load; llm: the
// projection GEMMs of Llama-3 8B and 70B (bench_matmul only: other families have no case).
enum class Suite { quick, full, accept, burn, llm };

// The suites a row of a family's table belongs to: data in the row, so that registration is
// a loop over the rows (benchmarks/cases/*.hpp) and a row's membership is read, not derived.
class Suites {
 public:
  constexpr Suites() = default;
  constexpr Suites(std::initializer_list<Suite> s) {
    for (Suite x : s) bits_ |= bit(x);
  }
  constexpr bool has(Suite s) const { return (bits_ & bit(s)) != 0; }
  constexpr bool operator==(const Suites&) const = default;

 private:
  static constexpr unsigned bit(Suite s) { return 1u << static_cast<unsigned>(s); }
  unsigned bits_ = 0;
};

struct Options {
  int device = 0;             // --device N
  Suite suite = Suite::quick; // --suite quick|full|accept|burn|llm
  std::string specs_path;     // --specs FILE (default: GPUCHECK_SPECS or the one beside the build)
  double burn_seconds = 60;   // --burn-seconds S (suite burn)
  bool help = false;          // --help / -h: ours, then Google Benchmark's
  // The user's own cases (gpucheck/core/axes.hpp): `--axis NAME=VALUES` / `-a`, in order
  // (--axis first), checked against the family's axes by the shared main.
  std::vector<std::string> axes;
  // nccl-tests' -b MIN -e MAX -f FACTOR: the `bytes` axis (empty: not given).
  std::string bytes_min, bytes_max, bytes_factor;
  bool list = false;          // --list: print the cases, run nothing (no GPU needed)
  bool json = false;          // --format json (with --list): the cases with their axes
};

std::string_view to_string(Suite s);
std::optional<Suite> parse_suite(std::string_view s);

// Removes our flags from argv (leaving Google Benchmark's and unknown ones in place, in
// order; --help is seen and left). Accepts `--flag value` and `--flag=value`; given twice,
// the last counts. On bad input returns false with a one-line reason in *err and leaves argv
// unchanged. (gpucheck/core/args.hpp parses.)
bool parse_options(int* argc, char** argv, Options* out, std::string* err);

// After ours and the family's flags are taken: every argument left must be Google
// Benchmark's (`--benchmark_*`, `--v=N`, `--help`). False with "OPTION: unknown option (did
// you mean X?)" otherwise, the suggestion drawn from our options and `family_options`.
bool check_passed_arguments(int argc, char** argv, const std::vector<std::string>& family_options, std::string* err);

// Help text for our flags.
std::string options_help(std::string_view program);

// The specs file to read: the flag, then $GPUCHECK_SPECS, then share/gpucheck/specs.json
// next to the binary's folder (CMake puts a copy there: bin/../share/gpucheck/specs.json).
std::string resolve_specs_path(const Options& o);
// The folder of the running executable ("" when /proc/self/exe cannot be read).
std::string executable_dir();

}  // namespace gpucheck
