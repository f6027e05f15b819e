#include "gpucheck/core/telemetry.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/dl.hpp"
#include "gpucheck/core/pcie.hpp"

namespace gpucheck {

std::optional<std::string> RealFileReader::read(const std::string& path) const {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::optional<std::string> RealFileReader::canonical(const std::string& path) const {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

namespace {

// NVML's C ABI, declared here because the build machine has no nvml.h. Only the calls
// used below; all of them read state.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;
constexpr int kMemoryErrorUncorrected = 1, kCounterVolatile = 0, kCounterAggregate = 1;

// nvmlUtilization_t and nvmlProcessInfo_v2_t, as nvml.h lays them out.
struct NvmlUtilization {
  unsigned gpu, memory;
};
// nvmlProcessUtilizationSample_t: one process's utilisation in one of the driver's sample periods.
struct NvmlProcessUtilSample {
  unsigned pid;
  unsigned long long time_stamp;  // CPU time, microseconds since the epoch
  unsigned sm_util, mem_util, enc_util, dec_util;
};
static_assert(sizeof(NvmlProcessUtilSample) == 32, "nvmlProcessUtilizationSample_t is 32 bytes on LP64");
constexpr nvmlReturn_t kNvmlNotFound = 6;
// nvmlPciInfo_t, as nvml.h lays it out (nvmlDeviceGetPciInfo_v3).
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct NvmlProcessInfoV2 {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
};

// nvmlMemory_t (v1), nvmlGpmSupport_t and nvmlGpmMetricsGet_t as nvml.h lays them out. The
// metrics array in nvml.h is NVML_GPM_METRIC_MAX long (98, then 210, 333 in later releases):
// ours is longer than any of them (20 KiB, on the heap), so a driver that copies its whole
// struct in or out stays inside our memory, whichever header it was built with.
struct NvmlMemory {
  unsigned long long total, free, used;
};
using nvmlGpmSample_t = void*;
constexpr unsigned kGpmSupportVersion = 1, kGpmMetricsGetVersion = 1;
struct NvmlGpmSupport {
  unsigned version, is_supported_device;
};
struct NvmlGpmMetric {
  unsigned metric_id;
  nvmlReturn_t nvml_return;
  double value;
  struct {
    char* short_name;
    char* long_name;
    char* unit;
  } info;
};
struct NvmlGpmMetricsGet {
  unsigned version, num_metrics;
  nvmlGpmSample_t sample1, sample2;
  NvmlGpmMetric metrics[512];
};
static_assert(sizeof(NvmlGpmMetric) == 40, "nvmlGpmMetric_t is 40 bytes on LP64");
static_assert(offsetof(NvmlGpmMetricsGet, metrics) == 24, "nvmlGpmMetricsGet_t's metrics start at byte 24");
// NVML_GPM_METRIC_*: SM_UTIL, SM_OCCUPANCY, ANY_TENSOR_UTIL, DRAM_BW_UTIL, PCIE_TX/RX_PER_SEC (MiB/s).
constexpr unsigned kGpmSmUtil = 2, kGpmSmOccupancy = 3, kGpmAnyTensorUtil = 5, kGpmDramBwUtil = 10,
                   kGpmPcieTxPerSec = 20, kGpmPcieRxPerSec = 21;
constexpr int kPcieUtilTxBytes = 0, kPcieUtilRxBytes = 1;

struct NvmlFns {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*gen_cur)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*gen_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*width_cur)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*width_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*gen_gpu_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // mJ since the driver loaded
  nvmlReturn_t (*ecc_errors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*remapped)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*retired_pending)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, NvmlProcessInfoV2*) = nullptr;
  nvmlReturn_t (*process_name)(unsigned, char*, unsigned) = nullptr;
  nvmlReturn_t (*process_util)(nvmlDevice_t, NvmlProcessUtilSample*, unsigned*, unsigned long long) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, NvmlMemory*) = nullptr;
  nvmlReturn_t (*pcie_throughput)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, NvmlPciInfo*) = nullptr;
  nvmlReturn_t (*gpm_support)(nvmlDevice_t, NvmlGpmSupport*) = nullptr;
  nvmlReturn_t (*gpm_alloc)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*gpm_free)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_get)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_metrics)(NvmlGpmMetricsGet*) = nullptr;
};

class DlNvml final : public NvmlApi {
 public:
  DlNvml(void* lib, NvmlFns fns) : lib_(lib), f_(fns) {}
  ~DlNvml() override {
    for (auto& g : gpm_)
      if (g.prev && f_.gpm_free) f_.gpm_free(g.prev);
    if (f_.shutdown) f_.shutdown();
    dlclose(lib_);
  }
  DlNvml(const DlNvml&) = delete;
  DlNvml& operator=(const DlNvml&) = delete;

  void query(const std::string& bus_id, Telemetry* t) const override {
    if (f_.driver_version) {
      std::array<char, 96> buf{};
      if (f_.driver_version(buf.data(), buf.size()) == kNvmlSuccess) t->driver_version = buf.data();
    }
    nvmlDevice_t dev = at(bus_id);
    if (!dev) return;
    if (f_.uuid) {
      std::array<char, 96> buf{};
      if (f_.uuid(dev, buf.data(), buf.size()) == kNvmlSuccess) t->uuid = buf.data();
    }
    unsigned v = 0;
    auto get = [&](auto fn, auto... args) -> std::optional<unsigned> {
      if (fn && fn(dev, args..., &v) == kNvmlSuccess) return v;
      return std::nullopt;
    };
    t->sm_clock_MHz = get(f_.clock, kClockSm);
    t->mem_clock_MHz = get(f_.clock, kClockMem);
    t->sm_clock_max_MHz = get(f_.max_clock, kClockSm);
    t->mem_clock_max_MHz = get(f_.max_clock, kClockMem);
    t->temperature_C = get(f_.temperature, kTemperatureGpu);
    if (auto mw = get(f_.power_limit)) t->power_limit_W = *mw / 1000.0;
    // A link NVML cannot read (0, or an error, as in some VMs) stays empty for sysfs.
    auto positive = [](std::optional<unsigned> x) -> std::optional<int> {
      if (x && *x > 0 && *x < 64) return static_cast<int>(*x);
      return std::nullopt;
    };
    t->pcie_gen_current = positive(get(f_.gen_cur));
    t->pcie_gen_max = positive(get(f_.gen_max));
    t->pcie_width_current = positive(get(f_.width_cur));
    t->pcie_width_max = positive(get(f_.width_max));
    t->pcie_gen_gpu_max = positive(get(f_.gen_gpu_max));
    if (t->pcie_gen_current && t->pcie_width_current) t->pcie_source = "nvml";
    if (auto mw = get(f_.power)) t->power_W = *mw / 1000.0;
    unsigned long long count = 0;
    if (f_.ecc_errors && f_.ecc_errors(dev, kMemoryErrorUncorrected, kCounterVolatile, &count) == kNvmlSuccess)
      t->ecc_uncorrected_volatile = count;
    if (f_.ecc_errors && f_.ecc_errors(dev, kMemoryErrorUncorrected, kCounterAggregate, &count) == kNvmlSuccess)
      t->ecc_uncorrected_aggregate = count;
    unsigned corr = 0, unc = 0, pending_rows = 0, failed = 0;
    if (f_.remapped && f_.remapped(dev, &corr, &unc, &pending_rows, &failed) == kNvmlSuccess) {
      t->remapped_rows_correctable = corr;
      t->remapped_rows_uncorrectable = unc;
      t->remapped_rows_pending = pending_rows != 0;
      t->remapped_rows_failure = failed != 0;
    }
    int retired = 0;
    if (f_.retired_pending && f_.retired_pending(dev, &retired) == kNvmlSuccess) t->retired_pages_pending = retired != 0;
    int cur = 0, pending = 0;
    if (f_.ecc && f_.ecc(dev, &cur, &pending) == kNvmlSuccess) t->ecc_enabled = cur != 0;
    unsigned long long mask = 0;
    if (f_.reasons && f_.reasons(dev, &mask) == kNvmlSuccess) t->clock_event_reasons = mask;
  }

  void query_clock(const std::string& bus_id, Telemetry* t) const override {
    nvmlDevice_t dev = at(bus_id);
    if (!dev) return;
    unsigned v = 0;
    if (f_.clock && f_.clock(dev, kClockSm, &v) == kNvmlSuccess) t->sm_clock_MHz = v;
    unsigned long long mask = 0;
    if (f_.reasons && f_.reasons(dev, &mask) == kNvmlSuccess) t->clock_event_reasons = mask;
  }

  void query_power(const std::string& bus_id, Telemetry* t) const override {
    nvmlDevice_t dev = at(bus_id);
    if (!dev) return;
    unsigned v = 0;
    if (f_.clock && f_.clock(dev, kClockSm, &v) == kNvmlSuccess) t->sm_clock_MHz = v;
    if (f_.power && f_.power(dev, &v) == kNvmlSuccess) t->power_W = v / 1000.0;
    energy_of(dev, t);
  }

  void query_energy(const std::string& bus_id, Telemetry* t) const override {
    if (nvmlDevice_t dev = at(bus_id)) energy_of(dev, t);
  }

  unsigned device_count() const override {
    unsigned n = 0;
    if (!f_.count || f_.count(&n) != kNvmlSuccess) return 0;
    return n;
  }

  std::optional<bool> gpm_supported(unsigned index) const override {
    nvmlDevice_t dev = nullptr;
    if (!f_.by_index || f_.by_index(index, &dev) != kNvmlSuccess) return std::nullopt;
    return gpm_state(index, dev).supported;
  }

  std::optional<GpuSample> sample(unsigned index) const override {
    nvmlDevice_t dev = nullptr;
    if (!f_.by_index || f_.by_index(index, &dev) != kNvmlSuccess) return std::nullopt;
    GpuSample s;
    unsigned v = 0;
    auto get = [&](auto fn, auto... args) -> std::optional<unsigned> {
      if (fn && fn(dev, args..., &v) == kNvmlSuccess) return v;
      return std::nullopt;
    };
    NvmlUtilization u{};
    if (f_.utilization && f_.utilization(dev, &u) == kNvmlSuccess) {
      s.util_gpu_pct = u.gpu;
      s.util_mem_pct = u.memory;
    }
    NvmlMemory m{};
    if (f_.memory && f_.memory(dev, &m) == kNvmlSuccess) {
      s.mem_used_bytes = m.used;
      s.mem_total_bytes = m.total;
    }
    if (auto mw = get(f_.power)) s.power_W = *mw / 1000.0;
    if (auto mw = get(f_.power_limit)) s.power_limit_W = *mw / 1000.0;
    s.sm_clock_MHz = get(f_.clock, kClockSm);
    s.sm_clock_max_MHz = get(f_.max_clock, kClockSm);
    s.temperature_C = get(f_.temperature, kTemperatureGpu);
    unsigned long long mask = 0;
    if (f_.reasons && f_.reasons(dev, &mask) == kNvmlSuccess) s.clock_event_reasons = mask;
    auto positive = [](std::optional<unsigned> x) { return x && *x > 0 ? x : std::nullopt; };  // 0: no reading
    s.pcie_gen = positive(get(f_.gen_cur));
    s.pcie_width = positive(get(f_.width_cur));
    s.pcie_gen_max = positive(get(f_.gen_max));
    s.pcie_width_max = positive(get(f_.width_max));
    GpmState& g = gpm_state(index, dev);
    if (g.supported) read_gpm(dev, g, &s);
    // Without GPM, NVML's PCIe counters (each call samples for 20 ms inside the driver).
    if (!s.pcie_rx_MBps)
      if (auto kb = get(f_.pcie_throughput, kPcieUtilRxBytes)) s.pcie_rx_MBps = *kb / 1024.0;
    if (!s.pcie_tx_MBps)
      if (auto kb = get(f_.pcie_throughput, kPcieUtilTxBytes)) s.pcie_tx_MBps = *kb / 1024.0;
    return s;
  }

  std::vector<GpuActivity> activity() const override {
    std::vector<GpuActivity> out;
    unsigned n = 0;
    if (!f_.count || !f_.by_index || f_.count(&n) != kNvmlSuccess) return out;
    for (unsigned i = 0; i < n; ++i) {
      nvmlDevice_t dev = nullptr;
      if (f_.by_index(i, &dev) != kNvmlSuccess) continue;
      GpuActivity a;
      a.nvml_index = i;
      std::array<char, 96> buf{};
      if (f_.name && f_.name(dev, buf.data(), buf.size()) == kNvmlSuccess) a.name = buf.data();
      buf.fill(0);
      if (f_.uuid && f_.uuid(dev, buf.data(), buf.size()) == kNvmlSuccess) a.uuid = buf.data();
      NvmlPciInfo pci{};
      if (f_.pci_info && f_.pci_info(dev, &pci) == kNvmlSuccess) {
        pci.bus_id[sizeof pci.bus_id - 1] = '\0';
        a.pci_bus_id = pci.bus_id;
      }
      NvmlUtilization u{};
      if (f_.utilization && f_.utilization(dev, &u) == kNvmlSuccess) {
        a.utilization_gpu_pct = u.gpu;
        a.utilization_mem_pct = u.memory;
      }
      if (f_.processes) {
        std::vector<NvmlProcessInfoV2> infos(16);
        for (int attempt = 0; attempt < 4; ++attempt) {
          unsigned count = static_cast<unsigned>(infos.size());
          const nvmlReturn_t r = f_.processes(dev, &count, infos.data());
          if (r == kNvmlInsufficientSize && count > infos.size()) {
            infos.resize(count + 8);  // processes may start between the two calls
            continue;
          }
          if (r != kNvmlSuccess) break;
          RealFileReader fs;
          for (unsigned p = 0; p < count && p < infos.size(); ++p) {
            GpuProcess gp;
            gp.pid = infos[p].pid;
            gp.used_bytes = infos[p].used_gpu_memory;
            std::array<char, 256> name{};
            if (f_.process_name && f_.process_name(gp.pid, name.data(), name.size()) == kNvmlSuccess)
              gp.name = name.data();
            if (gp.name.empty()) gp.name = process_name(gp.pid, fs);
            a.processes.push_back(std::move(gp));
          }
          break;
        }
      }
      read_process_shares(dev, i, &a.processes);
      out.push_back(std::move(a));
    }
    return out;
  }

 private:
  // The device with that PCI bus id; null when NVML has no such call or does not know it.
  nvmlDevice_t at(const std::string& bus_id) const {
    nvmlDevice_t dev = nullptr;
    if (!f_.by_bus_id || f_.by_bus_id(bus_id.c_str(), &dev) != kNvmlSuccess) return nullptr;
    return dev;
  }
  // The energy counter (mJ) into t->energy_J, where NVML gives it.
  void energy_of(nvmlDevice_t dev, Telemetry* t) const {
    unsigned long long mj = 0;
    if (f_.energy && f_.energy(dev, &mj) == kNvmlSuccess) t->energy_J = static_cast<double>(mj) / 1000.0;
  }
  // Each process's share of the GPU since the previous reading (the last second on the first):
  // the mean of the driver's samples newer than that, 0 for a listed process with none (NVML
  // returns only processes that ran), nothing where the call is missing or fails.
  void read_process_shares(nvmlDevice_t dev, unsigned index, std::vector<GpuProcess>* procs) const {
    if (!f_.process_util || procs->empty()) return;
    unsigned long long since = 0;
    {
      std::lock_guard lock(util_m_);
      if (last_util_us_.size() <= index) last_util_us_.resize(index + 1, 0);
      since = last_util_us_[index];
    }
    if (since == 0) {
      const auto now = std::chrono::system_clock::now().time_since_epoch() - std::chrono::seconds(1);
      since = static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
    }
    std::vector<NvmlProcessUtilSample> buf(procs->size() * 8 + 16);
    unsigned count = 0;
    nvmlReturn_t r = kNvmlInsufficientSize;
    for (int attempt = 0; attempt < 4 && r == kNvmlInsufficientSize; ++attempt) {
      count = static_cast<unsigned>(buf.size());
      r = f_.process_util(dev, buf.data(), &count, since);
      if (r == kNvmlInsufficientSize) buf.resize(std::max<std::size_t>(count, buf.size()) + 16);
    }
    if (r == kNvmlNotFound) count = 0;  // no process ran a kernel since then
    else if (r != kNvmlSuccess) return;
    std::vector<ProcessUtilSample> samples;
    for (unsigned k = 0; k < count && k < buf.size(); ++k)
      samples.push_back({buf[k].pid, buf[k].time_stamp, buf[k].sm_util, buf[k].mem_util});
    const unsigned long long newest = apply_process_util(samples, since, procs);
    std::lock_guard lock(util_m_);
    last_util_us_[index] = newest;
  }

  // Per GPU: whether it has GPM (asked once) and the previous GPM sample, so that each reading
  // covers the interval since the one before. watch reads from one thread.
  struct GpmState {
    bool asked = false, supported = false;
    nvmlGpmSample_t prev = nullptr;
  };
  GpmState& gpm_state(unsigned index, nvmlDevice_t dev) const {
    if (gpm_.size() <= index) gpm_.resize(index + 1);
    GpmState& g = gpm_[index];
    if (!g.asked) {
      g.asked = true;
      NvmlGpmSupport sup{};
      sup.version = kGpmSupportVersion;
      g.supported = f_.gpm_support && f_.gpm_alloc && f_.gpm_free && f_.gpm_get && f_.gpm_metrics &&
                    f_.gpm_support(dev, &sup) == kNvmlSuccess && sup.is_supported_device != 0;
    }
    return g;
  }
  void read_gpm(nvmlDevice_t dev, GpmState& g, GpuSample* s) const {
    nvmlGpmSample_t now = nullptr;
    if (f_.gpm_alloc(&now) != kNvmlSuccess || now == nullptr) return;
    if (f_.gpm_get(dev, now) != kNvmlSuccess) {
      f_.gpm_free(now);
      return;
    }
    if (g.prev != nullptr) {
      auto owned = std::make_unique<NvmlGpmMetricsGet>();
      NvmlGpmMetricsGet& q = *owned;
      q.version = kGpmMetricsGetVersion;
      q.sample1 = g.prev;
      q.sample2 = now;
      const unsigned ids[] = {kGpmSmUtil, kGpmSmOccupancy, kGpmAnyTensorUtil, kGpmDramBwUtil, kGpmPcieTxPerSec,
                              kGpmPcieRxPerSec};
      std::optional<double>* outs[] = {&s->sm_active_pct, &s->sm_occupancy_pct, &s->tensor_active_pct,
                                       &s->dram_bw_pct,   &s->pcie_tx_MBps,     &s->pcie_rx_MBps};
      q.num_metrics = sizeof ids / sizeof ids[0];
      for (unsigned i = 0; i < q.num_metrics; ++i) q.metrics[i].metric_id = ids[i];
      if (f_.gpm_metrics(&q) == kNvmlSuccess)
        for (unsigned i = 0; i < q.num_metrics; ++i)
          if (q.metrics[i].nvml_return == kNvmlSuccess) *outs[i] = q.metrics[i].value;
      f_.gpm_free(g.prev);
    }
    g.prev = now;
  }

  void* lib_;
  NvmlFns f_;
  mutable std::vector<GpmState> gpm_;
  mutable std::mutex util_m_;                          // activity() may be read from several threads
  mutable std::vector<unsigned long long> last_util_us_;  // per GPU: the newest process sample read
};

}  // namespace

std::unique_ptr<NvmlApi> load_nvml(std::string* err) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    *err = std::string("cannot load NVML: ") + (e ? e : "libnvidia-ml.so.1 not found");
    return nullptr;
  }
  NvmlFns f;
  dl_bind(lib, "nvmlInit_v2", &f.init);
  dl_bind(lib, "nvmlShutdown", &f.shutdown);
  dl_bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", &f.by_bus_id);
  dl_bind(lib, "nvmlSystemGetDriverVersion", &f.driver_version);
  dl_bind(lib, "nvmlDeviceGetUUID", &f.uuid);
  dl_bind(lib, "nvmlDeviceGetClockInfo", &f.clock);
  dl_bind(lib, "nvmlDeviceGetMaxClockInfo", &f.max_clock);
  dl_bind(lib, "nvmlDeviceGetEnforcedPowerLimit", &f.power_limit);
  dl_bind(lib, "nvmlDeviceGetTemperature", &f.temperature);
  dl_bind(lib, "nvmlDeviceGetCurrPcieLinkGeneration", &f.gen_cur);
  dl_bind(lib, "nvmlDeviceGetMaxPcieLinkGeneration", &f.gen_max);
  dl_bind(lib, "nvmlDeviceGetCurrPcieLinkWidth", &f.width_cur);
  dl_bind(lib, "nvmlDeviceGetMaxPcieLinkWidth", &f.width_max);
  dl_bind(lib, "nvmlDeviceGetEccMode", &f.ecc);
  dl_bind(lib, "nvmlDeviceGetCurrentClocksEventReasons", &f.reasons);
  if (!f.reasons) dl_bind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &f.reasons);
  dl_bind(lib, "nvmlDeviceGetGpuMaxPcieLinkGeneration", &f.gen_gpu_max);
  dl_bind(lib, "nvmlDeviceGetPowerUsage", &f.power);
  dl_bind(lib, "nvmlDeviceGetTotalEnergyConsumption", &f.energy);
  dl_bind(lib, "nvmlDeviceGetTotalEccErrors", &f.ecc_errors);
  dl_bind(lib, "nvmlDeviceGetRemappedRows", &f.remapped);
  dl_bind(lib, "nvmlDeviceGetRetiredPagesPendingStatus", &f.retired_pending);
  dl_bind(lib, "nvmlDeviceGetCount_v2", &f.count);
  dl_bind(lib, "nvmlDeviceGetHandleByIndex_v2", &f.by_index);
  dl_bind(lib, "nvmlDeviceGetName", &f.name);
  dl_bind(lib, "nvmlDeviceGetUtilizationRates", &f.utilization);
  dl_bind(lib, "nvmlDeviceGetComputeRunningProcesses_v2", &f.processes);
  dl_bind(lib, "nvmlSystemGetProcessName", &f.process_name);
  dl_bind(lib, "nvmlDeviceGetProcessUtilization", &f.process_util);
  dl_bind(lib, "nvmlDeviceGetMemoryInfo", &f.memory);
  dl_bind(lib, "nvmlDeviceGetPcieThroughput", &f.pcie_throughput);
  dl_bind(lib, "nvmlDeviceGetPciInfo_v3", &f.pci_info);
  dl_bind(lib, "nvmlGpmQueryDeviceSupport", &f.gpm_support);
  dl_bind(lib, "nvmlGpmSampleAlloc", &f.gpm_alloc);
  dl_bind(lib, "nvmlGpmSampleFree", &f.gpm_free);
  dl_bind(lib, "nvmlGpmSampleGet", &f.gpm_get);
  dl_bind(lib, "nvmlGpmMetricsGet", &f.gpm_metrics);
  if (!f.init || f.init() != kNvmlSuccess) {
    dlclose(lib);
    *err = "NVML is present but nvmlInit_v2 failed";
    return nullptr;
  }
  return std::make_unique<DlNvml>(lib, f);
}

std::uint64_t apply_process_util(const std::vector<ProcessUtilSample>& samples, std::uint64_t since_us,
                                 std::vector<GpuProcess>* procs) {
  struct Sum {
    std::uint64_t sm = 0, mem = 0, n = 0;
  };
  std::map<unsigned, Sum> by_pid;
  std::uint64_t newest = since_us;
  for (const ProcessUtilSample& x : samples) {
    if (x.time_us <= since_us || x.sm_pct > 100 || x.mem_pct > 100) continue;
    Sum& sum = by_pid[x.pid];
    sum.sm += x.sm_pct;
    sum.mem += x.mem_pct;
    ++sum.n;
    newest = std::max(newest, x.time_us);
  }
  for (GpuProcess& p : *procs) {
    const auto it = by_pid.find(p.pid);
    const bool ran = it != by_pid.end();
    p.sm_util_pct = ran ? static_cast<unsigned>((it->second.sm + it->second.n / 2) / it->second.n) : 0u;
    p.mem_util_pct = ran ? static_cast<unsigned>((it->second.mem + it->second.n / 2) / it->second.n) : 0u;
  }
  return newest;
}

std::string normalize_pci_bus_id(std::string_view id) {
  // domain:bus:device.function with a domain of 4 or 8 hex digits.
  auto colon = id.find(':');
  if (colon == std::string_view::npos || id.find(':', colon + 1) == std::string_view::npos) return std::string(id);
  std::string_view domain = id.substr(0, colon);
  while (domain.size() > 4 && domain.front() == '0') domain.remove_prefix(1);
  std::string out(domain);
  while (out.size() < 4) out.insert(out.begin(), '0');
  out += id.substr(colon);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::string> driver_version_from_proc(std::string_view text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..."
  auto pos = text.find("Kernel Module");
  if (pos == std::string_view::npos) return std::nullopt;
  pos += std::string_view("Kernel Module").size();
  // Skip a word that is not a version (e.g. "for aarch64").
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ') ++pos;
    std::size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    std::string_view word = text.substr(pos, end - pos);
    if (!word.empty() && std::isdigit(static_cast<unsigned char>(word.front())) &&
        word.find('.') != std::string_view::npos)
      return std::string(word);
    if (end >= text.size() || text[end] == '\n') break;
    pos = end;
  }
  return std::nullopt;
}

Telemetry read_telemetry(const std::string& pci_bus_id, const NvmlApi* nvml, const FileReader& fs) {
  Telemetry t;
  const std::string bus = normalize_pci_bus_id(pci_bus_id);
  if (nvml) nvml->query(bus, &t);
  if (!t.pcie_gen_current || !t.pcie_width_current) {
    const std::string dir = "/sys/bus/pci/devices/" + bus + "/";
    auto gen = [&](const char* f) -> std::optional<int> {
      if (auto s = fs.read(dir + f)) return pcie_gen_from_sysfs_speed(*s);
      return std::nullopt;
    };
    auto width = [&](const char* f) -> std::optional<int> {
      if (auto s = fs.read(dir + f)) return pcie_width_from_sysfs(*s);
      return std::nullopt;
    };
    auto gc = gen("current_link_speed"), gm = gen("max_link_speed");
    auto wc = width("current_link_width"), wm = width("max_link_width");
    if (gc && wc) {
      t.pcie_gen_current = gc;
      t.pcie_width_current = wc;
      t.pcie_gen_max = gm ? gm : t.pcie_gen_max;
      t.pcie_width_max = wm ? wm : t.pcie_width_max;
      t.pcie_source = "sysfs";
    }
  }
  // The slot: the upstream port's own maximum (a Gen5 card in a Gen4 slot trains at Gen4).
  if (auto dev_path = fs.canonical("/sys/bus/pci/devices/" + bus))
    if (auto port = pcie_upstream_port(*dev_path)) {
      if (auto s = fs.read(*port + "/max_link_speed")) t.pcie_gen_slot_max = pcie_gen_from_sysfs_speed(*s);
      if (auto s = fs.read(*port + "/max_link_width")) t.pcie_width_slot_max = pcie_width_from_sysfs(*s);
    }
  if (!t.driver_version)
    if (auto s = fs.read("/proc/driver/nvidia/version")) t.driver_version = driver_version_from_proc(*s);
  return t;
}

namespace {
// "0000:00:01.0": domain:bus:device.function in hex.
bool is_pci_function(std::string_view s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i == 4 || i == 7 || i == 10) continue;
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// The value of the first "key : value" line of /proc/cpuinfo whose key is exactly `key`.
std::optional<std::string> cpuinfo_field(std::string_view cpuinfo, std::string_view key) {
  std::size_t pos = 0;
  while (pos < cpuinfo.size()) {
    std::size_t eol = cpuinfo.find('\n', pos);
    if (eol == std::string_view::npos) eol = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.substr(0, key.size()) != key) continue;
    const std::size_t colon = line.find(':', key.size());
    if (colon == std::string_view::npos || line.find_first_not_of(" \t", key.size()) != colon) continue;
    std::string out;  // collapse runs of blanks
    for (char ch : line.substr(colon + 1)) {
      const bool blank = ch == ' ' || ch == '\t' || ch == '\r';
      if (blank) {
        if (!out.empty() && out.back() != ' ') out.push_back(' ');
      } else {
        out.push_back(ch);
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (!out.empty()) return out;
  }
  return std::nullopt;
}
}  // namespace

std::optional<std::string> pcie_upstream_port(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  const std::string_view parent = path.substr(0, slash);
  const std::size_t pslash = parent.rfind('/');
  const std::string_view parent_name = pslash == std::string_view::npos ? parent : parent.substr(pslash + 1);
  if (!is_pci_function(parent_name)) return std::nullopt;
  return std::string(parent);
}

std::optional<std::string> cpu_model_from_proc(std::string_view cpuinfo) {
  for (std::string_view key : {"model name", "Model name", "Hardware"})
    if (auto v = cpuinfo_field(cpuinfo, key)) return v;
  return std::nullopt;
}

std::string process_name(unsigned pid, const FileReader& fs) {
  auto comm = fs.read("/proc/" + std::to_string(pid) + "/comm");
  if (!comm) return {};
  std::string s = *comm;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<std::string> host_cpu_from_proc(std::string_view cpuinfo) {
  std::optional<std::string> model = cpu_model_from_proc(cpuinfo);
  if (!model) return std::nullopt;
  const auto family = cpuinfo_field(cpuinfo, "cpu family");
  const auto number = cpuinfo_field(cpuinfo, "model");
  const auto stepping = cpuinfo_field(cpuinfo, "stepping");
  if (family && number) {
    *model += " (family " + *family + " model " + *number;
    if (stepping) *model += " stepping " + *stepping;
    *model += ")";
  }
  return model;
}

std::string describe_clock_event_reasons(std::uint64_t mask) { return contract::describe_reasons(mask); }

bool is_throttling(std::uint64_t mask) { return contract::is_slowing(mask); }

}  // namespace gpucheck
