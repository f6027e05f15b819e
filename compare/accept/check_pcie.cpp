// The PCIe checks of one GPU: the link trained (FAIL names the short dimension and its cause:
// the slot, the GPU's maximum, or a card trained narrow), and H2D/D2H pinned bandwidth as a
// share of the rate of the link it ran at (else the link expected).
#include <algorithm>

#include "accept/checks.hpp"
#include "accept/names.hpp"
#include "gpucheck/core/pcie.hpp"

namespace gpucheck::compare::accept_detail {
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

int min_known(int a, int b) { return a > 0 && b > 0 ? std::min(a, b) : std::max(a, b); }

Link load_link(const GpuView& g) {
  Link l;
  for (const auto& [name, b] : g.bench) {
    if (b->state != RunState::Ok) continue;
    for (const auto& [counter, into] : {std::pair{"pcie_gen_load", &l.gen}, std::pair{"pcie_width_load", &l.width}}) {
      const auto it = b->counters.find(counter);
      if (it == b->counters.end() || !(it->second >= 1) || it->second > 64) continue;
      *into = min_known(*into, static_cast<int>(it->second));
    }
  }
  return l;
}

}  // namespace

LinkFindings check_pcie_link(const GpuView& g) {
  LinkFindings f{make_check(g, "pcie_link", ""), {}, {}};
  AcceptCheck& c = f.check;
  const Link load = load_link(g);
  const Link idle{g.max_int("pcie_gen_current"), g.max_int("pcie_width_current")};
  const int gpu_gen = g.max_int("pcie_gen_gpu_max");                           // the GPU alone
  const Link pair{g.min_int("pcie_gen_max"), g.min_int("pcie_width_max")};     // GPU and system
  const Link slot{g.min_int("pcie_gen_slot_max"), g.min_int("pcie_width_slot_max")};
  const Link cap{min_known(pair.gen, slot.gen), min_known(pair.width, slot.width)};

  Link want;
  std::string want_why;
  if (g.sku && g.sku->pcie.gen > 0 && g.sku->pcie.width > 0) {
    want = {g.sku->pcie.gen, g.sku->pcie.width};
    want_why = g.sku->id;
  } else {
    want = {gpu_gen > 0 ? gpu_gen : pair.gen, pair.width};
    want_why = "what GPU and slot allow";
  }
  c.floor = link_text(want.gen, want.width) + (want.gen > 0 || want.width > 0 ? " (" + want_why + ")" : "");

  // Per dimension: the reading to judge (load beats idle), whether it is short, and why.
  enum class State { Ok, Short, IdleLow, Unknown };
  struct Dim {
    State state = State::Unknown;
    int seen = 0;
    std::string how;
  };
  const auto judge_dim = [](int want_v, int load_v, int idle_v, int cap_v, bool idle_trusted) {
    Dim d;
    const int target = want_v > 0 ? want_v : cap_v;
    if (load_v > 0) {
      d.seen = load_v;
      d.how = "read under load";
      d.state = target == 0 ? State::Unknown : load_v < target ? State::Short : State::Ok;
    } else if (cap_v > 0 && target > 0 && cap_v < target) {
      d.seen = cap_v;  // the link cannot train higher than this, whatever it reads now
      d.how = "";  // the cause (slot, GPU, NVML maximum) says where this comes from
      d.state = State::Short;
    } else if (idle_v > 0) {
      d.seen = idle_v;
      d.how = "read at idle";
      d.state = target == 0 ? State::Unknown
                : idle_v >= target ? State::Ok
                : idle_trusted ? State::Short
                               : State::IdleLow;
    }
    return d;
  };
  // Links drop to a low generation when idle to save power, so an idle generation below the
  // target proves nothing; the width is not lowered at idle, so a narrow idle link is real.
  const Dim gen = judge_dim(want.gen, load.gen, idle.gen, cap.gen, false);
  const Dim width = judge_dim(want.width, load.width, idle.width, cap.width, true);
  c.measured = link_text(gen.seen, width.seen);
  if (gen.seen > 0) c.value = gen.seen;

  f.reference = {load.gen > 0 ? load.gen : want.gen > 0 ? want.gen : cap.gen,
                 load.width > 0 ? load.width : want.width > 0 ? want.width : cap.width};
  f.reference_why = load.gen > 0 && load.width > 0 ? "read under load"
                    : g.sku && want.gen > 0       ? "the " + g.sku->id + " link"
                                                  : "the most GPU and slot allow";

  const std::string how = gen.how == width.how || width.how.empty() ? gen.how
                          : gen.how.empty()                          ? "width " + width.how
                                                                     : gen.how + "; width " + width.how;
  if (gen.state == State::Short || width.state == State::Short) {
    c.verdict = AcceptVerdict::Fail;
    // An idle generation below the target proves nothing: leave it out of the verdict's link.
    const bool gen_doubtful = gen.state == State::IdleLow;
    c.note = "PCIe " + (gen_doubtful ? "x" + std::to_string(width.seen) : c.measured) + ", expected " +
             link_text(want.gen, want.width);
    std::vector<std::string> causes;
    const auto gen_s = [](int n) { return "Gen" + std::to_string(n); };
    if (gen.state == State::Short) {
      if (slot.gen > 0 && slot.gen < want.gen) causes.push_back("the slot allows " + gen_s(slot.gen) + " only");
      else if (gpu_gen > 0 && gpu_gen < want.gen) causes.push_back("the GPU reports " + gen_s(gpu_gen) + " as its maximum");
      else if (pair.gen > 0 && pair.gen < want.gen && gpu_gen >= want.gen)
        causes.push_back("the slot allows " + gen_s(pair.gen) + " only");
      else if (pair.gen > 0 && pair.gen < want.gen)
        causes.push_back("GPU and slot allow " + gen_s(pair.gen) + " at most (NVML)");
    }
    if (width.state == State::Short) {
      if (slot.width > 0 && slot.width < want.width) causes.push_back("the slot allows x" + std::to_string(slot.width) + " only");
      else if (pair.width > 0 && pair.width < want.width)
        causes.push_back("GPU and slot allow x" + std::to_string(pair.width) + " at most (NVML)");
      else causes.push_back("trained narrow: reseat the card or riser");
    }
    for (const auto& cause : causes) c.note += "; " + cause;
    if (gen_doubtful)
      c.note += " (" + (width.how.empty() ? "" : "width " + width.how + "; ") + "the generation, " + gen_s(gen.seen) +
                " at idle, proves nothing)";
    else if (!how.empty()) c.note += " (" + how + ")";
  } else if (gen.state == State::Ok && width.state == State::Ok) {
    c.verdict = AcceptVerdict::Pass;
    c.note = how;
  } else if (gen.seen == 0 && width.seen == 0) {
    c.note = "no PCIe link reading in the results (pcie_gen_load/pcie_width_load counters or context)";
  } else if (gen.state == State::IdleLow) {
    c.note = "generation read at idle (Gen" + std::to_string(gen.seen) +
             "): links drop to a low generation when idle; the accept suite's bench_pcie reads it under load";
  } else {
    c.note = "no expected link: unknown SKU and no maximum reported";
  }
  return f;
}

std::vector<AcceptCheck> check_pcie_bandwidth(const GpuView& g, const LinkFindings& link, const AcceptLimits& lim) {
  std::vector<AcceptCheck> out;
  const PcieLink l{link.reference.gen, link.reference.width};
  const double rate = pcie_link_GBps(l);
  for (const std::string_view dir : accept_names::kPcieDirections) {
    Rate r{"pcie_bandwidth", std::string(dir), accept_names::pcie(dir), "GBps", "GB/s", {}, {}, {},
           lim.pcie_bandwidth_fraction, "no link to measure against (no reading, unknown SKU)"};
    if (rate > 0) {
      r.reference = rate;
      r.reference_short = to_string(l);
      r.reference_text = to_string(l) + " (" + num(rate) + " GB/s, " + link.reference_why + ")";
    }
    out.push_back(check_rate(g, r));
  }
  return out;
}

}  // namespace gpucheck::compare::accept_detail
