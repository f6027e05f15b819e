// Starting a benchmark binary as a child process, behind an interface (tests use a fake that
// writes files instead). The real one puts the child in its own process group, sends its
// output to files (capped: the head and the tail are kept), and on a timeout stops the whole
// group: SIGTERM, then SIGKILL after a grace period. Nothing it started outlives it, whoever
// holds its pipes: the binary runs contained (runner/contain.hpp), and its whole tree ends
// when it does, on a timeout, or when gpucheck dies (even by SIGKILL, in a PID namespace). A
// hang or a crash costs that binary only.
#pragma once

#include <atomic>
#include <optional>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "runner/contain.hpp"

namespace gpucheck::compare {

struct ProcessSpec {
  std::string program;            // a path
  std::vector<std::string> args;  // without argv[0]
  std::string stdout_path;        // created or truncated; the child's stdout
  std::string stderr_path;        // created or truncated; the child's stderr
  double timeout_s = 0.0;         // 0: no limit
  double kill_grace_s = 5.0;      // SIGTERM to SIGKILL
  // Per output file: past this, the middle is dropped and the first and last halves kept
  // (a binary printing `yes` once filled a 300 MB disk in 0.1 s).
  std::size_t log_cap_bytes = std::size_t{16} << 20;
  std::optional<Containment> containment;  // tests: force a fallback; nullopt: the best there is
  int cpu = -1;  // >= 0: the program runs pinned to this CPU (runner/cpu_pin.hpp); -1: where the kernel puts it
};

struct ProcessResult {
  enum class End { Exited, Signalled, TimedOut, Interrupted, CouldNotStart };
  End end = End::Exited;
  int exit_code = 0;         // Exited
  int signal = 0;            // Signalled
  double seconds = 0.0;      // wall time
  bool killed_hard = false;  // TimedOut / Interrupted: SIGTERM was not enough
  std::string error;         // CouldNotStart
  int pid = 0;  // the binary's own (getpid() inside its namespace), once started: FILE.partial-PID
  Containment containment = Containment::Subreaper;  // how its tree was kept
  std::size_t dropped_bytes = 0;  // of output, past log_cap_bytes
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
  explicit PosixProcessRunner(const std::atomic<int>* stop = nullptr);
  ProcessResult run(const ProcessSpec& spec) override;

 private:
  const std::atomic<int>* stop_;
};

// The pure half of the log cap: what of a stream is written at once (the head), what is held
// back as its tail, and how much was dropped between them.
class CappedLog {
 public:
  explicit CappedLog(std::size_t cap_bytes) : head_cap_(cap_bytes / 2), tail_cap_(cap_bytes - cap_bytes / 2) {}
  // Returns the part of `data` to write now; the rest is kept as the tail.
  std::string_view add(std::string_view data);
  // What to write at the end: a line saying how much was dropped, then the tail ("" if none).
  [[nodiscard]] std::string finish() const;
  [[nodiscard]] std::size_t dropped() const { return dropped_; }

 private:
  std::size_t head_cap_, tail_cap_;
  std::size_t written_ = 0, dropped_ = 0;
  std::string tail_;
};

// In a child between fork and exec (async-signal-safe calls only): default dispositions for
// the signals gpucheck handles or ignores, and an empty mask, whatever the parent installed.
void reset_signals_for_exec();

// A waitpid status read once: exited with a code, or ended by a signal.
struct WaitEnd {
  bool signalled = false;
  int code = 0;  // the exit code, or the signal
};
WaitEnd decode_wait_status(int status);

// "SIGSEGV" for 11; "signal 77" for a number without a name.
std::string signal_name(int sig);

}  // namespace gpucheck::compare
