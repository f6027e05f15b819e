// The stop signals (SIGINT, SIGTERM, SIGHUP: Ctrl-C, a cancelled CI job) for every gpucheck
// command. Where the code waits on something it can stop cleanly (a running benchmark binary),
// it declares a StopPolled scope and reads stop_signal() itself; anywhere else the handler ends
// the process at once, with 128 + the signal, after removing the temps of outputs in flight
// (output.hpp), so a stop never leaves a half-written file and never waits on a long read.
#pragma once

#include <atomic>

namespace gpucheck {

// Installs the handlers (main does, once) and ignores SIGPIPE: a closed stdout or summary is a
// write error the caller reports, not a silent death.
void install_stop_handlers();

// The stop signal received, 0 if none.
int stop_signal();
const std::atomic<int>& stop_flag();

// While one lives, a stop signal only sets the flag: the code inside polls it and unwinds.
class StopPolled {
 public:
  StopPolled();
  ~StopPolled();
  StopPolled(const StopPolled&) = delete;
  StopPolled& operator=(const StopPolled&) = delete;
};

}  // namespace gpucheck
