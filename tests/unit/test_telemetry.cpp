#include <gtest/gtest.h>

#include <map>

#include "gpucheck/core/telemetry.hpp"

namespace gpucheck {
namespace {

class FakeFiles final : public FileReader {
 public:
  std::map<std::string, std::string> files;
  std::optional<std::string> read(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  }
  std::map<std::string, std::string> links;  // path -> canonical path
  std::optional<std::string> canonical(const std::string& path) const override {
    auto it = links.find(path);
    if (it == links.end()) return std::nullopt;
    return it->second;
  }
};

class FakeNvml final : public NvmlApi {
 public:
  Telemetry fill;
  std::string seen_bus_id;
  void query(const std::string& bus, Telemetry* t) const override {
    const_cast<FakeNvml*>(this)->seen_bus_id = bus;
    *t = fill;
  }
  std::vector<GpuActivity> activity() const override { return {}; }
};

constexpr const char* kDir = "/sys/bus/pci/devices/0000:00:06.0/";

TEST(Telemetry, SysfsFillsTheLinkWhenNvmlCannot) {
  FakeFiles fs;
  fs.files[std::string(kDir) + "current_link_speed"] = "32.0 GT/s PCIe\n";
  fs.files[std::string(kDir) + "max_link_speed"] = "32.0 GT/s PCIe\n";
  fs.files[std::string(kDir) + "current_link_width"] = "8\n";
  fs.files[std::string(kDir) + "max_link_width"] = "16\n";
  FakeNvml nvml;
  nvml.fill.sm_clock_MHz = 1980;  // NVML answers clocks but not the link (as in a VM)
  Telemetry t = read_telemetry("00000000:00:06.0", &nvml, fs);
  EXPECT_EQ(nvml.seen_bus_id, "0000:00:06.0");
  EXPECT_EQ(t.sm_clock_MHz, 1980u);
  EXPECT_EQ(t.pcie_gen_current, 5);
  EXPECT_EQ(t.pcie_width_current, 8);  // trained at x8: the sick box acceptance looks for
  EXPECT_EQ(t.pcie_width_max, 16);
  EXPECT_EQ(t.pcie_source, "sysfs");
}

TEST(Telemetry, NvmlLinkWinsOverSysfs) {
  FakeFiles fs;
  fs.files[std::string(kDir) + "current_link_speed"] = "8.0 GT/s PCIe";
  fs.files[std::string(kDir) + "current_link_width"] = "16";
  FakeNvml nvml;
  nvml.fill.pcie_gen_current = 5;
  nvml.fill.pcie_width_current = 16;
  nvml.fill.pcie_source = "nvml";
  Telemetry t = read_telemetry("0000:00:06.0", &nvml, fs);
  EXPECT_EQ(t.pcie_gen_current, 5);
  EXPECT_EQ(t.pcie_source, "nvml");
}

TEST(Telemetry, NothingKnownIsEmptyNotACrash) {
  FakeFiles fs;
  Telemetry t = read_telemetry("garbage", nullptr, fs);
  EXPECT_FALSE(t.pcie_gen_current.has_value());
  EXPECT_FALSE(t.driver_version.has_value());
  EXPECT_TRUE(t.pcie_source.empty());
}

TEST(Telemetry, DriverVersionFromProc) {
  FakeFiles fs;
  fs.files["/proc/driver/nvidia/version"] =
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct 16 2025\nGCC version: gcc 13\n";
  EXPECT_EQ(read_telemetry("0000:00:06.0", nullptr, fs).driver_version, "580.159.04");
  EXPECT_EQ(driver_version_from_proc("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release"),
            "575.57.08");
  EXPECT_FALSE(driver_version_from_proc("nothing here").has_value());
  EXPECT_FALSE(driver_version_from_proc("Kernel Module").has_value());
}

TEST(Telemetry, CpuModelFromProc) {
  EXPECT_EQ(cpu_model_from_proc("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 17\n"
                                "model name\t: AMD EPYC  9654 96-Core Processor  \nmodel name\t: other\n"),
            "AMD EPYC 9654 96-Core Processor");
  // "model" alone is not "model name"; a key that only starts the same is not it either.
  EXPECT_FALSE(cpu_model_from_proc("model\t\t: 143\nmodel names: x\n").has_value());
  EXPECT_EQ(cpu_model_from_proc("processor : 0\nBogoMIPS : 50.00\nModel name : Neoverse-V2\n"), "Neoverse-V2");
  EXPECT_FALSE(cpu_model_from_proc("").has_value());
  EXPECT_FALSE(cpu_model_from_proc("model name\t:   \n").has_value());
  EXPECT_EQ(cpu_model_from_proc("model name: Intel(R) Xeon(R) Platinum 8480+"), "Intel(R) Xeon(R) Platinum 8480+");
}

TEST(Telemetry, HostCpuAddsFamilyModelSteppingWhereCpuinfoHasThem) {
  const char* vm = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
                   "model name\t: Intel(R) Xeon(R) Processor\nstepping\t: 8\n";
  EXPECT_EQ(host_cpu_from_proc(vm), "Intel(R) Xeon(R) Processor (family 6 model 143 stepping 8)");
  // Another generation behind the same generic name is another host CPU.
  const char* other = "cpu family\t: 6\nmodel\t\t: 207\nmodel name\t: Intel(R) Xeon(R) Processor\nstepping\t: 2\n";
  EXPECT_NE(host_cpu_from_proc(vm), host_cpu_from_proc(other));
  // Arm: no family/model lines, the name alone.
  EXPECT_EQ(host_cpu_from_proc("processor : 0\nModel name : Neoverse-V2\n"), "Neoverse-V2");
  EXPECT_FALSE(host_cpu_from_proc("").has_value());
}

TEST(Telemetry, SlotLinkComesFromTheUpstreamPort) {
  FakeFiles fs;
  fs.links["/sys/bus/pci/devices/0000:4e:00.0"] = "/sys/devices/pci0000:40/0000:40:01.1/0000:4e:00.0";
  fs.files["/sys/devices/pci0000:40/0000:40:01.1/max_link_speed"] = "16.0 GT/s PCIe\n";
  fs.files["/sys/devices/pci0000:40/0000:40:01.1/max_link_width"] = "16\n";
  Telemetry t = read_telemetry("00000000:4E:00.0", nullptr, fs);
  EXPECT_EQ(t.pcie_gen_slot_max, 4);  // a Gen4 slot caps a Gen5 card
  EXPECT_EQ(t.pcie_width_slot_max, 16);
}

TEST(Telemetry, NoUpstreamPortOnARootComplexDevice) {
  EXPECT_EQ(pcie_upstream_port("/sys/devices/pci0000:40/0000:40:01.1/0000:4e:00.0"),
            "/sys/devices/pci0000:40/0000:40:01.1");
  EXPECT_EQ(pcie_upstream_port("/sys/devices/pci0000:00/0000:00:06.0"), std::nullopt);  // a VM's GPU
  EXPECT_EQ(pcie_upstream_port("0000:00:06.0"), std::nullopt);
  EXPECT_EQ(pcie_upstream_port(""), std::nullopt);
  FakeFiles fs;
  fs.links["/sys/bus/pci/devices/0000:00:06.0"] = "/sys/devices/pci0000:00/0000:00:06.0";
  Telemetry t = read_telemetry("0000:00:06.0", nullptr, fs);
  EXPECT_FALSE(t.pcie_gen_slot_max.has_value());
}

TEST(Telemetry, ProcessNameFromProcComm) {
  FakeFiles fs;
  fs.files["/proc/4242/comm"] = "python3\n";
  EXPECT_EQ(process_name(4242, fs), "python3");
  EXPECT_EQ(process_name(1, fs), "");
}

TEST(Telemetry, NormalizesBusIds) {
  EXPECT_EQ(normalize_pci_bus_id("00000000:00:06.0"), "0000:00:06.0");
  EXPECT_EQ(normalize_pci_bus_id("0000:1B:00.0"), "0000:1b:00.0");
  EXPECT_EQ(normalize_pci_bus_id("1:02:00.0"), "0001:02:00.0");
  EXPECT_EQ(normalize_pci_bus_id("nonsense"), "nonsense");
}

TEST(Telemetry, ClockEventReasons) {
  EXPECT_EQ(describe_clock_event_reasons(0), "none");
  EXPECT_EQ(describe_clock_event_reasons(0x1), "gpu_idle");
  EXPECT_EQ(describe_clock_event_reasons(0x4 | 0x40), "sw_power_cap,hw_thermal_slowdown");
  EXPECT_EQ(describe_clock_event_reasons(0x1000), "other(0x1000)");
  EXPECT_FALSE(is_throttling(0x1));   // idle is not throttling
  EXPECT_FALSE(is_throttling(0x10));  // sync boost
  EXPECT_FALSE(is_throttling(0x4));  // power capping alone is how a card runs under load
  EXPECT_TRUE(is_throttling(0x80));
}

TEST(Telemetry, LoadingNvmlNeverCrashes) {
  std::string err;
  auto nvml = load_nvml(&err);  // absent on the CPU-only build machine, present on a GPU box
  if (!nvml) {
    EXPECT_FALSE(err.empty());
  }
}

}  // namespace
}  // namespace gpucheck
