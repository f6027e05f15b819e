#include "watch/host_sample.hpp"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

namespace gpucheck {

std::optional<std::string> DirProcReader::read(const std::string& relative) const {
  std::ifstream f(root_ + "/" + relative, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<int> DirProcReader::pids() const {
  std::vector<int> out;
  DIR* d = ::opendir(root_.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    int pid = 0;
    const char* end = e->d_name + std::char_traits<char>::length(e->d_name);
    auto [p, ec] = std::from_chars(e->d_name, end, pid);
    if (ec == std::errc() && p == end && pid > 0) out.push_back(pid);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> w;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) w.push_back(line.substr(i, j - i));
    i = j;
  }
  return w;
}

std::optional<std::uint64_t> number(std::string_view s) {
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

template <typename F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    f(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
}

std::optional<CpuTicks> cpu_line(const std::vector<std::string_view>& w) {
  // cpu user nice system idle iowait irq softirq steal [guest guest_nice] (guest is inside user)
  if (w.size() < 5) return std::nullopt;
  std::uint64_t v[8] = {};
  for (std::size_t i = 0; i < 8 && i + 1 < w.size(); ++i) {
    auto n = number(w[i + 1]);
    if (!n) return std::nullopt;
    v[i] = *n;
  }
  CpuTicks t;
  t.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  t.idle = v[3];
  t.iowait = v[4];
  return t;
}

double pct(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  ProcStat s;
  bool seen_all = false;
  bool bad = false;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 3) != "cpu") return;
    const auto w = words(line);
    if (w.empty()) return;
    auto t = cpu_line(w);
    if (!t) {
      bad = true;
      return;
    }
    if (w[0] == "cpu") {
      s.all = *t;
      seen_all = true;
    } else {
      s.cores.push_back(*t);
    }
  });
  if (!seen_all || bad) return std::nullopt;
  return s;
}

bool is_whole_disk(std::string_view name) {
  for (std::string_view skip : {"loop", "ram", "dm-", "md", "zram", "sr"})
    if (name.substr(0, skip.size()) == skip) return false;
  const bool ends_digit = !name.empty() && std::isdigit(static_cast<unsigned char>(name.back()));
  // nvme0n1 is a disk, nvme0n1p2 a partition; mmcblk0 / mmcblk0p1 likewise.
  if (name.substr(0, 4) == "nvme" || name.substr(0, 6) == "mmcblk") {
    const std::size_t p = name.rfind('p');
    if (p == std::string_view::npos || p == 0 || p + 1 >= name.size()) return true;
    const bool digits_after = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(p) + 1, name.end(),
                                          [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    return !(digits_after && std::isdigit(static_cast<unsigned char>(name[p - 1])));
  }
  // sda, vdb, xvdc, hda: a trailing digit is a partition.
  return !ends_digit;
}

std::uint64_t parse_diskstats_sectors_read(std::string_view text) {
  std::uint64_t sum = 0;
  for_each_line(text, [&](std::string_view line) {
    // major minor name reads merged sectors_read ...
    const auto w = words(line);
    if (w.size() < 6 || !is_whole_disk(w[2])) return;
    if (auto n = number(w[5])) sum += *n;
  });
  return sum;
}

std::optional<PidStat> parse_pid_stat(std::string_view text) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  const auto head = words(text.substr(0, open));
  const auto pid = head.empty() ? std::nullopt : number(head[0]);
  const auto w = words(text.substr(close + 1));
  // After comm: state(0) ppid(1) ... utime(11) stime(12) ... rss(21)
  if (!pid || w.size() < 22) return std::nullopt;
  const auto ppid = number(w[1]), ut = number(w[11]), st = number(w[12]), rss = number(w[21]);
  if (!ppid || !ut || !st || !rss) return std::nullopt;
  PidStat s;
  s.pid = static_cast<int>(*pid);
  s.ppid = static_cast<int>(*ppid);
  s.ticks = *ut + *st;
  s.rss_pages = *rss;
  return s;
}

std::optional<std::uint64_t> parse_status_rss_bytes(std::string_view text) {
  std::optional<std::uint64_t> out;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 6) != "VmRSS:") return;
    const auto w = words(line.substr(6));
    if (w.empty()) return;
    if (auto n = number(w[0])) out = *n * 1024;  // "kB"
  });
  return out;
}

std::optional<std::uint64_t> parse_io_read_bytes(std::string_view text) {
  std::optional<std::uint64_t> out;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 11) != "read_bytes:") return;
    const auto w = words(line.substr(11));
    if (w.size() == 1) out = number(w[0]);
  });
  return out;
}

std::vector<int> process_tree(int root, const std::map<int, int>& parent_of) {
  std::map<int, std::vector<int>> children;
  for (const auto& [pid, ppid] : parent_of) children[ppid].push_back(pid);
  std::vector<int> out{root}, todo{root};
  while (!todo.empty()) {
    const int p = todo.back();
    todo.pop_back();
    if (auto it = children.find(p); it != children.end())
      for (int c : it->second)
        if (c != p && std::find(out.begin(), out.end(), c) == out.end()) {
          out.push_back(c);
          todo.push_back(c);
        }
  }
  std::sort(out.begin(), out.end());
  return out;
}

HostSample HostSampler::read(double t_s) {
  HostSample h;
  std::optional<ProcStat> stat;
  if (auto text = proc_.read("stat")) stat = parse_proc_stat(*text);
  if (stat) {
    h.cores = static_cast<int>(stat->cores.size());
    if (prev_stat_ && prev_stat_->cores.size() == stat->cores.size()) {
      auto d = [](const CpuTicks& a, const CpuTicks& b) {
        CpuTicks x;
        x.busy = a.busy >= b.busy ? a.busy - b.busy : 0;
        x.idle = a.idle >= b.idle ? a.idle - b.idle : 0;
        x.iowait = a.iowait >= b.iowait ? a.iowait - b.iowait : 0;
        return x;
      };
      const CpuTicks all = d(stat->all, prev_stat_->all);
      if (all.total() > 0) {
        h.cpu_pct = pct(all.busy, all.total());
        h.iowait_pct = pct(all.iowait, all.total());
      }
      double busiest = 0.0;
      for (std::size_t i = 0; i < stat->cores.size(); ++i) {
        const CpuTicks c = d(stat->cores[i], prev_stat_->cores[i]);
        if (c.total() > 0) busiest = std::max(busiest, pct(c.busy, c.total()));
      }
      if (!stat->cores.empty()) h.busiest_core_pct = busiest;
    }
    prev_stat_ = stat;
  }
  const double dt = t_s - prev_t_;
  if (auto text = proc_.read("diskstats")) {
    const std::uint64_t sectors = parse_diskstats_sectors_read(*text);
    if (prev_sectors_ && dt > 0 && sectors >= *prev_sectors_)
      h.disk_read_MBps = static_cast<double>(sectors - *prev_sectors_) * 512.0 / (1024.0 * 1024.0) / dt;
    prev_sectors_ = sectors;
  }
  // The process tree: every pid's parent, then what lies under the command.
  std::map<int, int> parent_of;
  std::map<int, PidStat> stats;
  for (int pid : proc_.pids())
    if (auto text = proc_.read(std::to_string(pid) + "/stat"))
      if (auto s = parse_pid_stat(*text)) {
        parent_of[s->pid] = s->ppid;
        stats[s->pid] = *s;
      }
  if (root_ > 0 && stats.count(root_)) {
    tree_ = process_tree(root_, parent_of);
    std::map<int, std::uint64_t> ticks;
    std::map<int, std::uint64_t> read;
    std::uint64_t rss = 0, dticks = 0, dread = 0;
    bool any_io = false;
    for (int pid : tree_) {
      const PidStat& s = stats[pid];
      ticks[pid] = s.ticks;
      auto st = proc_.read(std::to_string(pid) + "/status");
      const auto vm = st ? parse_status_rss_bytes(*st) : std::nullopt;
      rss += vm ? *vm : s.rss_pages * page_;
      // A process new since the last read counts from now on: its past is not this interval's.
      if (auto it = prev_ticks_.find(pid); it != prev_ticks_.end() && s.ticks >= it->second) dticks += s.ticks - it->second;
      auto io = proc_.read(std::to_string(pid) + "/io");
      if (const auto rb = io ? parse_io_read_bytes(*io) : std::nullopt) {
        any_io = true;
        read[pid] = *rb;
        if (auto it = prev_read_.find(pid); it != prev_read_.end() && *rb >= it->second) dread += *rb - it->second;
      }
    }
    h.tree_processes = static_cast<int>(tree_.size());
    h.tree_rss_MiB = static_cast<double>(rss) / (1024.0 * 1024.0);
    if (!prev_ticks_.empty() && dt > 0) h.tree_cpu_pct = 100.0 * static_cast<double>(dticks) / hz_ / dt;
    if (any_io && !prev_read_.empty() && dt > 0) h.tree_read_MBps = static_cast<double>(dread) / (1024.0 * 1024.0) / dt;
    prev_ticks_ = std::move(ticks);
    prev_read_ = std::move(read);
  } else {
    tree_.clear();
  }
  prev_t_ = t_s;
  return h;
}

}  // namespace gpucheck
