// The device a binary measures: chosen once by the shared main (--device N), with its
// properties, its SKU's datasheet figures, a stream, an L2 flush buffer and what the driver
// reports (clocks, link, ECC). Benchmarks read it; nothing here changes a card's settings.
#pragma once
#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "gpucheck/core/options.hpp"
#include "gpucheck/core/specs.hpp"
#include "gpucheck/core/telemetry.hpp"
#include "gpucheck/harness/memory.hpp"

namespace gpucheck::harness {

class Device {
 public:
  // Selects the device and gathers everything above. Throws GpuError on CUDA failures; a
  // missing specs file or NVML is not an error (the fields read "unknown").
  static Device& init(const Options& options);
  static Device& get();  // after init

  int index() const { return index_; }
  const cudaDeviceProp& props() const { return props_; }
  const Options& options() const { return options_; }
  Suite suite() const { return options_.suite; }
  bool full() const { return options_.suite == Suite::full; }
  const SkuSpec* spec() const { return spec_; }
  std::optional<double> peak_tflops(DType t) const;
  const std::string& spec_note() const { return spec_note_; }  // why spec() is null
  const Telemetry& telemetry() const { return telemetry_; }
  // Re-reads clocks and throttle reasons (e.g. after a run).
  Telemetry refresh_telemetry() const;
  int compute_capability() const { return props_.major * 10 + props_.minor; }
  std::string pci_bus_id() const { return pci_bus_id_; }

  cudaStream_t stream() const { return stream_.get(); }
  // Evicts L2 by writing a buffer twice its size (allocated on first use).
  void flush_l2(cudaStream_t s);

  // Everything recorded in the results' context, as key -> value strings.
  std::map<std::string, std::string> context() const;

  // Host flag + device timeout flag used by the timing loop's spin kernel.
  volatile int* host_flag() const { return host_flag_; }
  volatile int* device_view_of_flag() const { return dev_flag_; }
  int* spin_timed_out() const { return timed_out_.as<int>(); }

 private:
  Device() = default;
  int index_ = 0;
  cudaDeviceProp props_{};
  Options options_;
  SpecDb specs_;
  const SkuSpec* spec_ = nullptr;
  std::string spec_note_;
  Telemetry telemetry_;
  std::unique_ptr<NvmlApi> nvml_;
  std::string pci_bus_id_;
  Stream stream_;
  DeviceBuffer l2_buffer_;
  int l2_flushes_ = 0;
  PinnedBuffer flag_buffer_;
  volatile int* host_flag_ = nullptr;
  volatile int* dev_flag_ = nullptr;
  DeviceBuffer timed_out_;
};

}  // namespace gpucheck::harness
