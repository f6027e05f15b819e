// The contract between the benchmark binaries and the gpucheck tool: what both sides speak,
// written once. The binaries write results that the tool judges; every word they must agree
// on lives here and nowhere else: the counter names (with their display unit and which way
// is better), the prefix that marks a skipped case under Google Benchmark 1.7, the benchmark
// names the tool judges by (the families register their cases with the same functions, so a
// renamed case changes both sides at once), the NVML clock-event (throttle) reasons with one
// meaning each, and the dtype table (gpucheck/core/dtype.hpp, re-exported here). Pure C++:
// no CUDA header, so compare/ includes it as the families do.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpucheck/core/dtype.hpp"

namespace gpucheck::contract {

using gpucheck::DType;
using gpucheck::DTypeInfo;
using gpucheck::kDTypes;

// ---- Counters ----------------------------------------------------------------------------

// Which way a counter is better. `none`: a fact about the run (a count, a mask, a size), not
// something that gets better or worse.
enum class Better { higher, lower, none };

struct CounterInfo {
  std::string_view name;  // the key in a benchmark's JSON entry
  std::string_view unit;  // as people write it: "TFLOP/s", "GB/s", "µs", "%", "MHz", "°C"; "" for a count
  Better better;
};

// The counter names, for `state.counters[...]` (const char*: they build std::string keys).
namespace counter {
// Rates (the case's figure, next to real_time).
inline constexpr const char* TFLOPS = "TFLOPS";
inline constexpr const char* GBps = "GBps";
inline constexpr const char* busbw_GBps = "busbw_GBps";
inline constexpr const char* algbw_GBps = "algbw_GBps";
inline constexpr const char* us_per_launch = "us_per_launch";
inline constexpr const char* us_per_node = "us_per_node";
inline constexpr const char* us_total = "us_total";
inline constexpr const char* pct_of_peak = "pct_of_peak";
inline constexpr const char* pct_of_link = "pct_of_link";
inline constexpr const char* latency_us = "latency_us";
// The engine's, on every case.
inline constexpr const char* samples = "samples";
inline constexpr const char* cv_pct = "cv_pct";
inline constexpr const char* batch = "batch";
inline constexpr const char* throttled_samples = "throttled_samples";
inline constexpr const char* throttled = "throttled";
inline constexpr const char* clock_event_reasons = "clock_event_reasons";
inline constexpr const char* sm_clock_MHz = "sm_clock_MHz";
inline constexpr const char* host_ref_us = "host_ref_us";
inline constexpr const char* host_ref_max_us = "host_ref_max_us";
inline constexpr const char* method = "method";  // the case's way of measuring (a whole number, 1 first)
// Report-only (never the gated figure): power-burst cases' clock and power, host-bound cases' low percentile.
inline constexpr const char* sm_clock_mean_MHz = "sm_clock_mean_MHz";
inline constexpr const char* power_W = "power_W";
inline constexpr const char* p10_us = "p10_us";
// Report-only: the groups of samples a case timed, each after redrawing the memory state
// (harness MeasureOptions::groups), and how far their medians spread.
inline constexpr const char* groups = "groups";
inline constexpr const char* group_spread_pct = "group_spread_pct";
// A family's own.
inline constexpr const char* ranks = "ranks";
inline constexpr const char* wrong = "wrong";
inline constexpr const char* mismatches = "mismatches";
inline constexpr const char* burn_iterations = "burn_iterations";
inline constexpr const char* sm_clock_min_MHz = "sm_clock_min_MHz";
inline constexpr const char* temperature_max_C = "temperature_max_C";
inline constexpr const char* pcie_gen_load = "pcie_gen_load";
inline constexpr const char* pcie_width_load = "pcie_width_load";
}  // namespace counter

inline constexpr std::array<CounterInfo, 33> kCounters{{
    {counter::TFLOPS, "TFLOP/s", Better::higher},
    {counter::GBps, "GB/s", Better::higher},
    {counter::busbw_GBps, "GB/s", Better::higher},  // nccl-tests' bus bandwidth
    {counter::algbw_GBps, "GB/s", Better::higher},  // bytes / time
    {counter::us_per_launch, "µs", Better::lower},
    {counter::us_per_node, "µs", Better::lower},
    {counter::us_total, "µs", Better::lower},
    {counter::pct_of_peak, "%", Better::higher},  // of the SKU's dense datasheet peak
    {counter::pct_of_link, "%", Better::higher},  // of the PCIe link's bandwidth
    {counter::latency_us, "µs", Better::lower},
    {counter::samples, "", Better::none},
    {counter::cv_pct, "%", Better::lower},  // the samples' coefficient of variation
    {counter::batch, "", Better::none},     // calls per sample
    {counter::throttled_samples, "", Better::lower},
    {counter::throttled, "", Better::lower},          // 1 when a slowing reason was seen (kSlowingReasons)
    {counter::clock_event_reasons, "", Better::none},  // NVML mask, OR of every reading
    {counter::sm_clock_MHz, "MHz", Better::higher},    // the lowest reading
    {counter::host_ref_us, "µs", Better::lower},       // the host reference, typical (warm) reading
    {counter::host_ref_max_us, "µs", Better::lower},   // its largest reading (docs/GATE.md, host-bound)
    {counter::method, "", Better::none},               // read as Benchmark::method, not a figure
    {counter::sm_clock_mean_MHz, "MHz", Better::none}, // the mean reading over a burst's timed samples
    {counter::power_W, "W", Better::none},             // energy counter's delta over them / their time
    {counter::p10_us, "µs", Better::lower},            // the samples' 10th percentile (host-bound modes)
    {counter::groups, "", Better::none},               // groups of samples, the fastest reported
    {counter::group_spread_pct, "%", Better::none},    // their medians' slowest over fastest, less 1
    {counter::ranks, "", Better::none},
    {counter::wrong, "", Better::lower},
    {counter::mismatches, "", Better::lower},
    {counter::burn_iterations, "", Better::none},
    {counter::sm_clock_min_MHz, "MHz", Better::higher},
    {counter::temperature_max_C, "°C", Better::lower},
    {counter::pcie_gen_load, "", Better::higher},
    {counter::pcie_width_load, "", Better::higher},
}};

// The row of a counter name; nullptr for a name that is not ours.
const CounterInfo* counter_info(std::string_view name);
// Its unit as people write it ("GB/s"); "" for a counter that is not ours or has none.
inline std::string_view unit_of(std::string_view name) {
  const CounterInfo* c = counter_info(name);
  return c == nullptr ? std::string_view() : c->unit;
}

// The figure of a case when several rates are present, in this order (the first present wins).
inline constexpr std::array<std::string_view, 5> kPreferredRates{counter::TFLOPS, counter::GBps, counter::busbw_GBps,
                                                                 counter::algbw_GBps, counter::us_per_launch};

// ---- Skipped cases -------------------------------------------------------------------------

// Google Benchmark 1.7 has no SkipWithMessage: a skipped case is an error_message starting
// with this, which the tool reads as skipped (1.8+ writes "skipped": true).
inline constexpr std::string_view kUnsupportedPrefix = "unsupported: ";

// ---- No device ---------------------------------------------------------------------------

// A binary or GPU test that sees no device says so in one line, "gpucheck: " then this prefix,
// the reason and ")": the runner, the GPU tests' skips and the scripts key on the prefix.
inline constexpr std::string_view kNoDevicePrefix = "no CUDA device found (";

// A binary whose --benchmark_filter matches none of its cases says so in one line,
// "gpucheck: " then this prefix and the filter, and exits 2 having written no results: the
// runner, which passes one filter to every binary, reads it as "nothing of this family".
inline constexpr std::string_view kNoMatchPrefix = "no case matches --benchmark_filter=";
// Whether a binary's last stderr line (with or without "gpucheck: ") is that line.
bool says_no_match(std::string_view line);

// What the machine says about its NVIDIA driver, before any CUDA call is believed: with no
// driver at all the runtime reports "CUDA driver version is insufficient", which sends a
// newcomer to upgrade a driver that is not there.
struct DriverFacts {
  bool libcuda_loads = false;        // dlopen("libcuda.so.1") succeeds
  bool kernel_module_loaded = false;  // /proc/driver/nvidia exists
};
DriverFacts probe_driver();  // reads the machine (dlopen, stat); everything else here is pure

// The reason inside the brackets: the driver's absence when that is the truth, else the
// runtime's own words ("cudaGetDeviceCount: <reason>").
std::string no_device_reason(const DriverFacts& driver, std::string_view runtime_reason);
// The whole text after "gpucheck: ": kNoDevicePrefix + reason + ")".
std::string no_device_text(const DriverFacts& driver, std::string_view runtime_reason);

// ---- Benchmark names the tool judges by ----------------------------------------------------

namespace family {
inline constexpr std::string_view matmul = "matmul", memory = "memory", pcie = "pcie", nccl = "nccl", conv = "conv",
                                  attention = "attention", bmm = "bmm", launch = "launch";
}

// A family's binary is bench_<family> (DESIGN.md, runner contract), whose cases are named
// <family>/...: the one place the tool turns a binary into the family it reports, and back.
inline constexpr std::string_view kBinaryPrefix = "bench_";
std::string binary_of_family(std::string_view family);
// "bench_matmul" -> "matmul"; "" for a name without the prefix (or with nothing after it).
std::string_view family_of_binary(std::string_view binary);
// Whether a benchmark name is one of `family`'s cases ("matmul/cublaslt/..." for "matmul").
bool in_family(std::string_view benchmark, std::string_view family);

// Name segments that the families register and the tool reads (accept's checks, the report's
// pairs). A family builds its names from these.
namespace segment {
// matmul variants (linear: a burst with PyTorch F.linear's operand order, y = x W^T)
inline constexpr std::string_view cublaslt = "cublaslt", cublaslt_sustained = "cublaslt_sustained", burn = "burn",
                                  linear = "linear";
// pcie directions and host memory
inline constexpr std::string_view h2d = "h2d", d2h = "d2h", bidir = "bidir", pinned = "pinned", pageable = "pageable";
// memory variants
inline constexpr std::string_view memcpy_d2d = "memcpy_d2d", copy_kernel = "copy_kernel";
// conv layouts
inline constexpr std::string_view nchw = "nchw", nhwc = "nhwc";
// attention backends
inline constexpr std::string_view naive = "naive", flash = "flash", cudnn = "cudnn";
// launch modes
inline constexpr std::string_view eager = "eager", graph = "graph";
// nccl collectives
inline constexpr std::string_view allreduce = "allreduce";
}  // namespace segment

// matmul/<variant>/<dtype>/<m>x<n>x<k>
std::string matmul_name(std::string_view variant, DType t, std::int64_t m, std::int64_t n, std::int64_t k);
// The square size of the GEMMs acceptance holds to the datasheet, and of the burn.
inline constexpr std::int64_t kAcceptGemmSize = 8192;
// The GEMM whose TFLOP/s acceptance holds to the peak of `peak` (a specs.json key: "bf16",
// "fp8", ...): matmul/cublaslt/<dtype>/8192x8192x8192, fp8 measured as fp8e4m3. nullopt
// for a key no dtype has.
std::optional<std::string> accept_gemm_name(std::string_view peak);
// The peaks acceptance checks (specs.json keys), in the order it reports them.
inline constexpr std::array<std::string_view, 4> kAcceptGemmPeaks{"bf16", "fp16", "tf32", "fp8"};
// The burn: matmul/burn/bf16/8192x8192x8192.
inline constexpr DType kBurnDType = DType::bf16;
std::string burn_name();

// pcie/<direction>/<memory>/<size>
std::string pcie_name(std::string_view direction, std::string_view memory, std::uint64_t bytes);
// The copies acceptance holds to the link: pcie/<h2d|d2h>/pinned/256MiB.
inline constexpr std::uint64_t kAcceptPcieBytes = std::uint64_t{256} << 20;
inline constexpr std::array<std::string_view, 2> kAcceptPcieDirections{segment::h2d, segment::d2h};
std::string accept_pcie_name(std::string_view direction);

// memory/<variant>/<dtype>/<size>
std::string memory_name(std::string_view variant, std::string_view dtype, std::uint64_t bytes);
// The copies acceptance holds to the HBM datasheet: memory/<variant>/u8/2GiB.
inline constexpr std::uint64_t kAcceptMemoryBytes = std::uint64_t{2} << 30;
inline constexpr DType kAcceptMemoryDType = DType::u8;
inline constexpr std::array<std::string_view, 2> kAcceptMemoryVariants{segment::copy_kernel, segment::memcpy_d2d};
std::string accept_memory_name(std::string_view variant);

// The all-reduce acceptance reads: nccl/allreduce/fp32/1GiB/g<N>, N the ranks. The prefix
// up to N, and the full name.
inline constexpr std::uint64_t kAcceptNcclBytes = std::uint64_t{1} << 30;
inline constexpr DType kAcceptNcclDType = DType::fp32;
std::string accept_nccl_prefix();
std::string accept_nccl_name(int nranks);
// nccl/<variant>/<dtype>/<size>/g<ranks>
std::string nccl_name(std::string_view variant, DType t, std::uint64_t bytes, int nranks);

// Segment pairs the report shows as a speed-up (candidate over reference) where two names
// differ only there.
struct SegmentPair {
  std::string_view candidate, reference;
};
inline constexpr std::array<SegmentPair, 13> kReportPairs{{
    // Attention: fusion over the naive path (ours and cuDNN's), and ours over cuDNN's.
    {segment::flash, segment::naive},
    {segment::cudnn, segment::naive},
    {segment::flash, segment::cudnn},
    {"fused", "naive"},  // the torch reference's names (ci/torch_reference.py)
    {"sdpa", "naive"},
    {segment::nhwc, segment::nchw},
    {segment::graph, segment::eager},
    {to_string(DType::fp16), to_string(DType::fp32)},
    {to_string(DType::bf16), to_string(DType::fp32)},
    {to_string(DType::tf32), to_string(DType::fp32)},
    {"fp8", to_string(DType::fp16)},  // the peak key: any fp8 format
    {segment::pinned, segment::pageable},
    {"einsum", family::bmm},  // torch reference
}};

// ---- Clock-event (throttle) reasons ---------------------------------------------------------

// What a reason means for a measurement. slowing: the card is slowed by heat or a fault
// (hardware slowdown, thermal, power brake): a sample under it is slowed and acceptance fails
// the card. power_cap: the software power limiter, how a GPU runs under sustained load:
// reported, never counted. idle: no load. other: a setting (application clocks, sync boost,
// display clock), informational.
enum class ReasonClass { slowing, power_cap, idle, other };

struct ClockEventReason {
  std::uint64_t bit;
  std::string_view name;  // as results and reports print it
  ReasonClass cls;
};

inline constexpr std::array<ClockEventReason, 9> kClockEventReasons{{
    {0x1, "gpu_idle", ReasonClass::idle},
    {0x2, "applications_clocks_setting", ReasonClass::other},
    {0x4, "sw_power_cap", ReasonClass::power_cap},
    {0x8, "hw_slowdown", ReasonClass::slowing},
    {0x10, "sync_boost", ReasonClass::other},
    {0x20, "sw_thermal_slowdown", ReasonClass::slowing},
    {0x40, "hw_thermal_slowdown", ReasonClass::slowing},
    {0x80, "hw_power_brake_slowdown", ReasonClass::slowing},
    {0x100, "display_clock_setting", ReasonClass::other},
}};

constexpr std::uint64_t reason_mask(ReasonClass c) {
  std::uint64_t m = 0;
  for (const ClockEventReason& r : kClockEventReasons)
    if (r.cls == c) m |= r.bit;
  return m;
}
constexpr std::uint64_t known_reasons() {
  std::uint64_t m = 0;
  for (const ClockEventReason& r : kClockEventReasons) m |= r.bit;
  return m;
}
// A sample under one of these is slowed (throttled_samples), the counter `throttled` is 1,
// and acceptance fails the card: hw_slowdown, sw_thermal, hw_thermal, hw_power_brake.
inline constexpr std::uint64_t kSlowingReasons = reason_mask(ReasonClass::slowing);
// Power capping alone: reported, not counted.
inline constexpr std::uint64_t kPowerCapReasons = reason_mask(ReasonClass::power_cap);
// What acceptance calls a fault: the slowing reasons, by definition the same bits.
inline constexpr std::uint64_t kFaultReasons = kSlowingReasons;
static_assert(kSlowingReasons == (0x8 | 0x20 | 0x40 | 0x80) && kPowerCapReasons == 0x4);

// Names of the set bits, comma-separated, in bit order; unknown bits as "other(0x...)";
// "none" for 0.
std::string describe_reasons(std::uint64_t mask);
// True when the mask holds a slowing reason (power capping alone is not).
constexpr bool is_slowing(std::uint64_t mask) { return (mask & kSlowingReasons) != 0; }

}  // namespace gpucheck::contract
