// --pin-cpu: a kernel cpulist read and refused when malformed, the GPU's NUMA node found under a
// sysfs root (a temp folder here), the core chosen, and a real child started pinned to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../test_util.hpp"
#include "runner/cpu_pin.hpp"
#include "runner/process.hpp"
#include "cli/cli.hpp"

namespace gc = gpucheck::compare;

namespace cpu_pin_test {

std::vector<int> range(int lo, int hi) {
  std::vector<int> v;
  for (int c = lo; c <= hi; ++c) v.push_back(c);
  return v;
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace cpu_pin_test

TEST(PinCpu, TheOptionIsAutoOffOrACpuNumber) {
  EXPECT_EQ(gc::parse_pin_cpu("auto")->mode, gc::PinRequest::Mode::Auto);
  EXPECT_EQ(gc::parse_pin_cpu("off")->mode, gc::PinRequest::Mode::Off);
  const auto zero = gc::parse_pin_cpu("0");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->mode, gc::PinRequest::Mode::Core);
  EXPECT_EQ(zero->core, 0);
  EXPECT_EQ(gc::parse_pin_cpu("1023")->core, 1023);
  for (const char* bad : {"1024", "-1", "", "Auto", "3 ", "+3", "0x3", "1.5", "99999999999"}) {
    const auto r = gc::parse_pin_cpu(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().where, "--pin-cpu") << bad;
  }
}

TEST(PinCpu, ACpulistIsItsCpusAscendingWithoutRepeats) {
  const auto two_ranges = gc::parse_cpulist("0-15,32-47\n", "f");
  ASSERT_TRUE(two_ranges.ok()) << two_ranges.error().str();
  std::vector<int> want = cpu_pin_test::range(0, 15);
  for (int c : cpu_pin_test::range(32, 47)) want.push_back(c);
  EXPECT_EQ(*two_ranges, want);
  EXPECT_EQ(*gc::parse_cpulist("3", "f"), std::vector<int>{3});
  EXPECT_EQ(*gc::parse_cpulist("0,2,4-5", "f"), (std::vector<int>{0, 2, 4, 5}));
  EXPECT_EQ(*gc::parse_cpulist("4-5,0-3,2", "f"), cpu_pin_test::range(0, 5));
  EXPECT_EQ(*gc::parse_cpulist("7-7", "f"), std::vector<int>{7});
  EXPECT_EQ(gc::parse_cpulist("0-1023", "f")->size(), 1024u);
}

TEST(PinCpu, AMalformedCpulistIsRefusedNamingTheFile) {
  for (const char* bad : {"", "\n", "3-1", "1,,2", ",1", "1,", "-1", "1-", "a", "0-1024", "1 2", "0x3", "+1", "1-2-3",
                          "99999999999", "0 - 3"}) {
    const auto r = gc::parse_cpulist(bad, "/sys/x/local_cpulist");
    ASSERT_FALSE(r.ok()) << '"' << bad << '"';
    EXPECT_EQ(r.error().where, "/sys/x/local_cpulist") << bad;
  }
}

TEST(PinCpu, TheNodesCpusAreFoundUnderARootByTheBusIdAsSysfsNamesIt) {
  const gpucheck::testutil::TempDir root("gpucheck-pin");
  EXPECT_EQ(gc::local_cpulist_path(root.str(), "00000000:9A:00.0"),
            root.str() + "/sys/bus/pci/devices/0000:9a:00.0/local_cpulist");
  cpu_pin_test::write(root.path() / "sys/bus/pci/devices/0000:9a:00.0/local_cpulist", "24-47\n");
  const auto cpus = gc::read_local_cpus(root.str(), "00000000:9A:00.0");
  ASSERT_TRUE(cpus.ok()) << cpus.error().str();
  EXPECT_EQ(*cpus, cpu_pin_test::range(24, 47));
  const auto missing = gc::read_local_cpus(root.str(), "00000000:19:00.0");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().where.find("0000:19:00.0/local_cpulist"), std::string::npos);
  cpu_pin_test::write(root.path() / "sys/bus/pci/devices/0000:1a:00.0/local_cpulist", "ff,ffff\n");  // a cpumap, not a list
  EXPECT_FALSE(gc::read_local_cpus(root.str(), "0000:1a:00.0").ok());
  cpu_pin_test::write(root.path() / "sys/bus/pci/devices/0000:1b:00.0/local_cpulist", "");
  EXPECT_FALSE(gc::read_local_cpus(root.str(), "0000:1b:00.0").ok());
}

TEST(PinCpu, AutoTakesTheLastCoreOfTheNodeThisProcessMayRunOn) {
  const gc::PinRequest automatic;
  const gc::Expected<std::vector<int>> node = cpu_pin_test::range(24, 47);
  const auto any = gc::decide_pin(automatic, node, "0000:19:00.0", {});
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->cpu, 47);
  EXPECT_NE(any->line.find("pinned to core 47"), std::string::npos);
  EXPECT_NE(any->line.find("24-47"), std::string::npos);
  EXPECT_EQ(gc::decide_pin(automatic, node, "g", cpu_pin_test::range(0, 31))->cpu, 31);
  EXPECT_EQ(gc::decide_pin(automatic, node, "g", {24})->cpu, 24);
  const auto outside = gc::decide_pin(automatic, node, "g", cpu_pin_test::range(0, 23));
  ASSERT_TRUE(outside.ok());
  EXPECT_FALSE(outside->cpu.has_value());
  EXPECT_EQ(outside->line.rfind("CPU: not pinned", 0), 0u);
}

TEST(PinCpu, WithoutTheNodesCpusAutoDoesNotPinAndSaysWhy) {
  const gc::Expected<std::vector<int>> unknown = gc::Error{"", "NVML: libnvidia-ml.so.1 not found"};
  const auto d = gc::decide_pin(gc::PinRequest{}, unknown, "?", cpu_pin_test::range(0, 3));
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->cpu.has_value());
  EXPECT_EQ(d->line, "CPU: not pinned (NVML: libnvidia-ml.so.1 not found)");
}

TEST(PinCpu, OffNeverPinsAndACoreIsTakenOnlyWhereThisProcessMayRun) {
  const gc::Expected<std::vector<int>> node = cpu_pin_test::range(0, 7);
  EXPECT_FALSE(gc::decide_pin({gc::PinRequest::Mode::Off, -1}, node, "g", {})->cpu.has_value());
  EXPECT_EQ(gc::decide_pin({gc::PinRequest::Mode::Core, 5}, node, "g", cpu_pin_test::range(0, 7))->cpu, 5);
  EXPECT_EQ(gc::decide_pin({gc::PinRequest::Mode::Core, 5}, node, "g", {})->cpu, 5);  // affinity unknown
  const auto refused = gc::decide_pin({gc::PinRequest::Mode::Core, 100}, node, "g", cpu_pin_test::range(0, 7));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().where, "--pin-cpu");
  EXPECT_NE(refused.error().message.find("0-7"), std::string::npos);
}

TEST(PinCpu, TheBusIdComesFromTheSelectedGpuOfTheSnapshot) {
  gpucheck::GpuActivity a, b;
  a.uuid = "GPU-a";
  a.pci_bus_id = "00000000:19:00.0";
  b.uuid = "GPU-b";
  EXPECT_EQ(*gc::gpu_bus_id({a, b}, 0, 0), "00000000:19:00.0");
  EXPECT_FALSE(gc::gpu_bus_id({a, b}, 1, 1).ok());  // NVML gave none
  EXPECT_FALSE(gc::gpu_bus_id({a, b}, std::nullopt, 3).ok());
  EXPECT_FALSE(gc::gpu_bus_id({a, b}, 2, 2).ok());
  EXPECT_FALSE(gc::gpu_bus_id({}, 0, 0).ok());
}

TEST(PinCpu, AChildStartsPinnedToTheCore) {
  const std::vector<int> allowed = gc::allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  const gpucheck::testutil::TempDir tmp("gpucheck-pin-child");
  gc::ProcessSpec s;
  s.program = "/bin/sh";
  s.args = {"-c", "grep '^Cpus_allowed_list' /proc/self/status"};
  s.stdout_path = tmp.str() + "/out";
  s.stderr_path = tmp.str() + "/err";
  s.timeout_s = 20;
  s.cpu = allowed.back();
  gc::PosixProcessRunner runner;
  const gc::ProcessResult r = runner.run(s);
  ASSERT_EQ(r.end, gc::ProcessResult::End::Exited) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  std::ifstream in(s.stdout_path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "Cpus_allowed_list:\t" + std::to_string(allowed.back()));
}

TEST(PinCpu, ABadPinCpuIsOneLineAndExitTwoBeforeAnythingRuns) {
  const gpucheck::testutil::TempDir tmp("gpucheck-pin-cli");
  for (const std::string cmd : {"run", "gate"})
    for (const char* bad : {"bogus", "1024", "-2"}) {
      std::vector<std::string> args{cmd, "--bin-dir", tmp.str(), "--out", tmp.str() + "/out", "--pin-cpu", bad};
      if (cmd == "gate") args.insert(args.end(), {"--baseline", tmp.str()});
      const auto r = gpucheck::testutil::cli(args);
      EXPECT_EQ(r.status, gc::ExitStatus::BadInput) << cmd << " " << bad;
      EXPECT_EQ(r.io.err.rfind("gpucheck: --pin-cpu: ", 0), 0u) << r.io.err;
      EXPECT_EQ(std::count(r.io.err.begin(), r.io.err.end(), '\n'), 1) << r.io.err;
    }
}
