// The acceptance config (baselines/accept.json): the floors each check holds a GPU to, as
// fractions, with per-SKU overrides, the ECC rule and the NCCL floors. Read by the judge only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/expected.hpp"

namespace gpucheck {
class SpecDb;  // gpucheck/core/specs.hpp
}

namespace gpucheck::compare {

// Floors as fractions: of the link's theoretical rate (PCIe), of the datasheet (HBM, GEMM),
// and the allowed shortfall against the other GPUs of the node (alike).
struct AcceptLimits {
  double pcie_bandwidth_fraction = 0.80;
  std::map<std::string, double> memory_fraction{{"copy_kernel", 0.80}, {"memcpy_d2d", 0.80}};
  std::map<std::string, double> gemm_fraction{{"bf16", 0.65}, {"fp16", 0.65}, {"tf32", 0.65}, {"fp8", 0.63}};
  double alike_fraction = 0.10;
};

struct AcceptSkuRules {
  AcceptLimits limits;                          // the defaults with this SKU's overrides applied
  std::optional<bool> ecc;                      // true: ECC must be enabled
  std::map<int, double> nccl_allreduce_busbw_GBps;  // GPU count -> floor (none: reported only)
};

struct AcceptConfig {
  std::string source = "built-in defaults";
  AcceptLimits defaults;
  std::map<std::string, AcceptSkuRules> skus;  // by specs.json id ("nvidia-h200")

  [[nodiscard]] const AcceptLimits& limits_for(const std::string& sku_id) const;
  [[nodiscard]] std::optional<bool> ecc_for(const std::string& sku_id) const;
  [[nodiscard]] std::optional<double> nccl_floor(const std::string& sku_id, int gpus) const;
};

// Strict: unknown keys (other than "_comment"-style keys starting with '_') and fractions
// outside their range are errors naming the file and the key.
Expected<AcceptConfig> parse_accept_config(std::string_view text, const std::string& source);

// Every `skus` key must be an id of the specs in use: a misspelt id ("nvidia-h20O") would drop
// that SKU's rules (ECC, NCCL floors) without a word. An error names the key and the known ids;
// specs with no SKU (none found) check nothing.
Status check_config_skus(const AcceptConfig& config, const SpecDb& specs);

}  // namespace gpucheck::compare
