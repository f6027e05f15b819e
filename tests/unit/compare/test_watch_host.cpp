// gpucheck watch's host samplers on /proc fixtures (fixtures/watch/proc/t0 and t1, one second
// apart): CPU total and busiest core, iowait, disk reads over whole disks only, and the
// command's process tree (a worker whose name holds ") ", a child born between the readings).
#include <gtest/gtest.h>

#include "../test_util.hpp"
#include "watch/host_sample.hpp"

namespace gpucheck {
namespace {

const std::string kProc = testutil::fixture("watch/proc");

// Reads t0 or t1, as switched by the test.
class SwitchedProc final : public ProcReader {
 public:
  std::string root = kProc + "/t0";
  std::optional<std::string> read(const std::string& rel) const override { return DirProcReader(root).read(rel); }
  std::vector<int> pids() const override { return DirProcReader(root).pids(); }
};

TEST(WatchHost, RatesBetweenTwoSnapshots) {
  SwitchedProc proc;
  HostSampler s(proc, 100, 100.0, 4096);
  const HostSample first = s.read(0.0);
  EXPECT_FALSE(first.cpu_pct.has_value());  // a rate needs two readings
  EXPECT_EQ(first.tree_processes, 2);
  proc.root = kProc + "/t1";
  const HostSample h = s.read(1.0);
  ASSERT_TRUE(h.cpu_pct && h.iowait_pct && h.busiest_core_pct && h.disk_read_MBps && h.tree_cpu_pct && h.tree_rss_MiB);
  EXPECT_DOUBLE_EQ(*h.cpu_pct, 60.0);          // 120 busy of 200 ticks
  EXPECT_DOUBLE_EQ(*h.iowait_pct, 10.0);       // 20 of 200
  EXPECT_DOUBLE_EQ(*h.busiest_core_pct, 100.0);  // cpu0
  EXPECT_DOUBLE_EQ(*h.disk_read_MBps, 10.0);   // nvme0n1's 20480 sectors; partitions, dm, loop left out
  EXPECT_EQ(h.tree_processes, 3);              // 100, its worker 101, the worker's child 102; not sshd
  EXPECT_DOUBLE_EQ(*h.tree_cpu_pct, 150.0);    // 100 + 50 ticks in 1 s at 100 Hz
  EXPECT_NEAR(*h.tree_rss_MiB, 5000.0 + 50 * 4096 / 1048576.0, 1e-9);  // VmRSS, else stat's pages
  EXPECT_EQ(h.cores, 2);
}

TEST(WatchHost, TheTreesReadsFromProcPidIo) {
  SwitchedProc proc;
  HostSampler s(proc, 100, 100.0, 4096);
  EXPECT_FALSE(s.read(0.0).tree_read_MBps.has_value());  // a rate needs two readings
  proc.root = kProc + "/t1";
  const HostSample h = s.read(0.5);
  ASSERT_TRUE(h.tree_read_MBps.has_value());
  // 100 read 60 MiB, 101 40 MiB in 0.5 s; 102 is new (its past is not this interval's), 200 not the tree's.
  EXPECT_DOUBLE_EQ(*h.tree_read_MBps, 200.0);
  EXPECT_EQ(parse_io_read_bytes("rchar: 5\nread_bytes: 4096\nwrite_bytes: 0\n"), 4096u);
  EXPECT_FALSE(parse_io_read_bytes("rchar: 5\n").has_value());
  EXPECT_FALSE(parse_io_read_bytes("read_bytes: x\n").has_value());
  EXPECT_FALSE(parse_io_read_bytes("").has_value());
}

TEST(WatchHost, Parsers) {
  EXPECT_FALSE(parse_proc_stat("intr 1\n").has_value());
  EXPECT_FALSE(parse_proc_stat("cpu  1 2 x 4\n").has_value());
  const auto p = parse_pid_stat("7 (a (b) c) R 3 7 7 0 -1 0 0 0 0 0 11 12 0 0 20 0 1 0 5 100 9 0");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->ppid, 3);
  EXPECT_EQ(p->ticks, 23u);
  EXPECT_EQ(p->rss_pages, 9u);
  EXPECT_FALSE(parse_pid_stat("7 (truncated").has_value());
  EXPECT_EQ(parse_status_rss_bytes("Name:\tx\nVmRSS:\t 12 kB\n"), 12u * 1024);
  EXPECT_FALSE(parse_status_rss_bytes("Name:\tkthreadd\n").has_value());
  for (const char* d : {"sda", "nvme0n1", "vdb", "mmcblk0", "xvda"}) EXPECT_TRUE(is_whole_disk(d)) << d;
  for (const char* d : {"sda1", "nvme0n1p2", "mmcblk0p1", "loop3", "dm-0", "ram0", "md127"}) EXPECT_FALSE(is_whole_disk(d)) << d;
  EXPECT_EQ(process_tree(1, {{2, 1}, {3, 2}, {4, 9}}), (std::vector<int>{1, 2, 3}));
}

TEST(WatchHost, MissingProcIsEmptyNotAnError) {
  DirProcReader none("/nonexistent/proc");
  HostSampler s(none, 1);
  const HostSample h = s.read(0.0);
  EXPECT_FALSE(h.cpu_pct.has_value());
  EXPECT_EQ(h.tree_processes, 0);
}

}  // namespace
}  // namespace gpucheck
