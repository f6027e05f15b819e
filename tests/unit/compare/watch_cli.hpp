// `gpucheck watch ARGS...` in-process as the watch tests run it: the real disk and the real
// /proc; the NVML (a fake, or none and why), the stop flag and where the command's output goes
// are the caller's. Its exit status and what watch printed.
#pragma once

#include <string>
#include <vector>

#include "base/args.hpp"
#include "base/filesystem.hpp"
#include "watch/command.hpp"
#include "watch/host_sample.hpp"

namespace gpucheck::compare::testing {

// What loading NVML says on a machine without the driver: the reason a record without GPUs gives.
inline constexpr const char* kNoNvml = "cannot load NVML: libnvidia-ml.so.1: cannot open shared object file";

struct WatchCli {
  int status = 0;
  std::string out, err;
};

// `args` are watch's own (after "gpucheck watch"); deps.proc is the real /proc whatever the caller set.
inline WatchCli watch_cli(std::vector<std::string> args, WatchDeps deps) {
  args.insert(args.begin(), {"gpucheck", "watch"});
  RealFileSystem fs;
  CliEnvironment env;
  CliOutput io;
  cli::Context ctx{fs, env, io};
  DirProcReader proc("/proc");
  deps.proc = &proc;
  WatchCli r;
  r.status = static_cast<int>(run_watch(args, ctx, deps));
  r.out = io.out;
  r.err = io.err;
  return r;
}

}  // namespace gpucheck::compare::testing
