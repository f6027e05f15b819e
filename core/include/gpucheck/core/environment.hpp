// The environment is part of every measurement: the variables that change what is timed,
// listed once. Every benchmark binary records the ones that are set in its results' context
// (kEnvironmentContextKey) and stops before measuring, with one line naming the variable and
// exit 2, under one that changes what a figure means; compare and gate show a difference from
// the baseline's environment above the table. docs/GATE.md says why each is where it is.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucheck {

enum class EnvEffect {
  Refuse,  // a figure measured under it would not mean what its name says: the binary stops
  Record,  // the figure is still the figure; recorded and shown beside a difference
};

struct TimingVariable {
  std::string_view name;  // or a prefix ending in '_' ("NCCL_")
  bool prefix = false;
  EnvEffect effect = EnvEffect::Record;
  // For Refuse: the values under which it is harmless ("" = set but empty). Any other value refuses.
  std::span<const std::string_view> harmless = {};
  std::string_view why;  // one line: what it changes
};

// Every variable that changes what gpucheck times, in display order.
std::span<const TimingVariable> timing_variables();

using Environment = std::vector<std::pair<std::string, std::string>>;  // name, value; sorted by name

// The timing variables set in `envp` (a NULL-terminated "NAME=value" array, as environ).
Environment timing_environment(const char* const* envp);

// The first set variable that stops a binary, as the one line it prints: "CUDA_LAUNCH_BLOCKING=1
// makes every kernel launch wait for the kernel ...; unset it to measure". nullopt: none.
std::optional<std::string> environment_refusal(const Environment& env);

// The context key every binary writes ("" when none is set, so a results file that lacks the
// key was recorded before the environment was), and its value's text: "A=1; B=x".
inline constexpr std::string_view kEnvironmentContextKey = "gpucheck_environment";
std::string environment_record(const Environment& env);
// The record read back; values holding "; " are not split (names never hold '=' or ';').
Environment parse_environment_record(std::string_view record);

struct EnvironmentChange {
  std::string name;
  std::optional<std::string> base, cur;  // nullopt: not set on that side
};
// Variables set on one side only or with different values, by name.
std::vector<EnvironmentChange> environment_changes(const Environment& base, const Environment& cur);

}  // namespace gpucheck
