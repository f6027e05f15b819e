// The flags every benchmark binary shares, parsed before Google Benchmark sees argv.
#pragma once
#include <string>

namespace gpucheck {

enum class Suite { quick, full };

struct Options {
  int device = 0;             // --device N
  Suite suite = Suite::quick; // --suite quick|full
  std::string specs_path;     // --specs FILE (default: GPUCHECK_SPECS or the source tree's)
  bool help = false;          // --help / -h: ours, then Google Benchmark's
};

std::string_view to_string(Suite s);

// Removes our flags from argv (leaving Google Benchmark's and unknown ones in place, in
// order). Accepts `--flag value` and `--flag=value`. On bad input returns false with a
// one-line reason in *err and leaves argv unchanged.
bool parse_options(int* argc, char** argv, Options* out, std::string* err);

// Help text for our flags.
std::string options_help(std::string_view program);

// The specs file to read: the flag, then $GPUCHECK_SPECS, then the source tree's.
std::string resolve_specs_path(const Options& o);

}  // namespace gpucheck
