// The host-bound rule: a case whose figure is host time (eager launch chains, single API
// calls, graph instantiation, copies whose DMA rides on host memory) is gated against a
// baseline of the same host CPU model, and excused only by as much as its host reference
// moved, never outright: the reference is a fixed piece of host work timed warm, before and
// after the case (not after the case's own work, which evicts it), and a reference whose
// readings disagree with each other is not used at all. docs/GATE.md gives the figures.
#pragma once

#include <optional>
#include <string>

namespace gpucheck::compare {

// A side's host reference: its typical reading (the counter host_ref_us) and its largest
// (host_ref_max_us). Without the largest (a baseline recorded before the reference was
// measured warm) the reference is unknown and not used.
struct HostReference {
  double typical_us = 0.0;
  std::optional<double> max_us;
};

// The largest spread of one side's readings (max / typical) for which the reference is
// trusted: a reading 1.5x another means something else ran; measure again.
inline constexpr double kHostReferenceMaxSpread = 1.5;

enum class HostBoundOutcome {
  OtherHostCpu,        // the two sides ran on different host CPU models: shown, not gated
  Gated,               // gated at the limit on the figure as measured
  GatedWithNeighbour,  // another process used the GPU: gated whatever the reference says
  Adjusted,            // the reference moved: gated on the figure with its move taken out
};

enum class ReferenceUse { Used, Absent, Unstable, HostNotSlower };

struct HostBoundInput {
  double slowdown = 1.0;   // cur / base of the gated figure in the worse direction (2.8 = 2.8x slower)
  double limit_pct = 10.0;
  bool same_host_cpu = false;
  int gpu_other_processes = 0;
  std::optional<HostReference> base_ref, cur_ref;
};

struct HostBoundJudgement {
  HostBoundOutcome outcome = HostBoundOutcome::Gated;
  ReferenceUse reference = ReferenceUse::Absent;
  double ref_ratio = 1.0;          // cur / base of the reference (1 when not used)
  double adjusted_slowdown = 1.0;  // slowdown / ref_ratio: what is left to the case itself
  bool past_limit = false;         // adjusted_slowdown beyond the limit (the gate's question)
};

HostBoundJudgement judge_host_bound(const HostBoundInput& in);

// Whether a side's reference can be trusted (max within kHostReferenceMaxSpread of typical).
bool stable_reference(const HostReference& r);

}  // namespace gpucheck::compare
