#include "watch/rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/stats.hpp"

namespace gpucheck::watch {
namespace th = thresholds;

const std::vector<BoundKind>& bound_kinds() {
  static const std::vector<BoundKind> k{
      {Bound::Idle, "idle", "idle: the GPU ran no kernel", "check which GPU the job runs on (CUDA_VISIBLE_DEVICES, .to(device))"},
      {Bound::Compute, "compute_bound", "compute-bound",
       "the SMs are the limit: lower precision (AMP bf16/fp16, fp8 where supported), channels-last for convolutions, fewer FLOPs"},
      {Bound::Memory, "memory_bound", "memory-bound",
       "HBM bandwidth is the limit: fuse element-wise kernels (torch.compile), channels-last, larger batches, fewer bytes moved"},
      {Bound::Pcie, "pcie_bound", "PCIe/copy-bound (busy but SMs idle)",
       "copies over PCIe are the limit: pinned memory and non_blocking copies overlapped with compute, keep data on the GPU, "
       "preprocess on the GPU"},
      {Bound::Launch, "launch_bound", "launch/latency-bound (busy but SMs idle)",
       "small kernels and host launch gaps: CUDA Graphs (torch.compile mode=\"reduce-overhead\"), fuse small kernels, larger batches"},
      {Bound::Starved, "starved", "starved (idle between steps)",
       "the GPU waits for input: more DataLoader workers, pin_memory=True and prefetching, a faster disk or a cache, overlap host work"},
      {Bound::Stalled, "stalled", "stalls (the GPU busy between pauses)",
       "the GPU waits in pauses, not every step: asynchronous checkpointing (torch.distributed.checkpoint async_save), "
       "evaluation in a separate job or less often, a loader that prefetches its next shard before the current one runs out"},
      {Bound::Busy, "busy", "busy, no single limit",
       "profile one step (torch.profiler or Nsight Systems) to see which kernels dominate"},
      {Bound::NoVerdict, "no_verdict", "no verdict", "the command failed before it ran: its own error says why"},
  };
  return k;
}

namespace {
template <typename E>
const KindRow<E>& row_of(const std::vector<KindRow<E>>& table, E e) {
  for (const auto& k : table)
    if (k.kind == e) return k;
  return table.front();
}
}  // namespace

const BoundKind& kind_of(Bound b) { return row_of(bound_kinds(), b); }

const std::vector<HostSymptomKind>& host_symptom_kinds() {
  static const std::vector<HostSymptomKind> k{
      {HostSymptom::OneCore, "one_core_saturated", "one CPU core at 100%",
       "one host thread is the limit (a DataLoader with num_workers=0, Python-side preprocessing): add loader workers"},
      {HostSymptom::AllCores, "all_cores_busy", "all CPU cores busy",
       "the host is the limit: lighter or GPU-side transforms (DALI), fewer workers per GPU, a larger host"},
      {HostSymptom::IoWait, "iowait", "iowait (the disk)", "reads wait on the disk: a faster disk, a local NVMe copy or an in-memory cache"},
      {HostSymptom::DiskReads, "disk_reads", "disk reads",
       "the job reads its input from disk as the GPU waits: a local NVMe copy, a page-cache-sized or in-memory dataset, "
       "more loader workers reading ahead, a packed format (WebDataset, FFCV) with larger reads"},
  };
  return k;
}

const HostSymptomKind& kind_of(HostSymptom h) { return row_of(host_symptom_kinds(), h); }

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Mean of what `get` reads over the points in [from, to]; empty when nothing was read. A
// non-finite reading (GPM gave NaN for DRAM bandwidth in one H200 sample) counts as not read:
// one NaN made the whole figure NaN ("DRAM bandwidth -nan%").
template <typename P, typename F>
std::optional<double> mean_of(const std::vector<P>& pts, double from, double to, F get) {
  double sum = 0.0;
  int n = 0;
  for (const auto& p : pts) {
    if (p.t_s < from || p.t_s > to) continue;
    if (auto v = get(p); v && std::isfinite(static_cast<double>(*v))) {
      sum += static_cast<double>(*v);
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

bool is_active(const GpuSample& s) {
  return (s.util_gpu_pct && *s.util_gpu_pct >= th::kActiveUtilPct) || (s.sm_active_pct && *s.sm_active_pct >= th::kActiveUtilPct);
}

// Where the job's work starts: the first busy run (util over kStallUtilPct) of kStallMinSeconds
// or longer. Before it is set-up (context creation's blip, then library loads and compilation:
// a bf16 GEMM loop on a fresh H200 read util 2% for 0.1 s, then 0% for 4.9 s before its first
// GEMM), not a pause of the job. from_s when no run is that long.
double work_start(const GpuTimeline& g, double from_s, double to_s) {
  std::optional<double> run_from;
  for (const auto& p : g.points) {
    if (p.t_s < from_s || p.t_s > to_s || !p.s.util_gpu_pct) continue;
    if (*p.s.util_gpu_pct <= th::kStallUtilPct) {
      run_from.reset();
      continue;
    }
    if (!run_from) run_from = p.t_s;
    if (p.t_s - *run_from >= th::kStallMinSeconds) return *run_from;
  }
  return from_s;
}

}  // namespace

GpuFigures gpu_figures(const GpuTimeline& g, const std::optional<Window>& steps) {
  GpuFigures f;
  f.samples = static_cast<int>(g.points.size());
  bool any = false;
  for (const auto& p : g.points)
    if (is_active(p.s)) {
      if (!any) f.active_from_s = p.t_s;
      f.active_to_s = p.t_s;
      any = true;
    }
  if (!any)  // never 1% util: the samples whose SMs were active at all, if any
    for (const auto& p : g.points)
      if (p.s.sm_active_pct && *p.s.sm_active_pct > th::kFaintSmActivePct) {
        if (!f.faint) f.active_from_s = p.t_s;
        f.active_to_s = p.t_s;
        f.faint = any = true;
      }
  if (any && !f.faint) {  // set-up before the job's first busy run is not the job's work
    const double from = work_start(g, f.active_from_s, f.active_to_s);
    f.setup_s = from - f.active_from_s;
    f.active_from_s = from;
  }
  if (!any) {  // figures over the whole run, so an idle GPU still shows its power and memory
    if (!g.points.empty()) {
      f.active_from_s = g.points.front().t_s;
      f.active_to_s = g.points.back().t_s;
    }
  } else if (steps && steps->to_s > steps->from_s) {
    const auto in = std::count_if(g.points.begin(), g.points.end(),
                                  [&](const GpuPoint& p) { return p.t_s >= steps->from_s && p.t_s <= steps->to_s; });
    if (in >= th::kStepsWindowMinSamples) {
      f.active_from_s = steps->from_s;
      f.active_to_s = steps->to_s;
      f.over_steps = true;
    }
  }
  const double a = f.active_from_s, b = f.active_to_s;
  using S = GpuPoint;
  f.util_pct = mean_of(g.points, a, b, [](const S& p) { return p.s.util_gpu_pct; });
  f.power_W = mean_of(g.points, a, b, [](const S& p) { return p.s.power_W; });
  f.power_limit_W = mean_of(g.points, a, b, [](const S& p) { return p.s.power_limit_W; });
  f.sm_clock_MHz = mean_of(g.points, a, b, [](const S& p) { return p.s.sm_clock_MHz; });
  f.sm_clock_max_MHz = mean_of(g.points, a, b, [](const S& p) { return p.s.sm_clock_max_MHz; });
  f.sm_active_pct = mean_of(g.points, a, b, [](const S& p) { return p.s.sm_active_pct; });
  f.sm_occupancy_pct = mean_of(g.points, a, b, [](const S& p) { return p.s.sm_occupancy_pct; });
  f.tensor_active_pct = mean_of(g.points, a, b, [](const S& p) { return p.s.tensor_active_pct; });
  f.dram_bw_pct = mean_of(g.points, a, b, [](const S& p) { return p.s.dram_bw_pct; });
  f.pcie_MBps = mean_of(g.points, a, b, [](const S& p) -> std::optional<double> {
    if (!p.s.pcie_rx_MBps && !p.s.pcie_tx_MBps) return std::nullopt;
    return p.s.pcie_rx_MBps.value_or(0.0) + p.s.pcie_tx_MBps.value_or(0.0);
  });
  int n = 0, slowed = 0, capped = 0;
  for (const auto& p : g.points) {
    if (p.t_s < a || p.t_s > b) continue;
    if (p.s.temperature_C)
      f.temperature_max_C = std::max(f.temperature_max_C.value_or(0.0), static_cast<double>(*p.s.temperature_C));
    if (p.s.mem_used_bytes)
      f.mem_used_max_MiB = std::max(f.mem_used_max_MiB.value_or(0.0), static_cast<double>(*p.s.mem_used_bytes) / (1 << 20));
    if (is_active(p.s)) ++f.active_samples;
    if (!p.s.clock_event_reasons) continue;
    ++n;
    f.clock_event_reasons |= *p.s.clock_event_reasons;
    if (contract::is_slowing(*p.s.clock_event_reasons)) ++slowed;
    if ((*p.s.clock_event_reasons & contract::kPowerCapReasons) != 0) ++capped;
  }
  if (n > 0) {
    f.slowed_share = static_cast<double>(slowed) / n;
    f.power_capped_share = static_cast<double>(capped) / n;
  }
  return f;
}

Stalls find_stalls(const GpuTimeline& g, double from_s, double to_s) {
  Stalls s;
  bool in_stall = false;
  double start = 0.0, last_t = from_s;
  auto close = [&](double end) {
    if (in_stall && end - start >= th::kStallMinSeconds) {
      s.starts_s.push_back(start);
      s.ends_s.push_back(end);
      const double d = end - start;
      s.mean_s += d;
      s.longest_s = std::max(s.longest_s, d);
    }
    in_stall = false;
  };
  for (const auto& p : g.points) {
    if (p.t_s < from_s || p.t_s > to_s || !p.s.util_gpu_pct) continue;
    if (*p.s.util_gpu_pct <= th::kStallUtilPct) {
      if (!in_stall) start = last_t;  // it began after the last busy reading
      in_stall = true;
    } else {
      close(p.t_s);
    }
    last_t = p.t_s;
  }
  close(last_t);
  s.count = static_cast<int>(s.starts_s.size());
  if (s.count > 0) {
    if (to_s > from_s) s.share = s.mean_s / (to_s - from_s);
    s.mean_s /= s.count;
  }
  // The GPU between the stalls: util of the readings not inside one.
  double sum = 0.0;
  int n = 0;
  for (const auto& p : g.points) {
    if (p.t_s < from_s || p.t_s > to_s || !p.s.util_gpu_pct) continue;
    // The stalls are in time order and apart: the last one starting before this reading is the
    // only one it can be inside (a search per reading: a record of a million stalls is not n²).
    const auto after = std::upper_bound(s.starts_s.begin(), s.starts_s.end(), p.t_s);
    if (after != s.starts_s.begin()) {
      const auto i = static_cast<std::size_t>(after - s.starts_s.begin()) - 1;
      if (p.t_s > s.starts_s[i] && p.t_s < s.ends_s[i]) continue;
    }
    sum += *p.s.util_gpu_pct;
    ++n;
  }
  if (n > 0) s.util_between_pct = sum / n;
  if (s.count >= th::kPeriodicMinStalls) {
    std::vector<double> gaps;
    for (std::size_t i = 1; i < s.starts_s.size(); ++i) gaps.push_back(s.starts_s[i] - s.starts_s[i - 1]);
    const auto med = gpucheck::median(gaps);
    if (med && *med > 0) {
      const auto [lo, hi] = std::minmax_element(gaps.begin(), gaps.end());
      if ((*hi - *lo) / *med <= 2 * th::kPeriodicSpread) s.period_s = *med;
    }
  }
  return s;
}

namespace {
// The lower median of the positive values (0 when none): half the readings at least this low.
int lower_median(std::vector<int> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](int x) { return x <= 0; }), v.end());
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}
// A link reading, 0 where there is none: NVML's 0, or past any link (a corrupted record).
int link_reading(const std::optional<unsigned>& x) {
  return x && *x > 0 && *x <= th::kLinkReadingMax ? static_cast<int>(*x) : 0;
}
}  // namespace

void add_process_reading(std::vector<ProcessShare>& ps, const std::vector<GpuProcess>& listed, const std::vector<int>& tree) {
  for (const GpuProcess& p : listed) {
    auto it = std::find_if(ps.begin(), ps.end(), [&](const ProcessShare& s) { return s.pid == p.pid; });
    if (it == ps.end()) {
      ProcessShare s;
      s.pid = p.pid;
      s.name = p.name;
      s.job = p.pid <= static_cast<unsigned>(std::numeric_limits<int>::max()) &&
              std::binary_search(tree.begin(), tree.end(), static_cast<int>(p.pid));
      it = ps.insert(ps.end(), s);
    }
    ++it->readings;
    if (it->name.empty()) it->name = p.name;
    if (!p.sm_util_pct) continue;
    const double n = ++it->share_readings;
    auto mean = [n](std::optional<double>& m, const std::optional<unsigned>& x) {
      if (x) m = m.value_or(0.0) + (static_cast<double>(*x) - m.value_or(0.0)) / n;
    };
    mean(it->sm_pct, p.sm_util_pct);
    mean(it->mem_pct, p.mem_util_pct);
  }
}

std::vector<ProcessShare> busiest_first(std::vector<ProcessShare> ps) {
  std::stable_sort(ps.begin(), ps.end(), [](const ProcessShare& a, const ProcessShare& b) {
    return a.sm_pct.value_or(-1.0) > b.sm_pct.value_or(-1.0);
  });
  if (ps.size() > th::kMaxProcessesPerGpu) ps.resize(th::kMaxProcessesPerGpu);
  return ps;
}

std::optional<LinkVerdict> judge_link(const GpuTimeline& g) {
  std::vector<int> busy_gen, idle_gen, width;
  LinkVerdict l;
  for (const auto& p : g.points) {
    const GpuSample& s = p.s;
    l.gen_max = std::max(l.gen_max, link_reading(s.pcie_gen_max));
    l.width_max = std::max(l.width_max, link_reading(s.pcie_width_max));
    if (link_reading(s.pcie_width) > 0) width.push_back(link_reading(s.pcie_width));
    if (link_reading(s.pcie_gen) == 0) continue;
    const double traffic = s.pcie_rx_MBps.value_or(0.0) + s.pcie_tx_MBps.value_or(0.0);
    (is_active(s) || traffic >= th::kLinkBusyPcieMBps ? busy_gen : idle_gen).push_back(link_reading(s.pcie_gen));
  }
  if (busy_gen.empty() && idle_gen.empty() && width.empty()) return std::nullopt;
  l.busy_readings = static_cast<int>(busy_gen.size());
  PcieLinkReadings r;  // no SKU: the link is held to the most GPU and system allow (NVML's maximum)
  r.gpu_slot = {l.gen_max, l.width_max};
  const int w = lower_median(width);
  if (!busy_gen.empty()) r.load = {lower_median(busy_gen), w};
  else r.idle = {lower_median(idle_gen), w};
  l.decision = decide_pcie_link(r);
  return l;
}

std::string link_words(const LinkVerdict& l) {
  const LinkDimension& gen = l.decision.gen;
  const LinkDimension& width = l.decision.width;
  // A generation read at idle only proves nothing: left out of the words.
  const bool gen_known = gen.seen > 0 && gen.read_at == LinkReadAt::UnderLoad;
  std::string s = "PCIe";
  if (gen_known) s += " Gen" + std::to_string(gen.seen);
  if (width.seen > 0) s += " x" + std::to_string(width.seen);
  if (!l.gen_short() && !l.width_short()) return s;
  s += " of";
  if (l.gen_short()) s += " Gen" + std::to_string(l.decision.want.gen);
  if (l.width_short()) s += " x" + std::to_string(l.decision.want.width);
  else s += " under load";
  return s;
}

namespace {
// "1234 python 55%": a process and its share of the SMs' time ("-" where NVML gave none).
std::string share_words(const ProcessShare& p) {
  std::string s = std::to_string(p.pid);
  if (!p.name.empty()) s += " " + p.name;
  return s + " " + (p.sm_pct ? fmt("%.0f%%", *p.sm_pct) : std::string("-"));
}

// The shares of a GPU's processes: the neighbour (another job's busiest), and the evidence.
void judge_shares(const GpuTimeline& g, GpuVerdict& v) {
  v.processes = g.processes;
  bool any_share = false;
  for (const auto& p : g.processes) {
    any_share = any_share || p.sm_pct.has_value();
    if (p.job || !g.job_process) continue;  // without the job's own process listed, no one is its neighbour
    if (!v.neighbour || p.sm_pct.value_or(-1.0) > v.neighbour->sm_pct.value_or(-1.0)) v.neighbour = p;
  }
  if (!any_share || !v.neighbour) return;
  std::string job, others;
  for (const auto& p : g.processes) (p.job ? job : others) += ((p.job ? job : others).empty() ? "" : ", ") + share_words(p);
  v.evidence.push_back("SM time by process: the job " + (job.empty() ? std::string("-") : job) + "; another job " + others);
}
}  // namespace

GpuVerdict judge_gpu(const GpuTimeline& g, const std::optional<Window>& steps) {
  GpuVerdict v;
  v.index = g.index;
  v.in_job = g.in_job;
  v.f = gpu_figures(g, steps);
  const GpuFigures& f = v.f;
  v.stalls = find_stalls(g, f.active_from_s, f.active_to_s);
  auto& ev = v.evidence;
  if (!g.other_processes.empty()) {
    std::string who;
    for (const auto& o : g.other_processes) who += (who.empty() ? "" : ", ") + o;
    ev.push_back("shared with " + std::to_string(g.other_processes.size()) + " other process" +
                 (g.other_processes.size() == 1 ? "" : "es") + " (" + who + "): the figures are the whole GPU's");
  }
  judge_shares(g, v);
  v.link = judge_link(g);
  if (v.link && v.link->is_short()) ev.push_back(link_words(*v.link));
  if (f.over_steps)
    ev.push_back("over the steps after warm-up (" + fmt("%.1f", f.active_from_s) + "-" + fmt("%.1f s", f.active_to_s) + ")");
  else if (f.setup_s >= th::kStallMinSeconds)
    ev.push_back("from " + fmt("%.1f s", f.active_from_s) + " (the " + fmt("%.1f s", f.setup_s) + " of set-up before the first busy run left out)");
  if (f.util_pct) ev.push_back("util " + fmt("%.1f%%", *f.util_pct));
  if (f.sm_active_pct) ev.push_back("SM active " + fmt("%.1f%%", *f.sm_active_pct));
  if (f.tensor_active_pct) ev.push_back("tensor active " + fmt("%.1f%%", *f.tensor_active_pct));
  if (f.dram_bw_pct) ev.push_back("DRAM bandwidth " + fmt("%.1f%%", *f.dram_bw_pct));
  if (f.pcie_MBps) ev.push_back("PCIe " + fmt("%.0f MiB/s", *f.pcie_MBps));
  std::optional<double> power_share;
  if (f.power_W && f.power_limit_W && *f.power_limit_W > 0) {
    power_share = *f.power_W / *f.power_limit_W;
    ev.push_back("power " + fmt("%.0f", *f.power_W) + " of " + fmt("%.0f W", *f.power_limit_W));
  }
  if (f.sm_clock_MHz && f.sm_clock_max_MHz) ev.push_back("SM clock " + fmt("%.0f", *f.sm_clock_MHz) + " of " + fmt("%.0f MHz", *f.sm_clock_max_MHz));
  v.throttled = f.slowed_share >= th::kThrottledSampleShare;
  v.power_capped = (power_share && *power_share >= th::kPowerCappedShare) || f.power_capped_share >= 0.5;
  if (f.active_samples == 0) {
    // A job that holds the GPU, or whose kernels ran at all, waits on the host: not idle.
    v.bound = f.faint || (g.in_job && g.job_process) ? Bound::Starved : Bound::Idle;
    if (f.faint) ev.emplace_back("SM active above zero while util stays under 1%: kernels ran, the GPU waited");
    if (g.job_process) ev.emplace_back("NVML lists the job's process on this GPU");
    return v;
  }
  const double util = f.util_pct.value_or(0.0);
  const double pcie = f.pcie_MBps.value_or(0.0);
  const bool stalled = v.stalls.share >= th::kStalledShare && v.stalls.util_between_pct &&
                       *v.stalls.util_between_pct >= th::kStalledBusyBetweenPct;
  if (stalled) {
    v.bound = Bound::Stalled;
  } else if (f.sm_active_pct) {  // GPM: what the SMs did
    const double sm = *f.sm_active_pct;
    if (pcie >= th::kPcieBoundMBps && sm < th::kSmIdlePct) v.bound = Bound::Pcie;
    else if (f.dram_bw_pct && *f.dram_bw_pct >= th::kMemoryBoundDramPct) v.bound = Bound::Memory;
    else if (util >= th::kLaunchMinUtilPct && sm < th::kLaunchSmPerUtil * util) v.bound = Bound::Launch;
    else if (util < th::kStarvedUtilPct) v.bound = Bound::Starved;
    else if (sm >= th::kComputeBoundSmActivePct) v.bound = Bound::Compute;
    else v.bound = Bound::Busy;
  } else {  // NVML alone: power tells busy from "busy but SMs idle"
    ev.push_back("no GPM on this GPU: compute and memory are not told apart, power stands in for SM activity");
    const double share = power_share.value_or(1.0);
    if (pcie >= th::kPcieBoundMBps && share < th::kLowPowerShare) v.bound = Bound::Pcie;
    else if (util < th::kStarvedUtilPct) v.bound = Bound::Starved;
    else if (share < th::kLowPowerShare) v.bound = Bound::Launch;
    else if (share >= th::kHighPowerShare) v.bound = Bound::Compute;
    else v.bound = Bound::Busy;
  }
  if (v.throttled)
    ev.push_back("slowed " + fmt("%.0f%%", 100 * f.slowed_share) + " of the time (" +
                 contract::describe_reasons(f.clock_event_reasons & contract::kSlowingReasons) + ")");
  if (v.stalls.count > 0) {
    std::string s = std::to_string(v.stalls.count) + " stalls of " + fmt("%.1f s", v.stalls.mean_s) + " on average";
    if (v.stalls.period_s) s += ", every " + fmt("%.1f s", *v.stalls.period_s);
    s += ", " + fmt("%.0f%%", 100 * v.stalls.share) + " of the window";
    if (v.stalls.util_between_pct) s += ", util " + fmt("%.0f%%", *v.stalls.util_between_pct) + " between them";
    ev.push_back(s);
  }
  return v;
}

HostFigures host_figures(const std::vector<HostPoint>& host, double from_s, double to_s) {
  HostFigures h;
  using P = HostPoint;
  h.cpu_pct = mean_of(host, from_s, to_s, [](const P& p) { return p.h.cpu_pct; });
  h.busiest_core_pct = mean_of(host, from_s, to_s, [](const P& p) { return p.h.busiest_core_pct; });
  h.iowait_pct = mean_of(host, from_s, to_s, [](const P& p) { return p.h.iowait_pct; });
  h.disk_read_MBps = mean_of(host, from_s, to_s, [](const P& p) { return p.h.disk_read_MBps; });
  h.tree_cpu_pct = mean_of(host, from_s, to_s, [](const P& p) { return p.h.tree_cpu_pct; });
  h.tree_read_MBps = mean_of(host, from_s, to_s, [](const P& p) { return p.h.tree_read_MBps; });
  for (const auto& p : host) {
    h.cores = std::max(h.cores, p.h.cores);
    if (p.t_s >= from_s && p.t_s <= to_s && p.h.tree_rss_MiB)
      h.tree_rss_max_MiB = std::max(h.tree_rss_max_MiB.value_or(0.0), *p.h.tree_rss_MiB);
  }
  return h;
}

std::vector<HostSymptom> host_symptoms(const HostFigures& h) {
  std::vector<HostSymptom> out;
  if (h.cpu_pct && *h.cpu_pct >= th::kAllCoresBusyPct) out.push_back(HostSymptom::AllCores);
  else if (h.busiest_core_pct && *h.busiest_core_pct >= th::kCoreSaturatedPct && h.cpu_pct && *h.cpu_pct < th::kHostMostlyFreePct)
    out.push_back(HostSymptom::OneCore);
  if (h.iowait_pct && *h.iowait_pct >= th::kIoWaitPct) out.push_back(HostSymptom::IoWait);
  // The tree's own reads where recorded, else the disks' (an older record, or another user's job).
  if (const auto& r = h.tree_read_MBps ? h.tree_read_MBps : h.disk_read_MBps; r && *r >= th::kDiskReadsMBps)
    out.push_back(HostSymptom::DiskReads);
  return out;
}

std::optional<std::string> no_verdict(const Timeline& t) {
  if (!t.exit_status || *t.exit_status < th::kFailureStatusMin || *t.exit_status > th::kFailureStatusMax) return std::nullopt;
  bool gpu_ran = false;
  for (const auto& g : t.gpus)
    for (const auto& p : g.points) gpu_ran = gpu_ran || is_active(p.s);
  if (t.duration_s >= th::kFailedEarlySeconds && gpu_ran) return std::nullopt;
  std::string line = "no verdict: the command exited " + std::to_string(*t.exit_status) + " after " + fmt("%.1f s", t.duration_s);
  if (!t.last_stderr_line.empty()) line += ": " + t.last_stderr_line;
  return line;
}

namespace {
// "GPU 3: PCIe Gen5 x8 of x16" for each of the job's GPUs whose link is short.
std::vector<std::string> short_links(const Verdict& v) {
  std::vector<std::string> out;
  for (const auto& g : v.gpus)
    if (g.in_job && g.link && g.link->is_short()) out.push_back("GPU " + std::to_string(g.index) + ": " + link_words(*g.link));
  return out;
}

std::string link_next_step(const std::vector<std::string>& links) {
  std::string which;
  for (const auto& l : links) which += (which.empty() ? "" : ", ") + l;
  return "a PCIe link runs below what GPU and slot allow (" + which +
         "): it caps every copy between host and GPU; reseat the card or its riser, check the slot and the BIOS "
         "link settings, then gpucheck accept (it checks the link under load)";
}

// "; GPU 0 shared with another job (4242 python3)", with the neighbour's share of the SMs' time
// and the job's where NVML gave per-process utilisation.
std::string shared_words(const GpuTimeline& g, const GpuVerdict& gv) {
  if (!g.in_job || g.other_processes.empty()) return "";
  const std::string head = "; GPU " + std::to_string(g.index) + " shared with another job (";
  const ProcessShare* n = gv.neighbour ? &*gv.neighbour : nullptr;
  if (!n || !n->sm_pct)
    return head + g.other_processes.front() + (g.other_processes.size() > 1 ? " and more" : "") + ")";
  std::optional<double> job;
  for (const auto& p : gv.processes)
    if (p.job && p.sm_pct) job = job.value_or(0.0) + *p.sm_pct;
  std::string s = head + std::to_string(n->pid) + (n->name.empty() ? "" : " " + n->name) + ": SM " + fmt("%.0f%%", *n->sm_pct);
  if (job) s += ", the job's " + fmt("%.0f%%", std::min(*job, 100.0));
  return s + ")";
}

std::string stalled_headline(const GpuVerdict& g) {
  const Stalls& st = g.stalls;
  const std::string share = fmt("%.0f%%", 100 * st.share) + " of the run";
  if (st.period_s) return "periodic stalls: " + fmt("%.1f s", st.mean_s) + " every " + fmt("%.1f s", *st.period_s) + ", " + share;
  return std::to_string(st.count) + (st.count == 1 ? " stall" : " stalls") + " of " + fmt("%.1f s", st.mean_s) + " on average, " + share;
}
}  // namespace

Verdict judge(const Timeline& t) {
  Verdict v;
  v.gpu_sampled = !t.gpus.empty();
  double from = 0.0, to = t.duration_s;
  bool window = false;
  std::map<Bound, int> votes;
  bool one_works = false;
  for (const auto& g : t.gpus) {
    v.gpus.push_back(judge_gpu(g, t.steps));
    one_works = one_works || (g.in_job && v.gpus.back().f.active_samples > 0);
  }
  for (auto& gv : v.gpus) {
    // A context alone, on a GPU that ran nothing while another of the job's works, is a GPU the
    // job left idle (a rank mapping), not one that waits on the host.
    if (one_works && gv.bound == Bound::Starved && gv.f.active_samples == 0 && !gv.f.faint) {
      gv.bound = Bound::Idle;
      gv.evidence.emplace_back("idle while another of the job's GPUs works");
    }
    if (!gv.in_job) continue;
    ++votes[gv.bound];
    if (gv.f.active_samples > 0 || gv.f.faint) {
      from = window ? std::min(from, gv.f.active_from_s) : gv.f.active_from_s;
      to = window ? std::max(to, gv.f.active_to_s) : gv.f.active_to_s;
      window = true;
    }
  }
  // The whole run: the job's GPUs' most common limit, an idle GPU only when all are.
  int best = -1;
  for (const auto& k : bound_kinds()) {
    auto it = votes.find(k.kind);
    if (it == votes.end()) continue;
    const int n = k.kind == Bound::Idle && votes.size() > 1 ? 0 : it->second;
    if (n > best) {
      best = n;
      v.bound = k.kind;
    }
  }
  v.host = host_figures(t.host, from, to);
  v.host_symptoms = host_symptoms(v.host);
  // One idle while others work.
  std::vector<const GpuVerdict*> idle, busy;
  for (const auto& g : v.gpus) {
    if (!g.in_job) continue;
    const double u = g.f.util_pct.value_or(0.0);
    if (g.f.active_samples == 0 || u < th::kImbalanceIdlePct) idle.push_back(&g);
    else if (u >= th::kImbalanceBusyPct) busy.push_back(&g);
  }
  if (!idle.empty() && !busy.empty()) {
    auto list = [](const std::vector<const GpuVerdict*>& gs) {
      std::string s;
      double u = 0;
      for (const auto* g : gs) {
        if (!s.empty()) s += ',';
        s += std::to_string(g->index);
        u += g->f.util_pct.value_or(0.0);
      }
      return std::make_pair(s, u / static_cast<double>(gs.size()));
    };
    const auto [is, iu] = list(idle);
    const auto [bs, bu] = list(busy);
    const auto cards = std::count_if(v.gpus.begin(), v.gpus.end(), [](const GpuVerdict& g) { return g.in_job; });
    std::string text = std::to_string(cards) + " cards, " + std::to_string(idle.size()) + " idle: ";
    text += idle.size() == 1 ? "GPU " : "GPUs ";
    text += is;
    text += " (util " + fmt("%.0f%%", iu) + ") while ";
    text += busy.size() == 1 ? "GPU " : "GPUs ";
    text += bs;
    text += busy.size() == 1 ? " works" : " work";
    text += " (util " + fmt("%.0f%%", bu) + ")";
    v.imbalance = text;
  }
  if (const auto med = gpucheck::median(t.step_ms)) v.step_median_ms = *med;

  // The headline: the limit, what goes with it, the step.
  if (auto none = no_verdict(t)) {  // a command that did not run: no advice about the GPU or the host
    v.bound = Bound::NoVerdict;
    v.host_symptoms.clear();
    v.imbalance.reset();
    v.headline = *none;
    v.next_steps.emplace_back(kind_of(Bound::NoVerdict).next_step);
    return v;
  }
  if (!v.gpu_sampled) {
    v.headline = "no GPU was sampled: host side only";
  } else {
    v.headline = kind_of(v.bound).title;
    const GpuVerdict* lead = nullptr;
    for (const auto& g : v.gpus)
      if (g.in_job && g.bound == v.bound) {
        lead = &g;
        break;
      }
    if (lead && v.bound == Bound::Stalled) v.headline = stalled_headline(*lead);
    std::string throttled;  // which of the job's GPUs, where it has several
    int job_gpus = 0, slowed = 0;
    for (const auto& g : v.gpus) {
      if (!g.in_job) continue;
      ++job_gpus;
      if (!g.throttled) continue;
      throttled += (slowed++ ? "," : "") + std::to_string(g.index);
    }
    if (job_gpus == 1 && slowed == 1) v.headline += ", throttled";
    else if (slowed > 0) v.headline += (slowed == 1 ? ", GPU " : ", GPUs ") + throttled + " throttled";
    if (lead && lead->power_capped && v.bound == Bound::Compute) v.headline += ", at its power limit";
    if (lead && v.bound == Bound::Starved) {
      if (v.step_median_ms)
        v.headline += ": a step every " + fmt("%.1f ms", *v.step_median_ms) + ", the GPU busy " +
                      fmt("%.0f%%", lead->f.util_pct.value_or(0.0)) + " of the time";
      else if (lead->stalls.period_s)
        v.headline += ": stalls of " + fmt("%.1f s", lead->stalls.mean_s) + " every " + fmt("%.1f s", *lead->stalls.period_s);
    }
  }
  // A pause's advice is not the loader's: the host's symptoms go with a GPU that waits every step.
  const bool host_matters = v.bound != Bound::Compute && v.bound != Bound::Memory && v.bound != Bound::Stalled;
  if (host_matters)
    for (const auto h : v.host_symptoms) v.headline += std::string("; with ") + kind_of(h).title;
  if (v.imbalance) v.headline += "; " + *v.imbalance;
  const std::vector<std::string> links = short_links(v);
  for (const auto& l : links) v.headline += "; " + l;
  for (std::size_t k = 0; k < t.gpus.size() && k < v.gpus.size(); ++k) v.headline += shared_words(t.gpus[k], v.gpus[k]);
  // A copy-bound job on a short link: the link first, then the copies' own advice.
  if (v.bound == Bound::Pcie && !links.empty()) v.next_steps.push_back(link_next_step(links));
  if (v.gpu_sampled) v.next_steps.push_back(kind_of(v.bound).next_step);
  if (v.bound != Bound::Pcie && !links.empty()) v.next_steps.push_back(link_next_step(links));
  if (host_matters)
    for (const auto h : v.host_symptoms) v.next_steps.emplace_back(kind_of(h).next_step);
  for (const auto& g : v.gpus)
    if (g.in_job && g.throttled) {
      v.next_steps.emplace_back("a slowing clock-event reason is set: check cooling and power delivery (gpucheck accept)");
      break;
    }
  if (v.imbalance) v.next_steps.emplace_back("one GPU of the job idles: check the launcher's rank-to-GPU mapping and the data split");
  return v;
}

}  // namespace gpucheck::watch
