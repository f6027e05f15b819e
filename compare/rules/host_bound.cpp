// The host-bound rule as a pure function (tests/unit/compare/test_host_bound.cpp holds the
// recorded cases it was built on).
#include "rules/host_bound.hpp"

#include <algorithm>
#include <cmath>

#include "rules/compare.hpp"

namespace gpucheck::compare {

bool stable_reference(const HostReference& r) {
  return r.typical_us > 0 && std::isfinite(r.typical_us) && r.max_us && std::isfinite(*r.max_us) &&
         *r.max_us >= r.typical_us && *r.max_us <= kHostReferenceMaxSpread * r.typical_us;
}

HostBoundJudgement judge_host_bound(const HostBoundInput& in) {
  HostBoundJudgement j;
  j.adjusted_slowdown = in.slowdown;
  const double limit = 1.0 + in.limit_pct / 100.0 * (1.0 + kThresholdSlack);
  if (!in.same_host_cpu) {
    j.outcome = HostBoundOutcome::OtherHostCpu;
    return j;
  }
  if (in.gpu_other_processes > 0) {
    // A neighbour on the GPU slows the host reference too (a process streaming pinned H2D:
    // 2.5x): it is never excused as a slow host.
    j.outcome = HostBoundOutcome::GatedWithNeighbour;
    j.past_limit = in.slowdown > limit;
    return j;
  }
  if (!in.base_ref || !in.cur_ref || !in.base_ref->max_us || !in.cur_ref->max_us) {
    j.reference = ReferenceUse::Absent;
  } else if (!stable_reference(*in.base_ref) || !stable_reference(*in.cur_ref)) {
    j.reference = ReferenceUse::Unstable;
  } else {
    j.ref_ratio = in.cur_ref->typical_us / in.base_ref->typical_us;
    j.reference = j.ref_ratio > 1.0 ? ReferenceUse::Used : ReferenceUse::HostNotSlower;
    // A faster host now never makes the case look worse than measured: only a slower one
    // takes its share out.
    j.ref_ratio = std::max(1.0, j.ref_ratio);
  }
  j.adjusted_slowdown = in.slowdown / j.ref_ratio;
  j.outcome = j.reference == ReferenceUse::Used ? HostBoundOutcome::Adjusted : HostBoundOutcome::Gated;
  j.past_limit = j.adjusted_slowdown > limit;
  return j;
}

}  // namespace gpucheck::compare
