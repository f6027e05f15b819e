// gpucheck: wires run_cli to the process (arguments, environment, real disk, child processes,
// NVML, signals, exit status). Progress of a gate goes to stdout as it happens. A stop signal
// ends any command with 128 + the signal (core/stop.hpp); a stdout that refuses a write is one
// line on stderr and exit 2, never a silent SIGPIPE.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "cli/cli.hpp"
#include "gpucheck/core/stop.hpp"
#include "runner/gpu_activity.hpp"
#include "runner/process.hpp"

namespace {

// Writes to stdout; the first failure is kept (its errno), and later writes are skipped.
struct StdoutWriter {
  int error = 0;
  void write(std::string_view text) {
    if (error != 0 || text.empty()) return;
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) error = errno;
    if (error == 0 && std::ferror(stdout) != 0) error = EIO;
  }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace gpucheck::compare;
  try {
    gpucheck::install_stop_handlers();
    std::vector<std::string> args(argv, argv + argc);
    CliEnvironment env;
    env.stdout_is_tty = ::isatty(STDOUT_FILENO) != 0;
    const char* nc = std::getenv("NO_COLOR");
    env.no_color = nc != nullptr && *nc != '\0';
    if (const char* s = std::getenv("GITHUB_STEP_SUMMARY"); s != nullptr && *s != '\0') env.step_summary_path = s;
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v != nullptr) env.cuda_visible_devices = v;
    PosixProcessRunner runner(&gpucheck::stop_flag());
    NvmlActivityProbe probe;
    env.runner = &runner;
    env.process_ends_after = true;
    env.gpu_probe = &probe;
    RealFileSystem fs;
    CliOutput io;
    StdoutWriter out;
    io.live = [&out](std::string_view text) { out.write(text); };
    const ExitStatus status = run_cli(args, fs, env, io);
    out.write(io.out);
    std::fwrite(io.err.data(), 1, io.err.size(), stderr);
    // A stop signal the runner caught (it stopped the binary and unwound): the signal's status.
    if (const int sig = gpucheck::stop_signal(); sig != 0) return 128 + sig;
    // watch's status is its command's: its closed output was said when the relay stopped.
    const bool is_watch = args.size() > 1 && args[1] == "watch";
    if (out.error != 0 && !is_watch) {
      std::fprintf(stderr, "gpucheck: cannot write to stdout: %s\n", std::strerror(out.error));
      return static_cast<int>(ExitStatus::BadInput);
    }
    return static_cast<int>(status);
  } catch (const std::bad_alloc&) {
    std::fputs("gpucheck: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpucheck: internal error: %s\n", e.what());
  }
  return static_cast<int>(ExitStatus::BadInput);
}
