// A child process whose whole tree ends with it. The kernel does the tracking where it can:
// the program runs under a small init of ours (a fork of gpucheck, PID 1 of a new PID
// namespace, with a parent-death signal), and when that init ends, because the program ended
// or gpucheck was killed (even by SIGKILL), the kernel kills every process of the namespace,
// setsid daemons and double forks included. Where namespaces are refused (EPERM: no
// CAP_SYS_ADMIN), the program joins a cgroup v2 folder of its own that `cgroup.kill` empties;
// where neither, gpucheck is a child subreaper and walks its orphans until none is left.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace gpucheck::compare {

enum class Containment { PidNamespace, Cgroup, Subreaper };
// "pid namespace", "cgroup", "subreaper": the word the logs and the run's context use.
const char* containment_name(Containment c);
// GPUCHECK_CONTAINMENT (pid-namespace, cgroup or subreaper: that mechanism alone, for a machine
// where the default order misbehaves) read from `value`: nullopt for unset or empty (the
// default order), the mechanism, or an error naming the allowed words. gate, run and watch read
// it before they start anything, so a typo is a usage error, not a binary that "could not start".
Expected<std::optional<Containment>> containment_from_env(const char* value);

struct ContainSpec {
  std::vector<std::string> argv;  // argv[0] is the program
  bool search_path = false;       // argv[0] looked up in PATH (execvp)
  int stdin_fd = -1;              // -1: the parent's stdin
  int stdout_fd = -1, stderr_fd = -1;  // -1: the parent's
  bool own_group = true;          // a process group of its own (the runner); false: the caller's (watch)
  // watch: a SIGINT/SIGTERM/SIGHUP sent to the child's pid (not by the terminal) is passed on
  // to the program. The runner signals the group instead.
  bool forward_signals = false;
  // Tests only: skip the namespace (and the cgroup) to exercise a fallback.
  std::optional<Containment> force;
  // >= 0: the program's CPU affinity is this one CPU, set between fork and exec (a failure is
  // the program's failure to start); -1: inherited.
  int cpu = -1;
};

// A started child. pid() is what the caller waits for and signals: the init in a namespace,
// else the program itself. Not copyable; the destructor kills and reaps whatever is left.
class ContainedChild {
 public:
  // Starts it; on failure returns nullopt with *error = why (exec's strerror included).
  static std::optional<ContainedChild> start(const ContainSpec& spec, std::string* error);
  ContainedChild(ContainedChild&& o) noexcept;
  ContainedChild& operator=(ContainedChild&&) = delete;
  ContainedChild(const ContainedChild&) = delete;
  ContainedChild& operator=(const ContainedChild&) = delete;
  ~ContainedChild();

  [[nodiscard]] pid_t pid() const { return pid_; }
  // The program's pid on this host (for /proc and NVML, which list host pids) and as the
  // program itself sees it (getpid() inside: 2 in a namespace; its FILE.partial-PID).
  [[nodiscard]] pid_t program_host_pid() const { return host_pid_; }
  [[nodiscard]] pid_t program_own_pid() const { return own_pid_; }
  [[nodiscard]] Containment how() const { return how_; }

  // The program's wait status once it ended (waitpid's form); nullopt while it runs. `block`:
  // wait for it.
  std::optional<int> wait(bool block);
  // Ends everything it started, at once (SIGKILL), and reaps: the namespace's init, the
  // cgroup's members, or the subreaper's orphans. Safe to call more than once.
  void kill_all();

 private:
  ContainedChild() = default;
  pid_t pid_ = -1, host_pid_ = -1, own_pid_ = -1;
  Containment how_ = Containment::Subreaper;
  int msg_fd_ = -1;    // the init's reports (namespace only)
  int alive_fd_ = -1;  // held open while we live: the init's check that its parent is here
  std::string cgroup_;  // the folder (cgroup only)
  std::optional<int> status_;
  bool reaped_ = false;
};

// Kills and reaps every child of this process (orphaned descendants of a program that left its
// process group, reparented to this subreaper), with their groups, until none is left (no
// depth limit: a chain of any length); returns how many.
int kill_orphans();

// The pids of a /proc/PID/status "NSpid:" line, outermost namespace first (the host's pid,
// then the pid in each nested namespace); empty when the line is missing or malformed.
std::vector<int> parse_nspid(std::string_view status_text);

// The cgroup v2 folder of this process ("0::/path" in /proc/self/cgroup under the cgroup2
// mount of /proc/self/mountinfo); "" when there is none.
std::string cgroup2_folder_from(std::string_view proc_self_cgroup, std::string_view mountinfo);

}  // namespace gpucheck::compare
