// The PCIe link check, decided and then worded. A link is short in a dimension when the
// reading under load (else the most it can train to, else the idle reading) is below the link
// expected; an idle generation below it proves nothing, since idle links drop to save power.
#include "accept/pcie_link.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace gpucheck::compare {
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

// "Gen5 x16", "Gen? x16". Appended piece by piece: g++ 12 at -O3 warns (-Wrestrict, a false
// positive) on `"Gen" + std::to_string(n)` once this is inlined.
std::string link_text(int gen, int width) {
  std::string s = "Gen";
  s += gen > 0 ? std::to_string(gen) : std::string("?");
  s += " x";
  s += width > 0 ? std::to_string(width) : std::string("?");
  return s;
}

std::string read_text(LinkReadAt at) {
  switch (at) {
    case LinkReadAt::UnderLoad: return "read under load";
    case LinkReadAt::AtIdle: return "read at idle";
    case LinkReadAt::Maximum:  // the cause (slot, GPU, NVML maximum) says where this comes from
    case LinkReadAt::None: return "";
  }
  return "";
}

std::string cause_text(LinkCause cause, const std::string& limit) {
  switch (cause) {
    case LinkCause::SlotLimit: return "the slot allows " + limit + " only";
    case LinkCause::GpuMaximum: return "the GPU reports " + limit + " as its maximum";
    case LinkCause::GpuAndSlotMaximum: return "GPU and slot allow " + limit + " at most (NVML)";
    case LinkCause::TrainedNarrow: return "trained narrow: reseat the card or riser";
    case LinkCause::None: return "";
  }
  return "";
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

PcieLinkWords word_pcie_link(const PcieLinkDecision& d) {
  PcieLinkWords w;
  w.floor = link_text(d.want.gen, d.want.width);
  if (d.want.gen > 0 || d.want.width > 0)
    w.floor += " (" + (d.want_from == LinkWantFrom::Sku ? d.sku : std::string("what GPU and slot allow")) + ")";
  w.measured = link_text(d.gen.seen, d.width.seen);
  const std::string gen_how = read_text(d.gen.read_at), width_how = read_text(d.width.read_at);
  const std::string how = gen_how == width_how || width_how.empty() ? gen_how
                          : gen_how.empty()                         ? "width " + width_how
                                                                    : gen_how + "; width " + width_how;
  switch (d.outcome) {
    case LinkOutcome::Short: {
      // An idle generation below the target proves nothing: leave it out of the verdict's link.
      const bool gen_doubtful = d.gen.state == LinkState::IdleLow;
      w.note = "PCIe " + (gen_doubtful ? "x" + std::to_string(d.width.seen) : w.measured) + ", expected " +
               link_text(d.want.gen, d.want.width);
      if (d.gen.state == LinkState::Short && d.gen.cause != LinkCause::None)
        w.note += "; " + cause_text(d.gen.cause, "Gen" + std::to_string(d.gen.cause_value));
      if (d.width.state == LinkState::Short)
        w.note += "; " + cause_text(d.width.cause, "x" + std::to_string(d.width.cause_value));
      if (gen_doubtful)
        w.note += " (" + (width_how.empty() ? "" : "width " + width_how + "; ") + "the generation, Gen" +
                  std::to_string(d.gen.seen) + " at idle, proves nothing)";
      else if (!how.empty())
        w.note += " (" + how + ")";
      break;
    }
    case LinkOutcome::Ok: w.note = how; break;
    case LinkOutcome::NoReading:
      w.note = "no PCIe link reading in the results (pcie_gen_load/pcie_width_load counters or context)";
      break;
    case LinkOutcome::IdleGeneration:
      w.note = "generation read at idle (Gen" + std::to_string(d.gen.seen) +
               "): links drop to a low generation when idle; the accept suite's bench_pcie reads it under load";
      break;
    case LinkOutcome::NoExpectation:
      // With a target known, what is missing is a reading (a width of -16 is none).
      if (d.want.gen > 0 && d.want.width > 0)
        w.note = std::string("no usable PCIe link ") + (d.width.seen <= 0 ? "width" : "generation") +
                 " in the results (missing, zero or negative): not checked against " +
                 link_text(d.want.gen, d.want.width);
      else
        w.note = "no expected link: unknown SKU and no maximum reported";
      break;
  }
  return w;
}

std::string word_link_reference(const PcieLinkDecision& d) {
  switch (d.reference_from) {
    case LinkReferenceFrom::UnderLoad: return "read under load";
    case LinkReferenceFrom::SkuLink: return "the " + d.sku + " link";
    case LinkReferenceFrom::GpuAndSlotMaximum: return "the most GPU and slot allow";
  }
  return "";
}

}  // namespace gpucheck::compare
