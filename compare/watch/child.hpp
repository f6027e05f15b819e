// The watched command as a child process. Unlike the runner's binaries (its own process
// group, output to capped files, stdin /dev/null), a watched job is the user's own command:
// it keeps watch's terminal, stdin and process group, so Ctrl-C at the terminal reaches it
// directly, as it would without watch. Its stdout and stderr pass through pipes, copied to
// ours unchanged as they come, and every complete line is handed to a callback (the step
// parser). A SIGINT, SIGTERM or SIGHUP sent to watch alone (kill, a CI runner cancelling the
// job) is forwarded to the command; watch itself waits for the command to end either way, so
// the record is always written. The command runs contained (runner/contain.hpp): its whole
// tree, setsid daemons included, ends when it does.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "runner/contain.hpp"

namespace gpucheck::compare::watch {

struct ChildEnd {
  enum class Kind { Exited, Signalled, CouldNotStart };
  Kind kind = Kind::Exited;
  int code = 0;         // Exited: its status; Signalled: the signal
  std::string error;    // CouldNotStart: strerror of exec
  int pid = 0;
  double seconds = 0.0;
  int forwarded_signal = 0;  // the last signal watch passed on, 0 if none
  int cut_lines = 0;         // lines longer than LineSplitter::kMaxLine, cut there
  bool relay_stopped = false;  // our stdout or stderr closed: the command's output was no longer copied
  const char* containment = "";  // how its process tree was kept (containment_name)
  // The shell's convention: the exit status, 128+N for signal N, 127 when it could not start.
  [[nodiscard]] int status() const;
};

struct ChildIo {
  int out_fd = 1, err_fd = 2;  // where the command's output is copied
  // Each complete line of either stream (without its newline), and the last partial one at the end.
  std::function<void(std::string_view line, bool is_stderr)> on_line;
  // Called with the pid once it runs (the samplers start then), and every `tick_s` while it runs.
  std::function<void(int pid)> on_start;
  std::function<void()> on_tick;
  // Called before the command's output is copied (the progress line clears itself).
  std::function<void()> before_output;
  // Called once when our stdout or stderr refuses a write (closed): the copy stops there.
  std::function<void()> on_relay_stopped;
  double tick_s = 0.1;
  std::optional<Containment> containment;  // tests: force a fallback
};

// GPUCHECK_CONTAINMENT read as the runner reads it (runner/contain.hpp containment_from_env):
// unset or empty is the default order; anything else it does not know is the user's mistake,
// told before the command starts (the runner would refuse it only at the start, which reads as
// "cannot start": 127).
Status check_containment_env(const std::optional<std::string>& value);

// argv[0] is looked up in PATH as a shell would (execvp).
ChildEnd run_child(const std::vector<std::string>& argv, const ChildIo& io);

// The line splitter, pure: feeds bytes, emits complete lines; finish() emits the rest. A line
// ends at \n, at \r (a progress bar's redraw, as tqdm's) or at \r\n. A line longer than
// kMaxLine is cut there (its head emitted, the rest dropped) and counted: memory stays bounded
// whatever the command prints.
class LineSplitter {
 public:
  static constexpr std::size_t kMaxLine = std::size_t{64} << 10;
  explicit LineSplitter(std::function<void(std::string_view)> emit) : emit_(std::move(emit)) {}
  void feed(std::string_view data);
  void finish();
  [[nodiscard]] int cut_lines() const { return cut_lines_; }

 private:
  std::function<void(std::string_view)> emit_;
  std::string partial_;
  bool after_cr_ = false, cutting_ = false;
  int cut_lines_ = 0;
};

}  // namespace gpucheck::compare::watch
