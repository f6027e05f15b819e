#include "watch/record.hpp"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/filesystem.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/text.hpp"

namespace gpucheck::compare::watch {

using nlohmann::json;
namespace gw = gpucheck::watch;

namespace {

json opt(const std::optional<double>& v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }
template <typename T>
json opt_n(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string fmt_or(const char* f, const std::optional<double>& v, const char* none = "-") {
  return v ? fmt(f, *v) : std::string(none);
}

json share_json(const gw::ProcessShare& p) {
  return {{"pid", p.pid}, {"name", p.name}, {"job", p.job}, {"readings", p.readings}, {"share_readings", p.share_readings},
          {"sm_pct", opt(p.sm_pct)}, {"mem_pct", opt(p.mem_pct)}};
}

json shares_json(const std::vector<gw::ProcessShare>& ps) {
  json a = json::array();
  for (const auto& p : ps) a.push_back(share_json(p));
  return a;
}

// The link as judged: what it ran at (the generation under load, or at idle), its maximum, and
// which dimension is short; null where NVML gave no reading.
json link_json(const std::optional<gw::LinkVerdict>& l) {
  if (!l) return nullptr;
  const auto& d = l->decision;
  auto n = [](int x) { return x > 0 ? json(x) : json(nullptr); };
  const char* gen_read = d.gen.read_at == LinkReadAt::UnderLoad ? "busy" : d.gen.read_at == LinkReadAt::AtIdle ? "idle" : nullptr;
  return {{"gen", n(d.gen.seen)},         {"gen_read", gen_read ? json(gen_read) : json(nullptr)},
          {"width", n(d.width.seen)},     {"gen_max", n(l->gen_max)},
          {"width_max", n(l->width_max)}, {"gen_short", l->gen_short()},
          {"width_short", l->width_short()}, {"short", l->is_short()},
          {"words", gw::link_words(*l)}};
}

json verdict_json(const gw::Verdict& v) {
  json j;
  j["gpu_sampled"] = v.gpu_sampled;
  j["bound"] = gw::kind_of(v.bound).key;
  j["headline"] = v.headline;
  j["next_steps"] = v.next_steps;
  j["host_symptoms"] = json::array();
  for (auto h : v.host_symptoms) j["host_symptoms"].push_back(gw::kind_of(h).key);
  j["imbalance"] = v.imbalance ? json(*v.imbalance) : json(nullptr);
  j["step_median_ms"] = opt(v.step_median_ms);
  j["host"] = {{"cpu_pct", opt(v.host.cpu_pct)},
               {"busiest_core_pct", opt(v.host.busiest_core_pct)},
               {"iowait_pct", opt(v.host.iowait_pct)},
               {"disk_read_MBps", opt(v.host.disk_read_MBps)},
               {"tree_cpu_pct", opt(v.host.tree_cpu_pct)},
               {"tree_rss_max_MiB", opt(v.host.tree_rss_max_MiB)},
               {"tree_read_MBps", opt(v.host.tree_read_MBps)},
               {"cores", v.host.cores}};
  j["gpus"] = json::array();
  for (const auto& g : v.gpus) {
    const auto& f = g.f;
    j["gpus"].push_back({{"index", g.index},
                         {"in_job", g.in_job},
                         {"bound", gw::kind_of(g.bound).key},
                         {"throttled", g.throttled},
                         {"power_capped", g.power_capped},
                         {"evidence", g.evidence},
                         {"active_from_s", f.active_from_s},
                         {"active_to_s", f.active_to_s},
                         {"window", f.over_steps ? "steps" : "active"},
                         {"samples", f.samples},
                         {"active_samples", f.active_samples},
                         {"util_pct", opt(f.util_pct)},
                         {"sm_active_pct", opt(f.sm_active_pct)},
                         {"sm_occupancy_pct", opt(f.sm_occupancy_pct)},
                         {"tensor_active_pct", opt(f.tensor_active_pct)},
                         {"dram_bw_pct", opt(f.dram_bw_pct)},
                         {"pcie_MBps", opt(f.pcie_MBps)},
                         {"power_W", opt(f.power_W)},
                         {"power_limit_W", opt(f.power_limit_W)},
                         {"sm_clock_MHz", opt(f.sm_clock_MHz)},
                         {"sm_clock_max_MHz", opt(f.sm_clock_max_MHz)},
                         {"temperature_max_C", opt(f.temperature_max_C)},
                         {"mem_used_max_MiB", opt(f.mem_used_max_MiB)},
                         {"clock_event_reasons", contract::describe_reasons(f.clock_event_reasons)},
                         {"stalls",
                          {{"count", g.stalls.count},
                           {"mean_s", g.stalls.mean_s},
                           {"longest_s", g.stalls.longest_s},
                           {"period_s", opt(g.stalls.period_s)},
                           {"share", g.stalls.share},
                           {"util_between_pct", opt(g.stalls.util_between_pct)},
                           {"starts_s", g.stalls.starts_s}}}});
    j["gpus"].back()["pcie_link"] = link_json(g.link);
    j["gpus"].back()["processes"] = shares_json(g.processes);
    j["gpus"].back()["neighbour"] = g.neighbour ? share_json(*g.neighbour) : json(nullptr);
  }
  return j;
}

// One GPU's timeline as columns: t, then one array per field (null where not read).
json gpu_columns(const gw::GpuTimeline& g) {
  json c;
  auto col = [&](const char* key, auto get) {
    json a = json::array();
    for (const auto& p : g.points) a.push_back(get(p.s));
    c[key] = std::move(a);
  };
  json t = json::array();
  for (const auto& p : g.points) t.push_back(std::round(p.t_s * 1000) / 1000);
  c["t_s"] = t;
  col("util_pct", [](const GpuSample& s) { return opt_n(s.util_gpu_pct); });
  col("mem_util_pct", [](const GpuSample& s) { return opt_n(s.util_mem_pct); });
  col("mem_used_MiB", [](const GpuSample& s) { return s.mem_used_bytes ? json(*s.mem_used_bytes >> 20) : json(nullptr); });
  col("power_W", [](const GpuSample& s) { return opt(s.power_W); });
  col("power_limit_W", [](const GpuSample& s) { return opt(s.power_limit_W); });
  col("sm_clock_MHz", [](const GpuSample& s) { return opt_n(s.sm_clock_MHz); });
  col("sm_clock_max_MHz", [](const GpuSample& s) { return opt_n(s.sm_clock_max_MHz); });
  col("temperature_C", [](const GpuSample& s) { return opt_n(s.temperature_C); });
  col("clock_event_reasons", [](const GpuSample& s) { return opt_n(s.clock_event_reasons); });
  col("pcie_rx_MBps", [](const GpuSample& s) { return opt(s.pcie_rx_MBps); });
  col("pcie_tx_MBps", [](const GpuSample& s) { return opt(s.pcie_tx_MBps); });
  col("sm_active_pct", [](const GpuSample& s) { return opt(s.sm_active_pct); });
  col("sm_occupancy_pct", [](const GpuSample& s) { return opt(s.sm_occupancy_pct); });
  col("tensor_active_pct", [](const GpuSample& s) { return opt(s.tensor_active_pct); });
  col("dram_bw_pct", [](const GpuSample& s) { return opt(s.dram_bw_pct); });
  col("pcie_gen", [](const GpuSample& s) { return opt_n(s.pcie_gen); });
  col("pcie_width", [](const GpuSample& s) { return opt_n(s.pcie_width); });
  col("pcie_gen_max", [](const GpuSample& s) { return opt_n(s.pcie_gen_max); });
  col("pcie_width_max", [](const GpuSample& s) { return opt_n(s.pcie_width_max); });
  return c;
}

json host_columns(const std::vector<gw::HostPoint>& host) {
  json c;
  auto col = [&](const char* key, auto get) {
    json a = json::array();
    for (const auto& p : host) a.push_back(get(p.h));
    c[key] = std::move(a);
  };
  json t = json::array();
  for (const auto& p : host) t.push_back(std::round(p.t_s * 1000) / 1000);
  c["t_s"] = t;
  col("cpu_pct", [](const HostSample& h) { return opt(h.cpu_pct); });
  col("busiest_core_pct", [](const HostSample& h) { return opt(h.busiest_core_pct); });
  col("iowait_pct", [](const HostSample& h) { return opt(h.iowait_pct); });
  col("disk_read_MBps", [](const HostSample& h) { return opt(h.disk_read_MBps); });
  col("tree_cpu_pct", [](const HostSample& h) { return opt(h.tree_cpu_pct); });
  col("tree_rss_MiB", [](const HostSample& h) { return opt(h.tree_rss_MiB); });
  col("tree_read_MBps", [](const HostSample& h) { return opt(h.tree_read_MBps); });
  col("tree_processes", [](const HostSample& h) { return json(h.tree_processes); });
  return c;
}

// The records hold each counted step up to this many; past it, an even sample of them
// (watch.json) or the aggregates alone (results.json), so a record's size and the memory that
// builds it follow the summary, not the step count (20 MB of step lines once made a 774 MB
// results.json and 7.1 GB of RSS). The summary itself is over every step.
constexpr std::size_t kRecordedSteps = 10000;

std::vector<double> recorded_steps(const std::vector<double>& ms) {
  if (ms.size() <= kRecordedSteps) return ms;
  std::vector<double> out;
  out.reserve(kRecordedSteps);
  for (std::size_t i = 0; i < kRecordedSteps; ++i) out.push_back(ms[i * ms.size() / kRecordedSteps]);
  return out;
}

json steps_json(const WatchRun& r) {
  if (!r.step_regex) return nullptr;
  const StepStats& s = r.steps;
  return {{"regex", *r.step_regex},  {"seen", s.seen},          {"warmup", s.warmup},
          {"rate_lines", s.rate_lines}, {"unparsed_lines", s.unparsed_lines},
          {"median_ms", opt(s.median_ms)}, {"p10_ms", opt(s.p10_ms)}, {"p90_ms", opt(s.p90_ms)},
          {"mean_ms", opt(s.mean_ms)}, {"cv", opt(s.cv)}, {"ms", recorded_steps(s.ms)},
          {"ms_sampled", s.ms.size() > kRecordedSteps},
          // when the counted steps ran (the window the verdict's figures are over, when sampled)
          {"from_s", r.timeline.steps ? json(r.timeline.steps->from_s) : json(nullptr)},
          {"to_s", r.timeline.steps ? json(r.timeline.steps->to_s) : json(nullptr)}};
}

const gw::GpuVerdict* lead_gpu(const gw::Verdict& v) {
  for (const auto& g : v.gpus)
    if (g.in_job && g.bound == v.bound) return &g;
  for (const auto& g : v.gpus)
    if (g.in_job) return &g;
  return nullptr;
}

const gw::GpuTimeline* timeline_of(const WatchRun& r, unsigned index) {
  for (const auto& g : r.timeline.gpus)
    if (g.index == index) return &g;
  return nullptr;
}

}  // namespace

std::string default_case_name(const std::vector<std::string>& command) {
  if (command.empty()) return "watch/command";
  std::string prog = base_name(command[0]);
  std::string pick = prog;
  if (prog.rfind("python", 0) == 0 || prog == "bash" || prog == "sh")
    for (std::size_t i = 1; i < command.size(); ++i) {
      if (command[i].empty() || command[i][0] == '-') {
        if (command[i] == "-m" && i + 1 < command.size()) {
          pick = command[i + 1];
          break;
        }
        continue;
      }
      pick = base_name(command[i]);
      break;
    }
  for (const char* ext : {".py", ".sh"})
    if (pick.size() > 3 && pick.compare(pick.size() - 3, 3, ext) == 0) pick.resize(pick.size() - 3);
  return "watch/" + pick;
}

std::string watch_json(const WatchRun& r) {
  json j;
  j["gpucheck_watch_version"] = kWatchRecordVersion;
  j["command"] = r.command;
  j["name"] = r.name;
  j["date"] = r.date;
  j["host_name"] = r.host_name;
  j["host_cpu"] = r.host_cpu ? json(*r.host_cpu) : json(nullptr);
  j["driver_version"] = r.driver_version ? json(*r.driver_version) : json(nullptr);
  j["interval_ms"] = std::round(r.interval_s * 1000);
  j["duration_s"] = r.timeline.duration_s;
  j["exit_status"] = r.attached_pid ? json(nullptr) : json(r.end.status());
  if (r.attached_pid) j["attached"] = {{"pid", *r.attached_pid}, {"end", r.attach_end}};
  j["last_stderr_line"] = r.timeline.last_stderr_line;
  j["gpu_sampled"] = r.no_gpu_reason.empty();
  j["no_gpu_reason"] = r.no_gpu_reason.empty() ? json(nullptr) : json(r.no_gpu_reason);
  j["notes"] = r.notes;
  j["process_tree"] = r.end.containment;  // how the command's whole tree was ended with it
  j["utilisation_window"] =
      "NVML's util is the share of its own sample period (1/6 s to 1 s by product) in which a kernel ran; GPM figures are "
      "averages over the interval since the previous sample";
  j["verdict"] = verdict_json(r.verdict);
  j["steps"] = steps_json(r);
  j["gpus"] = json::array();
  for (const auto& g : r.timeline.gpus)
    j["gpus"].push_back({{"index", g.index},
                         {"name", g.name},
                         {"uuid", g.uuid},
                         {"gpm", g.gpm ? json(*g.gpm) : json(nullptr)},
                         {"in_job", g.in_job},
                         {"job_process", g.job_process},
                         {"other_processes", g.other_processes},
                         {"processes", shares_json(g.processes)},
                         {"timeline", gpu_columns(g)}});
  j["host"] = host_columns(r.timeline.host);
  return j.dump(1) + "\n";
}

std::string results_json(const WatchRun& r) {
  json ctx;
  ctx["date"] = r.date;
  ctx["host_name"] = r.host_name;
  ctx["executable"] = "gpucheck watch";
  ctx["library_build_type"] = "release";
  ctx["num_cpus"] = r.verdict.host.cores;
  ctx["gpucheck_watch_command"] = [&] {
    std::string s;
    for (const auto& a : r.command) {
      if (!s.empty()) s += ' ';
      s += a;
    }
    return s;
  }();
  if (r.host_cpu) ctx["host_cpu"] = *r.host_cpu;
  if (r.driver_version) ctx["driver_version"] = *r.driver_version;
  const gw::GpuVerdict* lead = lead_gpu(r.verdict);
  int job_gpus = 0;
  for (const auto& g : r.verdict.gpus) job_gpus += g.in_job ? 1 : 0;
  ctx["gpu_count"] = std::to_string(job_gpus);
  if (lead) {
    if (const auto* t = timeline_of(r, lead->index)) {
      ctx["gpu_name"] = t->name;
      ctx["gpu_uuid"] = t->uuid;
      ctx["gpu_nvml_index"] = std::to_string(t->index);
      ctx["gpm"] = t->gpm ? (*t->gpm ? "yes" : "no") : "unknown";
    }
    auto put = [&](const char* key, const std::optional<double>& v) {
      ctx[key] = v ? std::to_string(static_cast<long long>(std::lround(*v))) : "unknown";
    };
    put("power_limit_W", lead->f.power_limit_W);
    put("sm_clock_max_MHz", lead->f.sm_clock_max_MHz);
    put("sm_clock_MHz", lead->f.sm_clock_MHz);
    ctx["throttle_reasons"] = contract::describe_reasons(lead->f.clock_event_reasons);
    // The link as judged (the generation read while the GPU worked, else at idle), under the
    // benchmark binaries' context keys, so compare shows a link that changed beside a slower step.
    if (lead->link) {
      const auto& d = lead->link->decision;
      const std::pair<const char*, int> keys[] = {{"pcie_gen_current", d.gen.seen},
                                                  {"pcie_width_current", d.width.seen},
                                                  {"pcie_gen_max", lead->link->gen_max},
                                                  {"pcie_width_max", lead->link->width_max}};
      for (const auto& [key, value] : keys)
        if (value > 0) ctx[key] = std::to_string(value);
    }
  }
  ctx["watch_verdict"] = gw::kind_of(r.verdict.bound).key;

  // The utilisation figures as counters, on every entry (the figures are the run's).
  json counters;
  auto counter = [&](const char* key, const std::optional<double>& v) {
    if (v && std::isfinite(*v)) counters[key] = std::round(*v * 10) / 10;
  };
  if (lead) {
    counter("util_pct", lead->f.util_pct);
    counter("sm_active_pct", lead->f.sm_active_pct);
    counter("tensor_active_pct", lead->f.tensor_active_pct);
    counter("dram_bw_pct", lead->f.dram_bw_pct);
    counter("pcie_MBps", lead->f.pcie_MBps);
    counter("power_W", lead->f.power_W);
    counter(contract::counter::sm_clock_MHz, lead->f.sm_clock_MHz);
  }
  counter("cpu_pct", r.verdict.host.cpu_pct);
  counter("busiest_core_pct", r.verdict.host.busiest_core_pct);

  json benchmarks = json::array();
  auto entry = [&](const std::string& name, const char* run_type, double ms, int reps, int index) {
    json e = {{"name", name},         {"family_index", 0},   {"per_family_instance_index", 0},
              {"run_name", r.name},    {"run_type", run_type}, {"repetitions", reps},
              {"threads", 1},          {"iterations", 1},     {"real_time", ms},
              {"cpu_time", ms},        {"time_unit", "ms"}};
    if (index >= 0) e["repetition_index"] = index;
    for (auto it = counters.begin(); it != counters.end(); ++it) e[it.key()] = it.value();
    return e;
  };
  const StepStats& s = r.steps;
  if (r.step_regex && !s.ms.empty()) {
    const int n = static_cast<int>(s.ms.size());
    if (s.ms.size() <= kRecordedSteps)
      for (int i = 0; i < n; ++i) benchmarks.push_back(entry(r.name, "iteration", s.ms[static_cast<std::size_t>(i)], n, i));
    auto agg = [&](const char* aname, double v) {
      json e = entry(r.name + "_" + aname, "aggregate", v, n, -1);
      e["aggregate_name"] = aname;
      return e;
    };
    if (s.mean_ms) benchmarks.push_back(agg("mean", *s.mean_ms));
    benchmarks.push_back(agg("median", *s.median_ms));
    if (s.cv && s.mean_ms) {
      json e = agg("stddev", *s.cv * *s.mean_ms);
      benchmarks.push_back(e);
      json c = agg("cv", *s.cv);
      c["aggregate_unit"] = "percentage";
      benchmarks.push_back(c);
    }
  } else {
    json e = entry(r.name, "iteration", r.end.seconds * 1000.0, 1, 0);
    if (r.end.status() != 0) {
      e["error_occurred"] = true;
      e["error_message"] = "the command exited with status " + std::to_string(r.end.status());
    }
    benchmarks.push_back(e);
  }
  json j;
  j["context"] = ctx;
  j["benchmarks"] = benchmarks;
  return j.dump(2) + "\n";
}

std::string summary_text(const WatchRun& r, const std::vector<std::string>& written) {
  const gw::Verdict& v = r.verdict;
  std::string headline = v.headline;
  // One line says that no GPU was sampled, and why.
  if (const std::string said = "no GPU was sampled"; !r.no_gpu_reason.empty() && headline.rfind(said, 0) == 0)
    headline.insert(said.size(), " (" + r.no_gpu_reason + ")");
  std::string o = "gpucheck watch: " + headline + "\n";
  if (!r.no_gpu_reason.empty() && headline.rfind("no GPU was sampled", 0) != 0)  // a headline of its own (no verdict)
    o += "  note: no GPU was sampled (" + r.no_gpu_reason + ")\n";
  for (const auto& n : v.next_steps) o += "  next: " + n + "\n";
  if (!v.gpus.empty()) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-4s %-6s %-7s %-7s %-6s %-10s %-11s %-11s %-5s %s\n", "GPU", "util%", "SMact%",
                  "tensor%", "DRAM%", "PCIe MiB/s", "power W", "SM MHz", "°C", "limit");
    o += line;
    for (const auto& g : v.gpus) {
      const auto& f = g.f;
      const std::string power = fmt_or("%.0f", f.power_W) + "/" + fmt_or("%.0f", f.power_limit_W);
      const std::string clock = fmt_or("%.0f", f.sm_clock_MHz) + "/" + fmt_or("%.0f", f.sm_clock_max_MHz);
      std::string what = gw::kind_of(g.bound).key;
      if (g.throttled) what += ", throttled";
      if (!g.in_job) what += " (not in the job)";
      std::snprintf(line, sizeof line, "  %-4u %-6s %-7s %-7s %-6s %-10s %-11s %-11s %-4s %s\n", g.index,
                    fmt_or("%.1f", f.util_pct).c_str(), fmt_or("%.1f", f.sm_active_pct).c_str(),
                    fmt_or("%.1f", f.tensor_active_pct).c_str(), fmt_or("%.1f", f.dram_bw_pct).c_str(),
                    fmt_or("%.0f", f.pcie_MBps).c_str(), power.c_str(), clock.c_str(),
                    fmt_or("%.0f", f.temperature_max_C).c_str(), what.c_str());
      o += line;
      if (!g.evidence.empty() && g.in_job) {
        std::string ev;
        for (const auto& e : g.evidence) {
          if (!ev.empty()) ev += "; ";
          ev += e;
        }
        o += "       " + ev + "\n";
      }
    }
  }
  const auto& h = v.host;
  o += "  host: CPU " + fmt_or("%.0f%%", h.cpu_pct) + " of " + std::to_string(h.cores) + " cores (busiest core " +
       fmt_or("%.0f%%", h.busiest_core_pct) + "), iowait " + fmt_or("%.1f%%", h.iowait_pct) + ", disk reads " +
       fmt_or("%.1f MiB/s", h.disk_read_MBps) + "; the command: " + fmt_or("%.0f%% of a core", h.tree_cpu_pct) + ", " +
       fmt_or("%.0f MiB", h.tree_rss_max_MiB) + (h.tree_read_MBps ? ", reads " + fmt("%.1f MiB/s", *h.tree_read_MBps) : "") + "\n";
  for (const auto sym : v.host_symptoms) o += std::string("  host symptom: ") + gw::kind_of(sym).title + "\n";
  if (r.step_regex) {
    const StepStats& s = r.steps;
    if (s.ms.empty()) {
      o += "  steps: no line matched --step '" + *r.step_regex + "' with a time (" + std::to_string(s.rate_lines) +
           " rate lines, " + std::to_string(s.unparsed_lines) + " without a number): the case is the wall time\n";
    } else {
      o += "  steps: " + std::to_string(s.ms.size()) + " after " + std::to_string(s.warmup) + " warm-up: median " +
           fmt("%.2f ms", *s.median_ms) + " (p10 " + fmt_or("%.2f", s.p10_ms) + ", p90 " + fmt_or("%.2f", s.p90_ms) +
           ", cv " + fmt_or("%.1f%%", s.cv ? std::optional<double>(*s.cv * 100) : std::nullopt) + ")\n";
      if (s.rate_lines > 0)
        o += "  steps: " + std::to_string(s.rate_lines) + " matching lines gave a rate (it/s), not a time: left out\n";
    }
  }
  for (const auto& n : r.notes) o += "  note: " + n + "\n";
  if (r.attached_pid)
    o += "  the job (pid " + std::to_string(*r.attached_pid) + ", attached): " + r.attach_end + " after " + fmt("%.1f s", r.end.seconds) + "\n";
  else
  o += "  the command: " + [&] {
    switch (r.end.kind) {
      case ChildEnd::Kind::Exited: return "exit status " + std::to_string(r.end.code);
      case ChildEnd::Kind::Signalled: return "ended by " + std::string("signal ") + std::to_string(r.end.code) + " (status " + std::to_string(r.end.status()) + ")";
      case ChildEnd::Kind::CouldNotStart: return std::string("could not start");
    }
    return std::string();
  }() + " after " + fmt("%.1f s", r.end.seconds) + "\n";
  if (!written.empty()) {
    std::string w;
    for (const auto& p : written) {
      if (!w.empty()) w += ", ";
      w += p;
    }
    o += "  wrote " + w + "\n";
  }
  // Names, notes, a stderr line and the command come from the job or a record (--judge): an
  // escape sequence among them reaches the terminal as text, line by line.
  std::string shown;
  for (std::size_t from = 0; from < o.size();) {
    const std::size_t nl = o.find('\n', from);
    const std::size_t end = nl == std::string::npos ? o.size() : nl;
    shown += gpucheck::visible_text(std::string_view(o).substr(from, end - from));
    if (nl != std::string::npos) shown += '\n';
    from = end + 1;
  }
  return shown;
}

std::string progress_line(double elapsed_s, std::optional<double> last_step_ms, const GpuSample* gpu,
                          std::optional<double> cpu_pct) {
  std::string s = "[watch " + fmt("%.0f s", elapsed_s) + "]";
  if (last_step_ms) s += " step " + fmt("%.1f ms", *last_step_ms);
  if (gpu) {
    if (gpu->util_gpu_pct) s += " util " + std::to_string(*gpu->util_gpu_pct) + "%";
    if (gpu->sm_active_pct) s += " SM " + fmt("%.0f%%", *gpu->sm_active_pct);
    if (gpu->power_W) s += " " + fmt("%.0f W", *gpu->power_W);
  }
  if (cpu_pct) s += " CPU " + fmt("%.0f%%", *cpu_pct);
  return s;
}

}  // namespace gpucheck::compare::watch
