// The PCIe link check worded for accept's report; the decision itself is core's
// (gpucheck/core/pcie_link.hpp), which watch shares.
#include "accept/pcie_link.hpp"

namespace gpucheck::compare {
namespace {

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
