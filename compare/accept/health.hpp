// What the clocks and burn checks found, as values: the throttle reasons per case and in the
// context, the burn's counters. The rows carry them in `basis`; their notes say the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::compare {

// NVML clocks-event reasons over a GPU's cases (the burn's apart), and the context's.
struct ClockFindings {
  std::uint64_t mask = 0;               // clock_event_reasons ORed over the cases and repetitions
  std::uint64_t fault_mask = 0;         // the part of it that is heat, power delivery or a fault
  int cases = 0;                        // cases that carried the counter
  std::vector<std::string> fault_cases;  // cases with a fault reason
  int power_capped = 0;                 // cases with sw_power_cap
  bool context_known = false;           // the context has throttle_reasons
  std::vector<std::string> context_reasons, context_faults;  // its names ("none" left out)
  std::optional<double> sm_min_MHz, sm_max_MHz;  // sm_clock_MHz / sm_clock_min_MHz over the cases
  int sm_rated_max_MHz = 0;                       // the context's sm_clock_max_MHz (0: unknown)
  // Values that say nothing readable: a throttle_reasons name that is no reason ("garbage",
  // "0x8", "HW_SLOWDOWN"), a clock_event_reasons that is no mask (8.5, 2^53+8, 1e30). Any of
  // them makes the check "not checked" (unless a fault is seen), never a pass.
  std::vector<std::string> unreadable;
};

// The burn's counters (each absent where the case did not write it) and its reasons.
struct BurnFindings {
  std::optional<double> tflops, iterations, mismatches, sm_clock_min_MHz, temperature_max_C, throttled_samples;
  ClockFindings reasons;  // of the burn case alone
};

}  // namespace gpucheck::compare
