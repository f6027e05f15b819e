// The host side of `gpucheck watch`: CPU use (total and busiest core), iowait, disk reads and
// the watched command's process tree, from /proc. The text of /proc is parsed by pure
// functions; the files come through a reader (the real /proc, or a fixture folder in tests).
// Every figure is a rate between two snapshots, so the first reading has none.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

// /proc behind an interface: `read("stat")`, `read("42/status")`, and the numeric entries.
class ProcReader {
 public:
  virtual ~ProcReader() = default;
  virtual std::optional<std::string> read(const std::string& relative) const = 0;
  virtual std::vector<int> pids() const = 0;
};
// A folder laid out like /proc: "/proc" itself, or a fixture.
class DirProcReader final : public ProcReader {
 public:
  explicit DirProcReader(std::string root = "/proc") : root_(std::move(root)) {}
  std::optional<std::string> read(const std::string& relative) const override;
  std::vector<int> pids() const override;

 private:
  std::string root_;
};

// One "cpu" / "cpuN" line of /proc/stat, in clock ticks.
struct CpuTicks {
  std::uint64_t busy = 0, idle = 0, iowait = 0;  // busy: user+nice+system+irq+softirq+steal
  [[nodiscard]] std::uint64_t total() const { return busy + idle + iowait; }
};
struct ProcStat {
  CpuTicks all;
  std::vector<CpuTicks> cores;
};
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// Sectors (512 bytes) read, summed over whole disks: partitions, device-mapper, loop and ram
// devices are left out so that one read is not counted twice.
std::uint64_t parse_diskstats_sectors_read(std::string_view text);
bool is_whole_disk(std::string_view name);

// /proc/PID/stat: parent, CPU ticks (user+system), resident pages; nullopt when malformed.
struct PidStat {
  int pid = 0, ppid = 0;
  std::uint64_t ticks = 0;
  std::uint64_t rss_pages = 0;
};
std::optional<PidStat> parse_pid_stat(std::string_view text);
// VmRSS of /proc/PID/status in bytes (kernel threads have none).
std::optional<std::uint64_t> parse_status_rss_bytes(std::string_view text);
// read_bytes of /proc/PID/io (what the process made the storage layer fetch); nullopt when
// absent or unreadable (another user's process).
std::optional<std::uint64_t> parse_io_read_bytes(std::string_view text);

// `root` and every process below it, from (pid, ppid) pairs.
std::vector<int> process_tree(int root, const std::map<int, int>& parent_of);

struct HostSample {
  std::optional<double> cpu_pct;           // all cores, 0..100
  std::optional<double> busiest_core_pct;  // the busiest core's, 0..100
  std::optional<double> iowait_pct;        // share of all CPU time waiting on I/O
  std::optional<double> disk_read_MBps;    // MiB/s over whole disks
  std::optional<double> tree_cpu_pct;      // the command's processes, 100 = one core
  std::optional<double> tree_rss_MiB;
  std::optional<double> tree_read_MBps;    // MiB/s the tree read from storage (/proc/PID/io read_bytes)
  int tree_processes = 0;
  int cores = 0;
};

// Keeps the previous snapshot; each read() gives the rates since it.
class HostSampler {
 public:
  HostSampler(const ProcReader& proc, int root_pid, double ticks_per_s = 100.0, std::uint64_t page_bytes = 4096)
      : proc_(proc), root_(root_pid), hz_(ticks_per_s), page_(page_bytes) {}
  HostSample read(double t_s);
  // The processes seen in the last read (for matching NVML's compute processes).
  [[nodiscard]] const std::vector<int>& tree() const { return tree_; }

 private:
  const ProcReader& proc_;
  int root_;
  double hz_;
  std::uint64_t page_;
  std::optional<ProcStat> prev_stat_;
  std::optional<std::uint64_t> prev_sectors_;
  std::map<int, std::uint64_t> prev_ticks_;
  std::map<int, std::uint64_t> prev_read_;
  double prev_t_ = 0.0;
  std::vector<int> tree_;
};

}  // namespace gpucheck
