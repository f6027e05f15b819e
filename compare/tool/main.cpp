// gpucheck: wires run_cli to the process (arguments, environment, real disk, exit status).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "gpucheck/compare/cli.hpp"

int main(int argc, char** argv) {
  using namespace gpucheck::compare;
  try {
    std::vector<std::string> args(argv, argv + argc);
    CliEnvironment env;
    env.stdout_is_tty = ::isatty(STDOUT_FILENO) != 0;
    const char* nc = std::getenv("NO_COLOR");
    env.no_color = nc != nullptr && *nc != '\0';
    if (const char* s = std::getenv("GITHUB_STEP_SUMMARY"); s != nullptr && *s != '\0') env.step_summary_path = s;
    RealFileSystem fs;
    CliOutput io;
    const ExitStatus status = run_cli(args, fs, env, io);
    std::fwrite(io.out.data(), 1, io.out.size(), stdout);
    std::fwrite(io.err.data(), 1, io.err.size(), stderr);
    std::fflush(stdout);
    return static_cast<int>(status);
  } catch (const std::bad_alloc&) {
    std::fputs("gpucheck: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpucheck: internal error: %s\n", e.what());
  }
  return static_cast<int>(ExitStatus::BadInput);
}
