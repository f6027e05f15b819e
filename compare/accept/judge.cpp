// The acceptance judge: result files grouped into GPUs (by the context's UUID), each GPU held
// to its SKU's datasheet and link, and every GPU of a node to the others. It reads only what
// the files hold and says "not checked" (with the reason) for what they do not: an old or a
// quick-suite file is judged as far as it goes and never fails for lack of data.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "accept/judge.hpp"
#include "rules/explain.hpp"
#include "base/format.hpp"
#include "rules/stats.hpp"
#include "gpucheck/core/dtype.hpp"
#include "gpucheck/core/pcie.hpp"
#include "gpucheck/core/specs.hpp"
#include "gpucheck/core/telemetry.hpp"
#include "gpucheck/core/text.hpp"

namespace gpucheck::compare {
namespace {

// NVML clocks-event reasons that mean the card is being slowed by a fault or by heat:
// hw_slowdown 0x8, sw_thermal 0x20, hw_thermal 0x40, hw_power_brake 0x80. sw_power_cap (0x4)
// is the normal state of a card under GEMM load and is only reported.
constexpr std::uint64_t kFaultReasons = 0x8 | 0x20 | 0x40 | 0x80;
constexpr std::uint64_t kPowerCap = 0x4;
constexpr std::string_view kFaultNames[] = {"hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"};

constexpr const char* kBurn = "matmul/burn/bf16/8192x8192x8192";

bool known(const std::string& s) { return !s.empty() && s != "unknown"; }

std::vector<std::string> split(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  for (std::size_t at = 0;;) {
    const std::size_t next = s.find(sep, at);
    out.emplace_back(trim(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at)));
    if (next == std::string_view::npos) break;
    at = next + sep.size();
  }
  return out;
}

std::optional<long long> to_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  std::size_t used = 0;
  try {
    const long long v = std::stoll(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string num(double v) {
  const double a = std::fabs(v);
  return format_double(a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : "%.2f", v);
}
std::string whole(double v) { return format_double("%.0f", v); }
std::string pct(double fraction) { return format_pct(std::round(fraction * 1000.0) / 10.0); }

std::string link_text(int gen, int width) {
  return (gen > 0 ? "Gen" + std::to_string(gen) : std::string("Gen?")) + " " +
         (width > 0 ? "x" + std::to_string(width) : std::string("x?"));
}

// One GPU: its files' benchmarks by name and their contexts' values, " | "-joined values of
// merged files split apart again.
struct GpuView {
  AcceptGpu info;
  std::string node;  // host, for alike and NCCL
  std::string key;
  std::vector<const Results*> files;
  std::map<std::string, const Benchmark*> bench;
  std::map<std::string, std::vector<std::string>> ctx;  // known values only
  std::set<std::string> recorded;                         // keys present, "unknown" or not
  const SkuSpec* sku = nullptr;

  [[nodiscard]] const Benchmark* find(const std::string& name) const {
    const auto it = bench.find(name);
    return it == bench.end() ? nullptr : it->second;
  }
  // A copy, not a reference: callers pass literals, and g++ 13 warns (-Wdangling-reference)
  // about a reference returned from a call with a temporary argument.
  [[nodiscard]] std::vector<std::string> values(const std::string& k) const {
    const auto it = ctx.find(k);
    return it == ctx.end() ? std::vector<std::string>{} : it->second;
  }
  [[nodiscard]] std::vector<long long> ints(const std::string& k) const {
    std::vector<long long> out;
    for (const auto& v : values(k))
      if (const auto i = to_int(v)) out.push_back(*i);
    return out;
  }
  [[nodiscard]] int max_int(const std::string& k) const {
    const auto v = ints(k);
    return v.empty() ? 0 : static_cast<int>(*std::max_element(v.begin(), v.end()));
  }
  [[nodiscard]] int min_int(const std::string& k) const {
    const auto v = ints(k);
    return v.empty() ? 0 : static_cast<int>(*std::min_element(v.begin(), v.end()));
  }
  [[nodiscard]] std::string sku_id() const { return sku ? sku->id : std::string("unknown"); }
  // Why a context entry has no value: the driver did not say, or the file predates it.
  [[nodiscard]] std::string why_unknown(const std::string& k) const {
    return recorded.count(k) ? k + " unknown (NVML did not report it)"
                             : k + " not in the results (written by an older gpucheck)";
  }
};

void add_context(GpuView& g, const Results& r) {
  for (const auto& [k, v] : r.context) {
    g.recorded.insert(k);
    auto& vs = g.ctx[k];
    for (auto& part : split(v, " | "))
      if (known(part) && std::find(vs.begin(), vs.end(), part) == vs.end()) vs.push_back(std::move(part));
  }
}

// The context's one value of `key` in one file, or an error when the file holds several.
Expected<std::string> single(const Results& r, const std::string& key) {
  const std::string v = r.context_value(key);
  if (!known(v)) return std::string("unknown");
  const auto parts = split(v, " | ");
  std::set<std::string> distinct(parts.begin(), parts.end());
  distinct.erase("unknown");
  if (distinct.size() > 1)
    return Error{r.source, "holds results of several GPUs (" + key + " " + v + "): give each GPU its own files"};
  return distinct.empty() ? std::string("unknown") : *distinct.begin();
}

const SkuSpec* find_sku(const SpecDb& specs, const GpuView& g) {
  for (const auto& n : g.values("gpu_name"))
    if (const SkuSpec* s = specs.lookup(n)) return s;
  for (const auto& id : g.values("gpu_sku"))
    for (const auto& s : specs.skus())
      if (s.id == id) return &s;
  return nullptr;
}

Expected<std::vector<GpuView>> group_by_gpu(const std::vector<Results>& files, const SpecDb& specs) {
  std::vector<GpuView> gpus;
  std::map<std::string, std::size_t> by_key;
  for (const Results& r : files) {
    auto uuid = single(r, "gpu_uuid");
    if (!uuid) return uuid.error();
    auto pci = single(r, "gpu_pci_bus_id");
    if (!pci) return pci.error();
    const std::string index = split(r.context_value("gpucheck_device_index"), " | ").front();
    const std::string host = split(r.context_value("host_name"), " | ").front();
    std::string id = known(*uuid) ? "uuid " + *uuid
                     : known(*pci) ? "pci " + normalize_pci_bus_id(*pci)
                     : known(index) ? "index " + index
                                    : "unidentified";
    const std::string key = host + "\x1f" + id;
    auto [slot, fresh] = by_key.try_emplace(key, gpus.size());
    if (fresh) {
      GpuView g;
      g.key = key;
      g.node = host;
      g.info.host = host;
      g.info.index = index;
      g.info.uuid = *uuid;
      g.info.pci_bus_id = *pci;
      gpus.push_back(std::move(g));
    }
    GpuView& g = gpus[slot->second];
    g.files.push_back(&r);
    g.info.files.push_back(r.source);
    if (!known(g.info.index)) g.info.index = index;
    if (!known(g.info.pci_bus_id)) g.info.pci_bus_id = *pci;
    add_context(g, r);
    for (const Benchmark& b : r.benchmarks) {
      const auto [it, added] = g.bench.emplace(b.name, &b);
      if (!added)
        return Error{r.source, "benchmark \"" + b.name + "\" of the same GPU (" + id + ") is also in " +
                                   it->second->source + ": give each case once"};
    }
  }
  std::set<std::string> hosts;
  for (GpuView& g : gpus) {
    hosts.insert(g.node);
    g.sku = find_sku(specs, g);
    g.info.name = g.values("gpu_name").empty() ? "unknown" : g.values("gpu_name").front();
    g.info.sku = g.sku_id();
  }
  std::sort(gpus.begin(), gpus.end(), [](const GpuView& a, const GpuView& b) {
    const auto ia = to_int(a.info.index), ib = to_int(b.info.index);
    return std::tie(a.node, ia, a.key) < std::tie(b.node, ib, b.key);
  });
  std::map<std::string, int> seen;
  for (GpuView& g : gpus) {
    std::string label = "GPU " + (known(g.info.index) ? g.info.index : std::string("?"));
    if (known(g.info.pci_bus_id)) label += " " + g.info.pci_bus_id;
    if (hosts.size() > 1) label = g.node + " " + label;
    g.info.label = label;
    ++seen[label];
  }
  for (GpuView& g : gpus)  // two GPUs read as one label (a copied file, a renumbering): tell them apart
    if (seen[g.info.label] > 1 && known(g.info.uuid)) g.info.label += " (" + g.info.uuid + ")";
  return gpus;
}

AcceptCheck make(const GpuView& g, std::string check, std::string item) {
  AcceptCheck c;
  c.gpu = g.info.label;
  c.check = std::move(check);
  c.item = std::move(item);
  return c;
}

// ---- 1. PCIe link ----------------------------------------------------------------------

struct Link {
  int gen = 0, width = 0;
};

int min_known(int a, int b) { return a > 0 && b > 0 ? std::min(a, b) : std::max(a, b); }

struct LinkFindings {
  AcceptCheck check;
  Link reference;            // the link bandwidth is measured against (0: none)
  std::string reference_why;  // "read under load", "the SKU's link", ...
};

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

LinkFindings check_pcie_link(const GpuView& g) {
  LinkFindings f{make(g, "pcie_link", ""), {}, {}};
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

// ---- 2, 3. rates against a reference ---------------------------------------------------

struct Rate {
  std::string check, item, benchmark, counter, unit;
  std::optional<double> reference;  // 100%: the link's rate, the datasheet figure
  std::string reference_short;      // in the floor: "Gen5 x16", "datasheet 4800"
  std::string reference_text;       // in notes: "Gen5 x16 (63.02 GB/s, read under load)"
  double fraction = 0;
  std::string no_reference_why;
};

// The case's counter, or a check that says why there is none.
std::optional<double> counter_or_why(const Benchmark* b, const std::string& name, const std::string& counter,
                                     AcceptCheck& c) {
  c.benchmark = name;
  if (b == nullptr) {
    c.note = "no " + name + " in the results";
    return std::nullopt;
  }
  if (b->state == RunState::Errored) {
    c.verdict = AcceptVerdict::Fail;
    c.note = name + " errored: " + (b->message.empty() ? "no message" : b->message);
    return std::nullopt;
  }
  if (b->state == RunState::Skipped) {
    c.note = name + " skipped: " + (b->message.empty() ? "no message" : b->message);
    return std::nullopt;
  }
  const auto it = b->counters.find(counter);
  if (it == b->counters.end()) {
    c.note = name + " has no " + counter + " counter";
    return std::nullopt;
  }
  return it->second;
}

AcceptCheck check_rate(const GpuView& g, const Rate& r) {
  AcceptCheck c = make(g, r.check, r.item);
  c.unit = r.unit;
  const auto v = counter_or_why(g.find(r.benchmark), r.benchmark, r.counter, c);
  if (r.reference && *r.reference > 0) {
    c.limit = r.fraction * *r.reference;
    c.floor = ">= " + num(*c.limit) + " " + r.unit + " (" + pct(r.fraction) + " of " + r.reference_short + ")";
  }
  if (!v) return c;
  c.value = *v;
  c.measured = num(*v) + " " + r.unit;
  if (!c.limit) {
    c.note = r.no_reference_why;
    return c;
  }
  const double share = *v / *r.reference;
  if (*v >= *c.limit) {
    c.verdict = AcceptVerdict::Pass;
    c.note = pct(share) + " of " + r.reference_text;
  } else {
    c.verdict = AcceptVerdict::Fail;
    c.note = c.measured + " is " + pct(share) + " of " + r.reference_text + ", below the floor of " + pct(r.fraction);
  }
  return c;
}

std::vector<AcceptCheck> check_pcie_bandwidth(const GpuView& g, const LinkFindings& link, const AcceptLimits& lim) {
  std::vector<AcceptCheck> out;
  const PcieLink l{link.reference.gen, link.reference.width};
  const double rate = pcie_link_GBps(l);
  for (const char* dir : {"h2d", "d2h"}) {
    Rate r{"pcie_bandwidth", dir, std::string("pcie/") + dir + "/pinned/256MiB", "GBps", "GB/s", {}, {}, {},
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

std::vector<AcceptCheck> check_memory(const GpuView& g, const AcceptLimits& lim) {
  std::vector<AcceptCheck> out;
  for (const auto& [item, fraction] : lim.memory_fraction) {
    Rate r{"memory", item, "memory/" + item + "/u8/2GiB", "GBps", "GB/s", {}, {}, {}, fraction,
           g.sku ? "the SKU has no memory bandwidth in specs.json" : "unknown SKU: no datasheet figure"};
    if (g.sku && g.sku->memory_GBps > 0) {
      r.reference = g.sku->memory_GBps;
      r.reference_short = "datasheet " + num(g.sku->memory_GBps);
      r.reference_text = r.reference_short + " GB/s";
    }
    out.push_back(check_rate(g, r));
  }
  return out;
}

// The dtype as a benchmark name spells it: the SKU's "fp8" peak is measured as fp8e4m3.
std::string gemm_name(const std::string& key) {
  return "matmul/cublaslt/" + std::string(key == "fp8" ? "fp8e4m3" : key) + "/8192x8192x8192";
}

std::vector<AcceptCheck> check_gemm(const GpuView& g, const AcceptLimits& lim) {
  std::vector<AcceptCheck> out;
  for (const std::string key : {"bf16", "fp16", "tf32", "fp8"}) {
    const auto f = lim.gemm_fraction.find(key);
    if (f == lim.gemm_fraction.end()) continue;
    const std::string name = gemm_name(key);
    std::optional<double> peak;
    if (g.sku)
      if (const auto dt = parse_dtype(key == "fp8" ? "fp8e4m3" : key)) peak = g.sku->peak(*dt);
    // A SKU without the path (fp8 on A100) that did not run it has nothing to check.
    if (g.sku && !peak && g.find(name) == nullptr) continue;
    Rate r{"gemm", key, name, "TFLOPS", "TFLOP/s", {}, {}, {}, f->second,
           g.sku ? "the SKU has no " + key + " peak in specs.json" : "unknown SKU: no datasheet figure"};
    if (peak) {
      r.reference = *peak;
      r.reference_short = "datasheet " + num(*peak);
      r.reference_text = r.reference_short + " TFLOP/s";
    }
    out.push_back(check_rate(g, r));
  }
  return out;
}

// ---- 4. clocks and health ---------------------------------------------------------------

bool fault_name(const std::string& name) {
  return std::any_of(std::begin(kFaultNames), std::end(kFaultNames),
                     [&](std::string_view f) { return name.starts_with(f); });
}

struct Reasons {
  std::uint64_t mask = 0;
  int cases = 0;                              // cases that carried the counter
  std::vector<std::string> fault_cases;       // cases with a fault reason
  int power_capped = 0;                       // cases with sw_power_cap
  std::optional<double> sm_min, sm_max;       // sm_clock_MHz over the cases
};

Reasons case_reasons(const GpuView& g, bool burn) {
  Reasons r;
  for (const auto& [name, b] : g.bench) {
    if ((name == kBurn) != burn || b->state != RunState::Ok) continue;
    if (const auto m = counter_mask(*b, "clock_event_reasons")) {
      ++r.cases;
      r.mask |= *m;
      if (*m & kFaultReasons) r.fault_cases.push_back(name);
      if (*m & kPowerCap) ++r.power_capped;
    }
    for (const char* k : {"sm_clock_MHz", "sm_clock_min_MHz"}) {
      if (const auto it = b->counters.find(k); it != b->counters.end() && it->second > 0) {
        r.sm_min = std::min(r.sm_min.value_or(it->second), it->second);
        r.sm_max = std::max(r.sm_max.value_or(it->second), it->second);
      }
    }
  }
  return r;
}

std::string list_some(const std::vector<std::string>& xs, std::size_t most = 3) {
  std::string s;
  for (std::size_t i = 0; i < xs.size() && i < most; ++i) s += (i ? ", " : "") + xs[i];
  if (xs.size() > most) s += " and " + std::to_string(xs.size() - most) + " more";
  return s;
}

AcceptCheck check_clocks(const GpuView& g) {
  AcceptCheck c = make(g, "clocks", "");
  c.floor = "no hw_slowdown, thermal or power-brake reason";
  const Reasons r = case_reasons(g, false);
  std::vector<std::string> ctx_names, ctx_faults;
  for (const auto& v : g.values("throttle_reasons"))
    for (const auto& n : split(v, ","))
      if (known(n) && n != "none" && std::find(ctx_names.begin(), ctx_names.end(), n) == ctx_names.end()) {
        ctx_names.push_back(n);
        if (fault_name(n)) ctx_faults.push_back(n);
      }
  const bool ctx_known = !g.values("throttle_reasons").empty();
  if (r.cases == 0 && !ctx_known) {
    c.note = "no clock_event_reasons counters and throttle_reasons unknown";
    return c;
  }
  c.measured = r.cases > 0 ? describe_clock_event_reasons(r.mask) : (ctx_names.empty() ? "none" : list_some(ctx_names, 9));
  std::vector<std::string> notes;
  if (r.mask & kFaultReasons)
    notes.push_back(describe_clock_event_reasons(r.mask & kFaultReasons) + " during " + list_some(r.fault_cases));
  if (!ctx_faults.empty()) notes.push_back(list_some(ctx_faults, 9) + " in the context's throttle_reasons");
  if (!notes.empty()) {
    c.verdict = AcceptVerdict::Fail;
    for (const auto& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
    c.note += ": the card slows itself (heat, power delivery or a fault)";
    return c;
  }
  c.verdict = AcceptVerdict::Pass;
  if (r.power_capped > 0)
    notes.push_back("sw_power_cap in " + std::to_string(r.power_capped) + " of " + std::to_string(r.cases) +
                    " cases (normal under GEMM load)");
  else if (std::find(ctx_names.begin(), ctx_names.end(), "sw_power_cap") != ctx_names.end())
    notes.push_back("sw_power_cap seen (normal under GEMM load)");
  if (r.cases == 0) notes.push_back("context throttle_reasons only (no per-case counters)");
  if (r.sm_min) {
    std::string s = "SM clock " + whole(*r.sm_min) + "-" + whole(*r.sm_max) + " MHz";
    if (const int mx = g.max_int("sm_clock_max_MHz"); mx > 0) s += " (max " + std::to_string(mx) + ")";
    notes.push_back(s);
  }
  for (const auto& n : notes) c.note += (c.note.empty() ? "" : "; ") + n;
  return c;
}

std::vector<AcceptCheck> check_ecc(const GpuView& g, const AcceptConfig& cfg) {
  std::vector<AcceptCheck> out;
  AcceptCheck mode = make(g, "ecc", "mode");
  const std::vector<std::string> modes = g.values("ecc");
  const std::optional<bool> required = cfg.ecc_for(g.sku_id());
  mode.floor = required.value_or(false) ? "enabled" : "-";
  if (modes.empty()) {
    mode.note = g.why_unknown("ecc");
  } else {
    mode.measured = list_some(modes, 9);
    const bool off = std::find(modes.begin(), modes.end(), "enabled") == modes.end() ||
                     std::find(modes.begin(), modes.end(), "disabled") != modes.end();
    if (!off) {
      mode.verdict = AcceptVerdict::Pass;
    } else if (required.value_or(false)) {
      mode.verdict = AcceptVerdict::Fail;
      mode.note = "ECC is " + mode.measured + "; " + g.sku_id() + " has it (accept.json skus." + g.sku_id() + ".ecc)";
    } else {
      mode.verdict = AcceptVerdict::Reported;
      mode.note = "ECC " + mode.measured + (required ? "; not required for " + g.sku_id() : "; no ECC rule for " + g.sku_id());
    }
  }
  out.push_back(mode);

  AcceptCheck unc = make(g, "ecc", "uncorrected");
  unc.floor = "0 since the driver loaded";
  const auto vol = g.ints("ecc_uncorrected_volatile");
  if (vol.empty()) {
    unc.note = g.why_unknown("ecc_uncorrected_volatile");
  } else {
    const long long n = *std::max_element(vol.begin(), vol.end());
    unc.value = static_cast<double>(n);
    unc.measured = std::to_string(n);
    unc.verdict = n > 0 ? AcceptVerdict::Fail : AcceptVerdict::Pass;
    if (n > 0) unc.note = std::to_string(n) + " uncorrectable ECC errors since the driver loaded";
  }
  if (const auto agg = g.ints("ecc_uncorrected_aggregate"); !agg.empty()) {
    const long long n = *std::max_element(agg.begin(), agg.end());
    if (n > 0)
      unc.note += (unc.note.empty() ? "" : "; ") + std::to_string(n) + " over the card's life (aggregate, reported only)";
  }
  out.push_back(unc);
  return out;
}

std::vector<AcceptCheck> check_memory_health(const GpuView& g) {
  std::vector<AcceptCheck> out;
  struct Flag {
    const char* key;
    const char* fault;
  };
  const bool remap_known = !g.values("remapped_rows_pending").empty() || !g.values("remapped_rows_failure").empty();
  for (const Flag& f : {Flag{"remapped_rows_pending", "rows wait for a remap: reset the GPU, then test again"},
                        Flag{"remapped_rows_failure", "a row remap failed: the card needs service"},
                        Flag{"retired_pages_pending", "pages wait for retirement: reset the GPU, then test again"}}) {
    const std::vector<std::string> vs = g.values(f.key);
    // Cards that remap rows (Ampere on) do not retire pages: NVML leaves that entry unknown.
    if (vs.empty() && remap_known && std::string_view(f.key) == "retired_pages_pending") continue;
    AcceptCheck c = make(g, "memory_health", f.key);
    c.floor = "no";
    if (vs.empty()) {
      c.note = g.why_unknown(f.key);
    } else {
      c.measured = list_some(vs, 9);
      const bool yes = std::find(vs.begin(), vs.end(), "yes") != vs.end();
      const bool no = std::find(vs.begin(), vs.end(), "no") != vs.end();
      c.verdict = yes ? AcceptVerdict::Fail : no ? AcceptVerdict::Pass : AcceptVerdict::NotChecked;
      if (yes) c.note = f.fault;
      else if (!no) c.note = std::string(f.key) + " reads \"" + c.measured + "\", expected yes or no";
    }
    if (std::string_view(f.key) == "remapped_rows_pending") {
      const int unc = g.max_int("remapped_rows_uncorrectable"), cor = g.max_int("remapped_rows_correctable");
      if (unc > 0 || cor > 0)
        c.note += (c.note.empty() ? "" : "; ") + std::to_string(unc) + " rows remapped for uncorrectable and " +
                  std::to_string(cor) + " for correctable errors";
    }
    out.push_back(c);
  }
  return out;
}

// ---- 7. burn ------------------------------------------------------------------------------

AcceptCheck check_burn(const GpuView& g) {
  AcceptCheck c = make(g, "burn", "bf16");
  c.floor = "0 mismatches, no hw/thermal throttle";
  c.unit = "TFLOP/s";
  const Benchmark* b = g.find(kBurn);
  if (b == nullptr) {
    c.benchmark = kBurn;
    c.note = "no burn in the results (gpucheck accept --burn SECONDS)";
    return c;
  }
  const auto mism = counter_or_why(b, kBurn, "mismatches", c);
  if (c.verdict == AcceptVerdict::Fail || b->state != RunState::Ok) return c;
  auto counter = [&](const char* k) -> std::optional<double> {
    const auto it = b->counters.find(k);
    return it == b->counters.end() ? std::nullopt : std::optional<double>(it->second);
  };
  if (const auto t = counter("TFLOPS")) {
    c.value = *t;
    c.measured = num(*t) + " TFLOP/s";
  }
  std::vector<std::string> info;
  // gbench owns an entry's "iterations" field, so the burn counts its GEMMs as burn_iterations.
  if (const auto it = counter("burn_iterations")) info.push_back(whole(*it) + " iterations");
  if (mism) info.push_back(whole(*mism) + " mismatches");
  if (const auto s = counter("sm_clock_min_MHz")) info.push_back("SM clock min " + whole(*s) + " MHz");
  if (const auto t = counter("temperature_max_C")) info.push_back("max " + whole(*t) + " C");
  const Reasons r = case_reasons(g, true);
  if (const auto ts = counter("throttled_samples"); ts && *ts > 0)
    info.push_back(whole(*ts) + " throttled samples (" + describe_clock_event_reasons(r.mask) + ")");
  std::string facts;
  for (const auto& i : info) facts += (facts.empty() ? "" : ", ") + i;
  if (mism && *mism > 0) {
    c.verdict = AcceptVerdict::Fail;
    c.note = whole(*mism) + " mismatches: wrong results under sustained load (" + facts + ")";
  } else if (r.mask & kFaultReasons) {
    c.verdict = AcceptVerdict::Fail;
    c.note = describe_clock_event_reasons(r.mask & kFaultReasons) + " during the burn (" + facts + ")";
  } else if (!mism) {
    c.note = kBurn + std::string(" has no mismatches counter: results not verified");
  } else {
    c.verdict = AcceptVerdict::Pass;
    c.note = facts;
  }
  return c;
}

// ---- 5. all GPUs alike ---------------------------------------------------------------

struct Figure {
  std::string label, benchmark, counter, unit;
};

std::vector<Figure> alike_figures() {
  std::vector<Figure> f{{"pcie h2d", "pcie/h2d/pinned/256MiB", "GBps", "GB/s"},
                        {"pcie d2h", "pcie/d2h/pinned/256MiB", "GBps", "GB/s"},
                        {"memory copy_kernel", "memory/copy_kernel/u8/2GiB", "GBps", "GB/s"},
                        {"memory memcpy_d2d", "memory/memcpy_d2d/u8/2GiB", "GBps", "GB/s"}};
  for (const std::string key : {"bf16", "fp16", "tf32", "fp8"})
    f.push_back({"gemm " + key, gemm_name(key), "TFLOPS", "TFLOP/s"});
  f.push_back({"burn bf16", kBurn, "TFLOPS", "TFLOP/s"});
  return f;
}

std::optional<double> figure(const GpuView& g, const Figure& f) {
  const Benchmark* b = g.find(f.benchmark);
  if (b == nullptr || b->state != RunState::Ok) return std::nullopt;
  const auto it = b->counters.find(f.counter);
  if (it == b->counters.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

// Each GPU against the median of the OTHER GPUs of its group (leave-one-out: with two GPUs
// the slow one is named, not both); only the slow side fails.
std::map<const GpuView*, std::vector<AcceptCheck>> check_alike(const std::vector<const GpuView*>& group,
                                                               double allowed) {
  std::map<const GpuView*, std::vector<AcceptCheck>> out;
  if (group.size() < 2) {
    for (const GpuView* g : group) {
      AcceptCheck c = make(*g, "alike", "");
      c.note = "the only " + g->info.name + " of its node in the results: nothing to compare with";
      out[g].push_back(c);
    }
    return out;
  }
  for (const GpuView* g : group) {
    int compared = 0;
    double worst = 0;
    std::string worst_label;
    for (const Figure& f : alike_figures()) {
      const auto mine = figure(*g, f);
      if (!mine) continue;
      std::vector<double> others;
      std::vector<std::string> who;
      for (const GpuView* o : group)
        if (o != g)
          if (const auto v = figure(*o, f)) {
            others.push_back(*v);
            who.push_back(o->info.index);
          }
      if (others.empty()) continue;
      ++compared;
      const double ref = median(others);
      if (!(ref > 0)) continue;
      const double shortfall = 1.0 - *mine / ref;
      if (compared == 1 || shortfall > worst) {
        worst = shortfall;
        worst_label = f.label;
      }
      if (shortfall > allowed) {
        AcceptCheck c = make(*g, "alike", f.label);
        c.verdict = AcceptVerdict::Fail;
        c.benchmark = f.benchmark;
        c.unit = f.unit;
        c.value = *mine;
        c.limit = ref * (1.0 - allowed);
        c.measured = num(*mine) + " " + f.unit;
        c.floor = ">= " + num(*c.limit) + " " + f.unit + " (" + pct(1.0 - allowed) + " of " + num(ref) + ")";
        c.note = "outlier: " + f.label + " " + c.measured + " is " + pct(shortfall) +
                 " below the median of the other GPUs (" + num(ref) + " " + f.unit + (who.size() == 1 ? ", GPU " : ", GPUs ") +
                 list_some(who, 16) +
                 "), more than the " + pct(allowed) + " allowed";
        out[g].push_back(c);
      }
    }
    if (!out[g].empty()) continue;
    AcceptCheck c = make(*g, "alike", "");
    if (compared == 0) {
      c.note = "no figure that another GPU of the node also has";
    } else {
      c.verdict = AcceptVerdict::Pass;
      c.floor = "within " + pct(allowed) + " of the others' median";
      c.measured = std::to_string(compared) + " figures";
      c.note = worst > 0 ? "lowest: " + worst_label + " " + pct(worst) + " below the others' median"
                         : "none below the others' median";
    }
    out[g].push_back(c);
  }
  return out;
}

// ---- 6. NCCL ---------------------------------------------------------------------------------

std::vector<AcceptCheck> check_nccl(const std::vector<const GpuView*>& node, const AcceptConfig& cfg) {
  std::vector<AcceptCheck> out;
  const std::string host = node.front()->node;
  const std::string label = "node " + (known(host) ? host : std::string("(host unknown)"));
  std::map<std::string, std::pair<const Benchmark*, const GpuView*>> cases;  // one per name
  static constexpr std::string_view kPrefix = "nccl/allreduce/fp32/1GiB/g";
  for (const GpuView* g : node)
    for (const auto& [name, b] : g->bench)
      if (name.starts_with(kPrefix)) cases.emplace(name, std::pair{b, g});
  if (cases.empty()) {
    if (node.size() < 2) return out;  // one GPU: nothing to all-reduce over
    AcceptCheck c;
    c.gpu = label;
    c.check = "nccl";
    c.item = "allreduce";
    c.note = "no nccl/allreduce/fp32/1GiB/g<N> in the results";
    out.push_back(c);
    return out;
  }
  for (const auto& [name, found] : cases) {
    const auto ranks = to_int(name.substr(kPrefix.size()));
    AcceptCheck c;
    c.gpu = label;
    c.check = "nccl";
    c.item = "allreduce g" + name.substr(kPrefix.size());
    c.unit = "GB/s";
    const auto busbw = counter_or_why(found.first, name, "busbw_GBps", c);
    const int n = ranks ? static_cast<int>(*ranks) : 0;
    const auto floor = cfg.nccl_floor(found.second->sku_id(), n);
    if (floor) {
      c.limit = *floor;
      c.floor = ">= " + num(*floor) + " GB/s (accept.json, " + found.second->sku_id() + " x" + std::to_string(n) + ")";
    }
    if (!busbw) {
      out.push_back(c);
      continue;
    }
    c.value = *busbw;
    c.measured = num(*busbw) + " GB/s busbw";
    std::string others;
    if (n > 0 && static_cast<std::size_t>(n) != node.size())
      others = "; ran over " + std::to_string(n) + (n == 1 ? " GPU" : " GPUs") + ", the node's results hold " +
               std::to_string(node.size());
    if (n == 1) {
      c.verdict = AcceptVerdict::Reported;
      c.note = "one rank: busbw is 0 by definition" + others;
    } else if (!floor) {
      c.verdict = AcceptVerdict::Reported;
      c.note = "no floor set for " + found.second->sku_id() + " x" + std::to_string(n) + " (accept.json)" + others;
    } else {
      c.verdict = *busbw >= *floor ? AcceptVerdict::Pass : AcceptVerdict::Fail;
      c.note = (c.verdict == AcceptVerdict::Fail ? c.measured + " is below the floor" : std::string()) + others;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string_view to_string(AcceptVerdict v) {
  switch (v) {
    case AcceptVerdict::Pass: return "pass";
    case AcceptVerdict::Fail: return "FAIL";
    case AcceptVerdict::Reported: return "reported";
    case AcceptVerdict::NotChecked: return "not checked";
  }
  return "?";
}

std::string AcceptCheck::line() const {
  return gpu + ": " + check + (item.empty() ? "" : " " + item) + ": " + note;
}

int AcceptReport::count(AcceptVerdict v) const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [v](const AcceptCheck& c) { return c.verdict == v; }));
}

Expected<AcceptReport> judge(const std::vector<Results>& per_file, const SpecDb& specs, const AcceptConfig& config) {
  if (per_file.empty()) return Error{"", "no results to judge"};
  auto grouped = group_by_gpu(per_file, specs);
  if (!grouped) return grouped.error();
  const std::vector<GpuView>& gpus = *grouped;

  AcceptReport rep;
  rep.config_source = config.source;
  // Nodes in GPU order (sorted by host); alike compares GPUs of one model within a node.
  std::vector<std::string> nodes;
  for (const GpuView& g : gpus)
    if (std::find(nodes.begin(), nodes.end(), g.node) == nodes.end()) nodes.push_back(g.node);
  for (const std::string& node : nodes) {
    std::vector<const GpuView*> in_node;
    std::map<std::string, std::vector<const GpuView*>> models;
    for (const GpuView& g : gpus)
      if (g.node == node) {
        in_node.push_back(&g);
        models[g.sku ? g.sku->id : "name " + g.info.name].push_back(&g);
      }
    std::map<const GpuView*, std::vector<AcceptCheck>> alike;
    for (const auto& [model, group] : models) {
      const double allowed = config.limits_for(group.front()->sku_id()).alike_fraction;
      alike.merge(check_alike(group, allowed));
    }
    for (const GpuView* g : in_node) {
      rep.gpus.push_back(g->info);
      const std::string sku = g->sku_id();
      const AcceptLimits& lim = config.limits_for(sku);
      auto add = [&rep](std::vector<AcceptCheck> cs) {
        for (auto& c : cs) rep.checks.push_back(std::move(c));
      };
      LinkFindings link = check_pcie_link(*g);
      rep.checks.push_back(link.check);
      add(check_pcie_bandwidth(*g, link, lim));
      add(check_memory(*g, lim));
      add(check_gemm(*g, lim));
      rep.checks.push_back(check_clocks(*g));
      add(check_ecc(*g, config));
      add(check_memory_health(*g));
      rep.checks.push_back(check_burn(*g));
      add(alike[g]);
    }
    for (auto& c : check_nccl(in_node, config)) rep.checks.push_back(std::move(c));
  }
  return rep;
}

}  // namespace gpucheck::compare
