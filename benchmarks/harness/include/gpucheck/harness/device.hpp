// The device a binary measures: made once by the shared main (--device N) and passed to the
// family (no global), with its properties, its SKU's datasheet figures, a stream, an L2 flush
// buffer, the host flag that holds streams, and what the driver reports (clocks, link, ECC).
// Benchmarks read it; nothing here changes a card's settings.
#pragma once
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "gpucheck/core/measure.hpp"
#include "gpucheck/core/options.hpp"
#include "gpucheck/core/specs.hpp"
#include "gpucheck/core/telemetry.hpp"
#include "gpucheck/harness/memory.hpp"

namespace gpucheck::harness {

// A host flag in mapped, portable pinned memory that spin kernels on any device poll: set to
// 0 while a sample's work is queued behind them, to 1 to release them; `timed_out` is set by
// a spin kernel that gave up (the host never released it).
struct HoldFlags {
  volatile int* host = nullptr;            // the flag, as the host writes it
  volatile int* device_view = nullptr;     // the flag, as spin kernels read it
  volatile int* host_timed_out = nullptr;  // the timeout mark, read by the host after a sync
  int* device_timed_out = nullptr;         // the timeout mark, as spin kernels write it
};

class Device {
 public:
  // Selects the device and gathers everything above. Throws GpuError on CUDA failures; a
  // missing specs file or NVML is not an error (the fields read "unknown"), but a specs file
  // named on the command line that does not load is (std::invalid_argument).
  explicit Device(const Options& options);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int index() const { return index_; }
  const cudaDeviceProp& props() const { return props_; }
  const Options& options() const { return options_; }
  Suite suite() const { return options_.suite; }
  bool full() const { return options_.suite == Suite::full; }
  const SkuSpec* spec() const { return spec_; }
  std::optional<double> peak_tflops(DType t) const;
  const std::string& spec_note() const { return spec_note_; }  // why spec() is null
  const Telemetry& telemetry() const { return telemetry_; }
  // Re-reads everything the driver reports (e.g. during a copy, for the link under load).
  Telemetry refresh_telemetry() const;
  // The SM clock and throttle reasons now (two NVML calls); nullopt without NVML.
  std::optional<ClockReading> read_clock() const;
  // The SM clock, power draw and energy counter now (Telemetry's sm_clock_MHz, power_W,
  // energy_J; three NVML calls); every field empty without NVML.
  Telemetry read_power() const;
  // NVML's energy counter alone, in joules: one NVML call where read_power makes three
  // (together about 4 ms of host under load on an H200); nullopt without NVML or where the
  // driver has none.
  std::optional<double> read_energy_J() const;
  bool nvml_loaded() const { return nvml_ != nullptr; }
  const std::string& nvml_note() const { return nvml_note_; }  // why NVML is not loaded
  int compute_capability() const { return props_.major * 10 + props_.minor; }
  std::string pci_bus_id() const { return pci_bus_id_; }

  cudaStream_t stream() const { return stream_.get(); }
  // Evicts L2 by writing a buffer twice its size (allocated on first use).
  void flush_l2(cudaStream_t s);

  // Everything recorded in the results' context, as key -> value strings.
  std::map<std::string, std::string> context() const;

  const HoldFlags& hold_flags() const { return hold_; }

 private:
  int index_ = 0;
  cudaDeviceProp props_{};
  Options options_;
  SpecDb specs_;
  const SkuSpec* spec_ = nullptr;
  std::string spec_note_;
  Telemetry telemetry_;
  std::unique_ptr<NvmlApi> nvml_;
  std::string nvml_note_;
  std::string pci_bus_id_;
  Stream stream_;
  DeviceBuffer l2_buffer_;
  int l2_flushes_ = 0;
  PinnedBuffer flag_buffer_;
  HoldFlags hold_;
};

}  // namespace gpucheck::harness
