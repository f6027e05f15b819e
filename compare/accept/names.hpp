// Every benchmark name and throttle bit the acceptance judge reads, in one place: what the
// bench_* binaries register and NVML reports, as accept spells it. A renamed benchmark is
// changed here, or its check turns into "not checked".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpucheck::compare::accept_names {

// The cases of the accept suites.
std::string pcie(std::string_view dir);             // "h2d" -> "pcie/h2d/pinned/256MiB"
std::string memory(std::string_view variant);       // "copy_kernel" -> "memory/copy_kernel/u8/2GiB"
std::string gemm(std::string_view key);             // "fp8" -> "matmul/cublaslt/fp8e4m3/8192x8192x8192"
std::string_view gemm_dtype(std::string_view key);  // the SKU's "fp8" peak is measured as fp8e4m3
inline constexpr std::string_view kBurn = "matmul/burn/bf16/8192x8192x8192";
inline constexpr std::string_view kNcclAllreduce = "nccl/allreduce/fp32/1GiB/g";  // + the GPU count

inline constexpr std::string_view kPcieDirections[] = {"h2d", "d2h"};
inline constexpr std::string_view kMemoryVariants[] = {"copy_kernel", "memcpy_d2d"};  // compared across GPUs
inline constexpr std::string_view kGemmKeys[] = {"bf16", "fp16", "tf32", "fp8"};       // specs.json's peaks

// NVML clocks-event reasons that mean the card is being slowed by a fault or by heat:
// hw_slowdown 0x8, sw_thermal 0x20, hw_thermal 0x40, hw_power_brake 0x80. sw_power_cap (0x4)
// is the normal state of a card under GEMM load and is only reported.
inline constexpr std::uint64_t kFaultReasons = 0x8 | 0x20 | 0x40 | 0x80;
inline constexpr std::uint64_t kPowerCap = 0x4;
// The same, as the context's throttle_reasons spells them (the faults as name prefixes).
inline constexpr std::string_view kFaultNames[] = {"hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"};
inline constexpr std::string_view kPowerCapName = "sw_power_cap";

}  // namespace gpucheck::compare::accept_names
