// What the acceptance judge reads of the contract with the binaries (gpucheck/core/contract.hpp),
// in one place: the accept suites' case names, built by the same functions the families
// register them with, and the clock-event reasons by class. A renamed benchmark changes both
// sides at once; tests/unit/test_case_tables.cpp checks that every name here is registered.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/dtype.hpp"

namespace gpucheck::compare::accept_names {

inline std::string pcie(std::string_view dir) { return contract::accept_pcie_name(dir); }
inline std::string memory(std::string_view variant) { return contract::accept_memory_name(variant); }
// The SKU's peak key ("fp8") as the GEMM measuring it is named.
inline std::string gemm(std::string_view peak_key) { return contract::accept_gemm_name(peak_key).value_or(""); }
inline std::optional<DType> gemm_dtype(std::string_view peak_key) { return dtype_for_peak_key(peak_key); }
inline std::string burn() { return contract::burn_name(); }
inline std::string nccl_allreduce_prefix() { return contract::accept_nccl_prefix(); }  // + the GPU count

inline constexpr auto kPcieDirections = contract::kAcceptPcieDirections;
inline constexpr auto kMemoryVariants = contract::kAcceptMemoryVariants;  // compared across GPUs
inline constexpr auto kGemmKeys = contract::kAcceptGemmPeaks;             // specs.json's peaks

// The reasons that mean the card is being slowed (heat, power delivery, a fault), and power
// capping, the normal state of a card under GEMM load, only reported.
inline constexpr std::uint64_t kFaultReasons = contract::kFaultReasons;
inline constexpr std::uint64_t kPowerCap = contract::kPowerCapReasons;
// A context throttle_reasons name that is a fault, as telemetry spells it (hw_thermal_slowdown).
bool fault_name(std::string_view name);
// sw_power_cap, as telemetry spells it.
std::string_view power_cap_name();

}  // namespace gpucheck::compare::accept_names
