// Datasheet figures per SKU (baselines/specs.json), looked up by the device's name. They
// turn a measured rate into `pct_of_peak` and give acceptance its yardstick.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/core/dtype.hpp"
#include "gpucheck/core/pcie.hpp"

namespace gpucheck {

struct SkuSpec {
  std::string id;                          // slug, e.g. "nvidia-h200"
  std::string name;                        // marketing name
  std::vector<std::string> match;          // all must occur in the device name (case-insensitive)
  std::map<std::string, double> peak_tflops;  // dense, no sparsity: fp64 fp32 tf32 fp16 bf16 fp8
  double memory_GBps = 0;                  // HBM/GDDR datasheet bandwidth
  double memory_GB = 0;
  PcieLink pcie;                           // the link the card is built for
  double nvlink_GBps = 0;                  // total bidirectional, 0 when none
  std::string source;                      // where the figures come from

  // Peak for a dtype; nullopt when the SKU has no such path (fp8 on A100).
  std::optional<double> peak(DType t) const;
};

// specs.json is a few KiB: a bound far above it keeps a wrong path from reading a disk image.
inline constexpr std::size_t kMaxSpecsBytes = std::size_t{16} << 20;

class SpecDb {
 public:
  // Errors as values: false with a one-line reason naming the file. Read through core's
  // one input reader and JSON loader (a FIFO refused, a key given twice an error).
  static bool load(const std::string& path, SpecDb* out, std::string* err);
  static bool parse(std::string_view json_text, const std::string& origin, SpecDb* out,
                    std::string* err);

  // First SKU (in file order) whose every match token occurs in the name; nullptr if none.
  const SkuSpec* lookup(std::string_view device_name) const;
  const std::vector<SkuSpec>& skus() const { return skus_; }

 private:
  std::vector<SkuSpec> skus_;
};

// "NVIDIA H200" -> "nvidia-h200": lower case, runs of anything else than [a-z0-9] become '-'.
std::string gpu_slug(std::string_view device_name);

}  // namespace gpucheck
