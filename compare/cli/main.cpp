// gpucheck: wires run_cli to the process (arguments, environment, real disk, child processes,
// NVML, signals, exit status). Progress of a gate goes to stdout as it happens.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "cli/cli.hpp"
#include "runner/gpu_activity.hpp"
#include "runner/process.hpp"

namespace {

std::atomic<int> g_stop{0};

extern "C" void on_stop_signal(int sig) { g_stop.store(sig); }

// SIGINT / SIGTERM / SIGHUP (a cancelled CI job) stop the running benchmark's process group
// before gpucheck exits, so no binary is left holding the GPU.
void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpucheck::compare;
  try {
    std::vector<std::string> args(argv, argv + argc);
    CliEnvironment env;
    env.stdout_is_tty = ::isatty(STDOUT_FILENO) != 0;
    const char* nc = std::getenv("NO_COLOR");
    env.no_color = nc != nullptr && *nc != '\0';
    if (const char* s = std::getenv("GITHUB_STEP_SUMMARY"); s != nullptr && *s != '\0') env.step_summary_path = s;
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v != nullptr) env.cuda_visible_devices = v;
    install_stop_handlers();
    PosixProcessRunner runner(&g_stop);
    NvmlActivityProbe probe;
    env.runner = &runner;
    env.gpu_probe = &probe;
    RealFileSystem fs;
    CliOutput io;
    io.live = [](std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    };
    const ExitStatus status = run_cli(args, fs, env, io);
    std::fwrite(io.out.data(), 1, io.out.size(), stdout);
    std::fflush(stdout);
    std::fwrite(io.err.data(), 1, io.err.size(), stderr);
    return static_cast<int>(status);
  } catch (const std::bad_alloc&) {
    std::fputs("gpucheck: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpucheck: internal error: %s\n", e.what());
  }
  return static_cast<int>(ExitStatus::BadInput);
}
