// watch.json read back into a run (`gpucheck watch --judge`): the timeline, the steps and the
// command's end as recorded, so today's rules can judge an old record again. Columns a record
// does not have (older versions) read as not sampled. The file is read by core's one JSON loader:
// a key given twice is refused, not the last one winning.
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "gpucheck/core/json_load.hpp"
#include "watch/record.hpp"

namespace gpucheck::compare::watch {

using json = nlohmann::ordered_json;
namespace gw = gpucheck::watch;

namespace {

template <typename T>
std::optional<T> cell(const json& cols, const char* key, std::size_t i) {
  if (!cols.contains(key)) return std::nullopt;
  const json& col = cols[key];
  if (!col.is_array() || i >= col.size() || col[i].is_null()) return std::nullopt;
  // A count or a percentage below zero is not a reading (get<unsigned> would wrap it).
  if (std::is_unsigned_v<T> && col[i].is_number() && !col[i].is_number_unsigned())
    throw std::invalid_argument(std::string(key) + " holds " + col[i].dump() + ", not a whole number from 0");
  return col[i].get<T>();
}

std::optional<std::string> text_or_null(const json& d, const char* key) {
  if (!d.contains(key) || d[key].is_null()) return std::nullopt;
  return d[key].get<std::string>();
}

// A share in percent: a number from 0 to 100, or null.
std::optional<double> percent_or_null(const json& p, const char* key) {
  if (!p.contains(key) || p[key].is_null()) return std::nullopt;
  const double v = p[key].get<double>();
  if (!(v >= 0.0 && v <= 100.0)) throw std::invalid_argument(std::string("a process's ") + key + " holds " + p[key].dump() + ", not a share from 0 to 100");
  return v;
}

// Each process NVML listed on the GPU, with its share (version 2; absent before).
std::vector<gw::ProcessShare> read_processes(const json& g) {
  std::vector<gw::ProcessShare> out;
  if (!g.contains("processes")) return out;
  if (!g["processes"].is_array()) throw std::invalid_argument("processes holds " + g["processes"].dump() + ", not a list");
  for (const json& p : g["processes"]) {
    gw::ProcessShare s;
    if (!p.at("pid").is_number_unsigned()) throw std::invalid_argument("a process's pid holds " + p["pid"].dump());
    s.pid = p["pid"].get<unsigned>();
    s.name = p.value("name", std::string());
    s.job = p.at("job").get<bool>();
    s.readings = p.value("readings", 0);
    s.share_readings = p.value("share_readings", 0);
    s.sm_pct = percent_or_null(p, "sm_pct");
    s.mem_pct = percent_or_null(p, "mem_pct");
    out.push_back(std::move(s));
  }
  return out;
}

gw::GpuTimeline read_gpu(const json& g) {
  gw::GpuTimeline gt;
  gt.index = g.at("index").get<unsigned>();
  gt.name = g.value("name", std::string());
  gt.uuid = g.value("uuid", std::string());
  if (g.contains("gpm") && g["gpm"].is_boolean()) gt.gpm = g["gpm"].get<bool>();
  gt.in_job = g.value("in_job", true);
  gt.job_process = g.value("job_process", false);
  gt.other_processes = g.value("other_processes", std::vector<std::string>());
  gt.processes = read_processes(g);
  const json& c = g.at("timeline");
  const json& t = c.at("t_s");
  for (std::size_t i = 0; i < t.size(); ++i) {
    gw::GpuPoint p;
    p.t_s = t.at(i).get<double>();
    GpuSample& s = p.s;
    s.util_gpu_pct = cell<unsigned>(c, "util_pct", i);
    s.util_mem_pct = cell<unsigned>(c, "mem_util_pct", i);
    if (const auto m = cell<std::uint64_t>(c, "mem_used_MiB", i)) s.mem_used_bytes = *m << 20;
    s.power_W = cell<double>(c, "power_W", i);
    s.power_limit_W = cell<double>(c, "power_limit_W", i);
    s.sm_clock_MHz = cell<unsigned>(c, "sm_clock_MHz", i);
    s.sm_clock_max_MHz = cell<unsigned>(c, "sm_clock_max_MHz", i);
    s.temperature_C = cell<unsigned>(c, "temperature_C", i);
    s.clock_event_reasons = cell<std::uint64_t>(c, "clock_event_reasons", i);
    s.pcie_rx_MBps = cell<double>(c, "pcie_rx_MBps", i);
    s.pcie_tx_MBps = cell<double>(c, "pcie_tx_MBps", i);
    s.sm_active_pct = cell<double>(c, "sm_active_pct", i);
    s.sm_occupancy_pct = cell<double>(c, "sm_occupancy_pct", i);
    s.tensor_active_pct = cell<double>(c, "tensor_active_pct", i);
    s.dram_bw_pct = cell<double>(c, "dram_bw_pct", i);
    s.pcie_gen = cell<unsigned>(c, "pcie_gen", i);
    s.pcie_width = cell<unsigned>(c, "pcie_width", i);
    s.pcie_gen_max = cell<unsigned>(c, "pcie_gen_max", i);
    s.pcie_width_max = cell<unsigned>(c, "pcie_width_max", i);
    gt.points.push_back(p);
  }
  return gt;
}

std::vector<gw::HostPoint> read_host(const json& h, int cores) {
  std::vector<gw::HostPoint> out;
  const json& t = h.at("t_s");
  for (std::size_t i = 0; i < t.size(); ++i) {
    gw::HostPoint p;
    p.t_s = t.at(i).get<double>();
    p.h.cpu_pct = cell<double>(h, "cpu_pct", i);
    p.h.busiest_core_pct = cell<double>(h, "busiest_core_pct", i);
    p.h.iowait_pct = cell<double>(h, "iowait_pct", i);
    p.h.disk_read_MBps = cell<double>(h, "disk_read_MBps", i);
    p.h.tree_cpu_pct = cell<double>(h, "tree_cpu_pct", i);
    p.h.tree_rss_MiB = cell<double>(h, "tree_rss_MiB", i);
    p.h.tree_read_MBps = cell<double>(h, "tree_read_MBps", i);
    p.h.tree_processes = cell<int>(h, "tree_processes", i).value_or(0);
    p.h.cores = cores;  // recorded once, in the verdict's host figures
    out.push_back(p);
  }
  return out;
}

// The steps as recorded: already past warm-up, so taken as they are, not split again.
void read_steps(const json& s, WatchRun& r) {
  if (!s.is_object()) return;
  r.step_regex = s.at("regex").get<std::string>();
  StepStats& st = r.steps;
  st.seen = s.value("seen", 0);
  st.warmup = s.value("warmup", 0);
  st.rate_lines = s.value("rate_lines", 0);
  st.unparsed_lines = s.value("unparsed_lines", 0);
  st.ms = s.value("ms", std::vector<double>());
  auto opt = [&](const char* key) -> std::optional<double> {
    if (!s.contains(key) || !s[key].is_number()) return std::nullopt;
    return s[key].get<double>();
  };
  st.median_ms = opt("median_ms");
  st.p10_ms = opt("p10_ms");
  st.p90_ms = opt("p90_ms");
  st.mean_ms = opt("mean_ms");
  st.cv = opt("cv");
  if (!st.ms.empty() && !st.median_ms) st.median_ms = percentile(st.ms, 50.0);  // results.json needs one
  r.timeline.step_ms = st.ms;
  if (const auto from = opt("from_s"), to = opt("to_s"); from && to) r.timeline.steps = gw::Window{*from, *to};
}

ChildEnd end_of(int status, double seconds) {
  ChildEnd e;
  e.seconds = seconds;
  if (status > 128 && status < 128 + 65) {
    e.kind = ChildEnd::Kind::Signalled;
    e.code = status - 128;
  } else {
    e.code = status;
  }
  return e;
}

}  // namespace

Expected<WatchRun> read_watch_json(std::string_view text, const std::string& where) {
  json d;
  std::string err;
  // The one JSON loader (gpucheck/core/json_load.hpp): "exit_status" given twice is an error,
  // not the last one winning. Bare NaN reads as the string "NaN", which a number refuses.
  if (!load_json(text, where, &d, &err)) return Error{where, err.substr(std::min(err.size(), where.size() + 2))};
  try {
    if (!d.is_object() || !d.contains("gpucheck_watch_version"))
      return Error{where, "not a gpucheck watch record (no gpucheck_watch_version)"};
    if (const json& v = d["gpucheck_watch_version"];
        !v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kWatchRecordVersion)
      return Error{where, "gpucheck_watch_version " + v.dump() + ": this gpucheck reads versions 1 to " +
                              std::to_string(kWatchRecordVersion)};
    WatchRun r;
    r.command = d.at("command").get<std::vector<std::string>>();
    r.name = d.at("name").get<std::string>();
    r.date = d.value("date", std::string());
    r.host_name = d.value("host_name", std::string());
    r.host_cpu = text_or_null(d, "host_cpu");
    r.driver_version = text_or_null(d, "driver_version");
    r.interval_s = d.value("interval_ms", 100.0) / 1000.0;
    r.no_gpu_reason = text_or_null(d, "no_gpu_reason").value_or("");
    r.notes = d.value("notes", std::vector<std::string>());
    const double duration = d.at("duration_s").get<double>();
    r.timeline.duration_s = duration;
    if (d.contains("attached") && d["attached"].is_object()) {  // --pid: no exit status
      r.attached_pid = d["attached"].at("pid").get<int>();
      r.attach_end = d["attached"].value("end", std::string());
      r.end.seconds = duration;
    } else {
      const int status = d.at("exit_status").get<int>();
      r.end = end_of(status, duration);
      r.timeline.exit_status = status;
    }
    r.timeline.last_stderr_line = d.value("last_stderr_line", std::string());
    if (d.contains("steps")) read_steps(d["steps"], r);
    for (const json& g : d.at("gpus")) r.timeline.gpus.push_back(read_gpu(g));
    int cores = 0;
    if (const auto v = d.find("verdict"); v != d.end() && v->is_object() && v->contains("host") && (*v)["host"].is_object())
      cores = (*v)["host"].value("cores", 0);
    r.timeline.host = read_host(d.at("host"), cores);
    return r;
  } catch (const json::exception& e) {
    return Error{where, std::string("not a readable watch record: ") + e.what()};
  } catch (const std::invalid_argument& e) {
    return Error{where, std::string("not a readable watch record: ") + e.what()};
  }
}

}  // namespace gpucheck::compare::watch
