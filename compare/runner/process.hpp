// Starting a benchmark binary as a child process, behind an interface (tests use a fake that
// writes files instead). The real one puts the child in its own process group, sends its
// output to files, and on a timeout stops the whole group: SIGTERM, then SIGKILL after a
// grace period. A hang or a crash costs that binary only.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace gpucheck::compare {

struct ProcessSpec {
  std::string program;            // a path
  std::vector<std::string> args;  // without argv[0]
  std::string stdout_path;        // created or truncated; the child's stdout
  std::string stderr_path;        // created or truncated; the child's stderr
  double timeout_s = 0.0;         // 0: no limit
  double kill_grace_s = 5.0;      // SIGTERM to SIGKILL
};

struct ProcessResult {
  enum class End { Exited, Signalled, TimedOut, Interrupted, CouldNotStart };
  End end = End::Exited;
  int exit_code = 0;         // Exited
  int signal = 0;            // Signalled
  double seconds = 0.0;      // wall time
  bool killed_hard = false;  // TimedOut / Interrupted: SIGTERM was not enough
  std::string error;         // CouldNotStart
};

class ProcessRunner {
 public:
  ProcessRunner() = default;
  ProcessRunner(const ProcessRunner&) = delete;
  ProcessRunner& operator=(const ProcessRunner&) = delete;
  virtual ~ProcessRunner() = default;
  virtual ProcessResult run(const ProcessSpec& spec) = 0;
};

class PosixProcessRunner final : public ProcessRunner {
 public:
  // `stop`: set (by a signal handler) to a signal number to stop the running child and
  // return Interrupted.
  explicit PosixProcessRunner(const std::atomic<int>* stop = nullptr) : stop_(stop) {}
  ProcessResult run(const ProcessSpec& spec) override;

 private:
  const std::atomic<int>* stop_;
};

// "SIGSEGV" for 11; "signal 77" for a number without a name.
std::string signal_name(int sig);

}  // namespace gpucheck::compare
