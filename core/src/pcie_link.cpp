// The PCIe link decision. A link is short in a dimension when the reading under load (else the
// most it can train to, else the idle reading) is below the link expected; an idle generation
// below it proves nothing, since idle links drop to save power.
#include "gpucheck/core/pcie_link.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace gpucheck {
namespace {

int min_known(int a, int b) { return a > 0 && b > 0 ? std::min(a, b) : std::max(a, b); }

// The reading to judge (load beats idle), and whether it is short.
LinkDimension judge_dimension(int want, int load, int idle, int cap, bool idle_trusted) {
  LinkDimension d;
  const int target = want > 0 ? want : cap;
  if (load > 0) {
    d.seen = load;
    d.read_at = LinkReadAt::UnderLoad;
    d.state = target == 0 ? LinkState::Unknown : load < target ? LinkState::Short : LinkState::Ok;
  } else if (cap > 0 && target > 0 && cap < target) {
    d.seen = cap;  // the link cannot train higher than this, whatever it reads now
    d.read_at = LinkReadAt::Maximum;
    d.state = LinkState::Short;
  } else if (idle > 0) {
    d.seen = idle;
    d.read_at = LinkReadAt::AtIdle;
    d.state = target == 0 ? LinkState::Unknown
              : idle >= target ? LinkState::Ok
              : idle_trusted ? LinkState::Short
                             : LinkState::IdleLow;
  }
  return d;
}

// Why the generation is short: the slot, the GPU's own maximum, or NVML's maximum of both
// (read as the slot's when the GPU alone could do more).
std::pair<LinkCause, int> gen_cause(const PcieLinkReadings& r, int want) {
  const int slot = r.slot.gen, gpu = r.gpu_gen_max, pair = r.gpu_slot.gen;
  if (slot > 0 && slot < want) return {LinkCause::SlotLimit, slot};
  if (gpu > 0 && gpu < want) return {LinkCause::GpuMaximum, gpu};
  if (pair > 0 && pair < want && gpu >= want) return {LinkCause::SlotLimit, pair};
  if (pair > 0 && pair < want) return {LinkCause::GpuAndSlotMaximum, pair};
  return {LinkCause::None, 0};
}

// Why the width is short: the slot, NVML's maximum of GPU and slot, else the link trained narrow.
std::pair<LinkCause, int> width_cause(const PcieLinkReadings& r, int want) {
  const int slot = r.slot.width, pair = r.gpu_slot.width;
  if (slot > 0 && slot < want) return {LinkCause::SlotLimit, slot};
  if (pair > 0 && pair < want) return {LinkCause::GpuAndSlotMaximum, pair};
  return {LinkCause::TrainedNarrow, 0};
}

}  // namespace

PcieLinkDecision decide_pcie_link(const PcieLinkReadings& r) {
  PcieLinkDecision d;
  d.sku = r.sku;
  const PcieLinkValue cap{min_known(r.gpu_slot.gen, r.slot.gen), min_known(r.gpu_slot.width, r.slot.width)};
  if (!r.sku.empty() && r.sku_link.gen > 0 && r.sku_link.width > 0) {
    d.want = r.sku_link;
    d.want_from = LinkWantFrom::Sku;
  } else {
    d.want = {r.gpu_gen_max > 0 ? r.gpu_gen_max : r.gpu_slot.gen, r.gpu_slot.width};
    d.want_from = LinkWantFrom::GpuAndSlot;
  }
  // The width is not lowered at idle, so a narrow idle link is real; the generation is.
  d.gen = judge_dimension(d.want.gen, r.load.gen, r.idle.gen, cap.gen, false);
  d.width = judge_dimension(d.want.width, r.load.width, r.idle.width, cap.width, true);
  if (d.gen.state == LinkState::Short) std::tie(d.gen.cause, d.gen.cause_value) = gen_cause(r, d.want.gen);
  if (d.width.state == LinkState::Short)
    std::tie(d.width.cause, d.width.cause_value) = width_cause(r, d.want.width);

  d.outcome = d.gen.state == LinkState::Short || d.width.state == LinkState::Short ? LinkOutcome::Short
              : d.gen.state == LinkState::Ok && d.width.state == LinkState::Ok   ? LinkOutcome::Ok
              : d.gen.seen == 0 && d.width.seen == 0                             ? LinkOutcome::NoReading
              : d.gen.state == LinkState::IdleLow                                ? LinkOutcome::IdleGeneration
                                                                                 : LinkOutcome::NoExpectation;

  d.reference = {r.load.gen > 0 ? r.load.gen : d.want.gen > 0 ? d.want.gen : cap.gen,
                 r.load.width > 0 ? r.load.width : d.want.width > 0 ? d.want.width : cap.width};
  d.reference_from = r.load.gen > 0 && r.load.width > 0  ? LinkReferenceFrom::UnderLoad
                     : !r.sku.empty() && d.want.gen > 0 ? LinkReferenceFrom::SkuLink
                                                        : LinkReferenceFrom::GpuAndSlotMaximum;
  return d;
}

}  // namespace gpucheck
