// watch.json read back into a run (`gpucheck watch --judge`): the timeline, the steps and the
// command's end as recorded, so today's rules can judge an old record again. Columns a record
// does not have (older versions) read as not sampled. The file is read by core's one JSON loader
// (a key given twice is refused, not the last one winning), and every field the verdict reads
// has a strict type and range: a record that says "util 1000%" or "exit status 1e300" is
// refused in one line naming the field, never judged.
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "gpucheck/core/json_load.hpp"
#include "gpucheck/core/text.hpp"
#include "watch/record.hpp"

namespace gpucheck::compare::watch {

using json = nlohmann::ordered_json;
namespace gw = gpucheck::watch;

namespace {

// GPM's shares (SM active, occupancy, tensor, DRAM bandwidth) are ratios of counters over the
// interval, and the host's are ratios of /proc/stat ticks: a reading a little over 100 is timing,
// not a fault; past this it is not a reading. NVML's integer utilisation is 0 to 100 exactly.
constexpr double kShareReadMaxPct = 105.0;
// The bounds the options take (--devices, --pid, --interval): a record holds nothing else.
constexpr std::uint64_t kMaxGpuIndex = 1023;
constexpr std::int64_t kMaxPid = std::int64_t{1} << 22;
constexpr double kMinIntervalMs = 20.0, kMaxIntervalMs = 60000.0;
// An exit status as the shell gives it: the code, or 128+N for signal N.
constexpr std::int64_t kMaxExitStatus = 255;
constexpr std::int64_t kMaxCount = std::numeric_limits<int>::max();
constexpr double kNoMax = std::numeric_limits<double>::max();

// The value as the message shows it: short, one line, printable.
std::string shown(const json& v) {
  if (v.is_array()) return "a list of " + std::to_string(v.size());
  if (v.is_object()) return "an object";
  return gpucheck::visible_excerpt(v.dump(-1, ' ', false, json::error_handler_t::replace), 60);
}

// A field that is not what the verdict needs: its path in the record, what it holds and what it
// must be ("gpus[0].timeline.util_pct[3] holds 1000, not a whole number from 0 to 100").
[[noreturn]] void refuse(const std::string& path, const json& v, const std::string& want) {
  throw std::invalid_argument(path + " holds " + shown(v) + ", not " + want);
}

std::string range_words(double lo, double hi) {
  auto num = [](double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  };
  return hi >= 1e15 ? "from " + num(lo) : "from " + num(lo) + " to " + num(hi);  // no bound worth saying
}

double number(const json& v, const std::string& path, double lo, double hi) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo || v.get<double>() > hi)
    refuse(path, v, "a number " + range_words(lo, hi));
  return v.get<double>();
}

template <typename T>
T whole(const json& v, const std::string& path, std::int64_t lo, std::uint64_t hi) {
  bool ok = false;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    ok = (lo <= 0 || u >= static_cast<std::uint64_t>(lo)) && u <= hi;
  } else if (v.is_number_integer()) {
    const auto n = v.get<std::int64_t>();
    ok = n >= lo && (n < 0 || static_cast<std::uint64_t>(n) <= hi);
  }
  if (!ok) refuse(path, v, "a whole number " + range_words(static_cast<double>(lo), static_cast<double>(hi)));
  return v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>()) : static_cast<T>(v.get<std::int64_t>());
}

// A member that may be absent or null (nullptr then).
const json* member(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// A member that must be there (null included: its type check then refuses it).
const json& need(const json& obj, const char* key, const std::string& path) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw std::invalid_argument(path + key + " is missing");
  return *it;
}

std::string text(const json& v, const std::string& path) {
  if (!v.is_string()) refuse(path, v, "text");
  return v.get<std::string>();
}
std::string text_or(const json& obj, const char* key, const std::string& path, std::string fallback = {}) {
  const json* v = member(obj, key);
  return v ? text(*v, path + key) : fallback;
}
std::optional<std::string> text_or_null(const json& obj, const char* key) {
  const json* v = member(obj, key);
  return v ? std::optional(text(*v, key)) : std::nullopt;
}
std::vector<std::string> texts(const json& v, const std::string& path) {
  if (!v.is_array()) refuse(path, v, "a list of text");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(text(v[i], path + "[" + std::to_string(i) + "]"));
  return out;
}
bool boolean_or(const json& obj, const char* key, const std::string& path, bool fallback) {
  const json* v = member(obj, key);
  if (!v) return fallback;
  if (!v->is_boolean()) refuse(path + key, *v, "true or false");
  return v->get<bool>();
}
const json& object_at(const json& obj, const char* key, const std::string& path) {
  const json& v = need(obj, key, path);
  if (!v.is_object()) refuse(path + key, v, "an object");
  return v;
}
const json& array_at(const json& obj, const char* key, const std::string& path) {
  const json& v = need(obj, key, path);
  if (!v.is_array()) refuse(path + key, v, "a list");
  return v;
}

// A timeline's columns: "t_s" (seconds from the start, never going back) and one list per
// figure, each as long as t_s, null where the figure was not read; a column the record does
// not have reads as not read.
class Columns {
 public:
  Columns(const json& cols, std::string path) : cols_(cols), path_(std::move(path)) {
    const json& t = array_at(cols_, "t_s", path_);
    double last = 0.0;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const double v = number(t[i], path_ + "t_s[" + std::to_string(i) + "]", 0.0, kNoMax);
      if (v < last) refuse(path_ + "t_s[" + std::to_string(i) + "]", t[i], "a time after the one before it (" + shown(t[i - 1]) + ")");
      last = v;
      t_s_.push_back(v);
    }
  }
  [[nodiscard]] std::size_t size() const { return t_s_.size(); }
  [[nodiscard]] double t(std::size_t i) const { return t_s_[i]; }
  // A figure from lo to hi, or nullopt where not read.
  [[nodiscard]] std::optional<double> number_at(const char* key, std::size_t i, double lo, double hi) const {
    const json* c = cell(key, i);
    return c ? std::optional(number(*c, where(key, i), lo, hi)) : std::nullopt;
  }
  template <typename T>
  [[nodiscard]] std::optional<T> whole_at(const char* key, std::size_t i, std::uint64_t hi = std::numeric_limits<T>::max()) const {
    const json* c = cell(key, i);
    return c ? std::optional(whole<T>(*c, where(key, i), 0, hi)) : std::nullopt;
  }

 private:
  [[nodiscard]] std::string where(const char* key, std::size_t i) const { return path_ + key + "[" + std::to_string(i) + "]"; }
  [[nodiscard]] const json* cell(const char* key, std::size_t i) const {
    const json* col = member(cols_, key);
    if (!col) return nullptr;
    if (!col->is_array()) refuse(path_ + key, *col, "a list");
    if (col->size() != t_s_.size())
      throw std::invalid_argument(path_ + key + " holds " + std::to_string(col->size()) + " values for " +
                                  std::to_string(t_s_.size()) + " times (t_s)");
    const json& c = (*col)[i];
    return c.is_null() ? nullptr : &c;
  }
  const json& cols_;
  std::string path_;
  std::vector<double> t_s_;
};

// A share in percent: a number from 0 to 100, or null.
std::optional<double> percent_or_null(const json& p, const char* key, const std::string& path) {
  const json* v = member(p, key);
  return v ? std::optional(number(*v, path + key, 0.0, 100.0)) : std::nullopt;
}

// Each process NVML listed on the GPU, with its share (version 2; absent before).
std::vector<gw::ProcessShare> read_processes(const json& g, const std::string& path) {
  std::vector<gw::ProcessShare> out;
  if (!member(g, "processes")) return out;
  const json& list = array_at(g, "processes", path);
  if (list.size() > gw::thresholds::kMaxProcessesPerGpu)  // the record keeps the busiest 16
    refuse(path + "processes", list, "at most " + std::to_string(gw::thresholds::kMaxProcessesPerGpu) + " processes");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + "processes[" + std::to_string(i) + "].";
    if (!list[i].is_object()) refuse(path + "processes[" + std::to_string(i) + "]", list[i], "an object");
    const json& p = list[i];
    gw::ProcessShare s;
    s.pid = whole<unsigned>(need(p, "pid", at), at + "pid", 0, std::numeric_limits<unsigned>::max());
    s.name = text_or(p, "name", at);
    if (!need(p, "job", at).is_boolean()) refuse(at + "job", p["job"], "true or false");
    s.job = p["job"].get<bool>();
    s.readings = member(p, "readings") ? whole<int>(p["readings"], at + "readings", 0, kMaxCount) : 0;
    s.share_readings = member(p, "share_readings") ? whole<int>(p["share_readings"], at + "share_readings", 0, kMaxCount) : 0;
    s.sm_pct = percent_or_null(p, "sm_pct", at);
    s.mem_pct = percent_or_null(p, "mem_pct", at);
    out.push_back(std::move(s));
  }
  return out;
}

GpuSample read_gpu_sample(const Columns& c, std::size_t i) {
  GpuSample s;
  s.util_gpu_pct = c.whole_at<unsigned>("util_pct", i, 100);
  s.util_mem_pct = c.whole_at<unsigned>("mem_util_pct", i, 100);
  if (const auto m = c.whole_at<std::uint64_t>("mem_used_MiB", i, std::numeric_limits<std::uint64_t>::max() >> 20))
    s.mem_used_bytes = *m << 20;
  s.power_W = c.number_at("power_W", i, 0.0, kNoMax);
  s.power_limit_W = c.number_at("power_limit_W", i, 0.0, kNoMax);
  s.sm_clock_MHz = c.whole_at<unsigned>("sm_clock_MHz", i);
  s.sm_clock_max_MHz = c.whole_at<unsigned>("sm_clock_max_MHz", i);
  s.temperature_C = c.whole_at<unsigned>("temperature_C", i);
  s.clock_event_reasons = c.whole_at<std::uint64_t>("clock_event_reasons", i);
  s.pcie_rx_MBps = c.number_at("pcie_rx_MBps", i, 0.0, kNoMax);
  s.pcie_tx_MBps = c.number_at("pcie_tx_MBps", i, 0.0, kNoMax);
  s.sm_active_pct = c.number_at("sm_active_pct", i, 0.0, kShareReadMaxPct);
  s.sm_occupancy_pct = c.number_at("sm_occupancy_pct", i, 0.0, kShareReadMaxPct);
  s.tensor_active_pct = c.number_at("tensor_active_pct", i, 0.0, kShareReadMaxPct);
  s.dram_bw_pct = c.number_at("dram_bw_pct", i, 0.0, kShareReadMaxPct);
  s.pcie_gen = c.whole_at<unsigned>("pcie_gen", i);
  s.pcie_width = c.whole_at<unsigned>("pcie_width", i);
  s.pcie_gen_max = c.whole_at<unsigned>("pcie_gen_max", i);
  s.pcie_width_max = c.whole_at<unsigned>("pcie_width_max", i);
  return s;
}

gw::GpuTimeline read_gpu(const json& g, const std::string& path) {
  if (!g.is_object()) refuse(path.substr(0, path.size() - 1), g, "an object");
  gw::GpuTimeline gt;
  gt.index = whole<unsigned>(need(g, "index", path), path + "index", 0, kMaxGpuIndex);
  gt.name = text_or(g, "name", path);
  gt.uuid = text_or(g, "uuid", path);
  if (member(g, "gpm")) gt.gpm = boolean_or(g, "gpm", path, false);
  gt.in_job = boolean_or(g, "in_job", path, true);
  gt.job_process = boolean_or(g, "job_process", path, false);
  if (const json* o = member(g, "other_processes")) gt.other_processes = texts(*o, path + "other_processes");
  gt.processes = read_processes(g, path);
  const Columns c(object_at(g, "timeline", path), path + "timeline.");
  for (std::size_t i = 0; i < c.size(); ++i) gt.points.push_back({c.t(i), read_gpu_sample(c, i)});
  return gt;
}

std::vector<gw::HostPoint> read_host(const json& h, int cores) {
  std::vector<gw::HostPoint> out;
  const Columns c(h, "host.");
  for (std::size_t i = 0; i < c.size(); ++i) {
    gw::HostPoint p;
    p.t_s = c.t(i);
    p.h.cpu_pct = c.number_at("cpu_pct", i, 0.0, kShareReadMaxPct);
    p.h.busiest_core_pct = c.number_at("busiest_core_pct", i, 0.0, kShareReadMaxPct);
    p.h.iowait_pct = c.number_at("iowait_pct", i, 0.0, kShareReadMaxPct);
    p.h.disk_read_MBps = c.number_at("disk_read_MBps", i, 0.0, kNoMax);
    p.h.tree_cpu_pct = c.number_at("tree_cpu_pct", i, 0.0, kNoMax);  // 100 = one core
    p.h.tree_rss_MiB = c.number_at("tree_rss_MiB", i, 0.0, kNoMax);
    p.h.tree_read_MBps = c.number_at("tree_read_MBps", i, 0.0, kNoMax);
    p.h.tree_processes = c.whole_at<int>("tree_processes", i, kMaxCount).value_or(0);
    p.h.cores = cores;  // recorded once, in the verdict's host figures
    out.push_back(p);
  }
  return out;
}

// A time or a step figure of the steps: a number from 0, or null.
std::optional<double> steps_figure(const json& s, const char* key) {
  const json* v = member(s, key);
  return v ? std::optional(number(*v, std::string("steps.") + key, 0.0, kNoMax)) : std::nullopt;
}
int steps_count(const json& s, const char* key) {
  const json* v = member(s, key);
  return v ? whole<int>(*v, std::string("steps.") + key, 0, kMaxCount) : 0;
}

// The steps as recorded: already past warm-up, so taken as they are, not split again.
void read_steps(const json& s, WatchRun& r) {
  if (!s.is_object()) refuse("steps", s, "an object or null");
  r.step_regex = text(need(s, "regex", "steps."), "steps.regex");
  StepStats& st = r.steps;
  st.seen = steps_count(s, "seen");
  st.warmup = steps_count(s, "warmup");
  st.rate_lines = steps_count(s, "rate_lines");
  st.unparsed_lines = steps_count(s, "unparsed_lines");
  if (const json* ms = member(s, "ms")) {
    if (!ms->is_array()) refuse("steps.ms", *ms, "a list of step times");
    for (std::size_t i = 0; i < ms->size(); ++i) st.ms.push_back(number((*ms)[i], "steps.ms[" + std::to_string(i) + "]", 0.0, kNoMax));
  }
  st.median_ms = steps_figure(s, "median_ms");
  st.p10_ms = steps_figure(s, "p10_ms");
  st.p90_ms = steps_figure(s, "p90_ms");
  st.mean_ms = steps_figure(s, "mean_ms");
  st.cv = steps_figure(s, "cv");
  if (!st.ms.empty() && !st.median_ms) st.median_ms = percentile(st.ms, 50.0);  // results.json needs one
  r.timeline.step_ms = st.ms;
  const auto from = steps_figure(s, "from_s"), to = steps_figure(s, "to_s");
  if (from.has_value() != to.has_value()) throw std::invalid_argument("steps.from_s and steps.to_s: one is given without the other");
  if (from && *to < *from) refuse("steps.to_s", s["to_s"], "a time from steps.from_s (" + shown(s["from_s"]) + ")");
  if (from) r.timeline.steps = gw::Window{*from, *to};
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

// How the command ended: an exit status, or (--pid) the job attached to and why watching stopped.
void read_end(const json& d, double duration, WatchRun& r) {
  if (const json* a = member(d, "attached")) {  // --pid: no exit status
    if (!a->is_object()) refuse("attached", *a, "an object or null");
    r.attached_pid = whole<int>(need(*a, "pid", "attached."), "attached.pid", 1, kMaxPid);
    if (member(d, "exit_status")) refuse("exit_status", d["exit_status"], "null (an attached job has no exit status)");
    r.attach_end = text_or(*a, "end", "attached.");
    r.end.seconds = duration;
    return;
  }
  const int status = whole<int>(need(d, "exit_status", ""), "exit_status", 0, kMaxExitStatus);
  r.end = end_of(status, duration);
  r.timeline.exit_status = status;
}

// The host's core count, as the verdict recorded it (0 where it did not).
int recorded_cores(const json& d) {
  const json* v = member(d, "verdict");
  if (!v || !v->is_object()) return 0;
  const json* h = member(*v, "host");
  if (!h || !h->is_object()) return 0;
  const json* c = member(*h, "cores");
  return c ? whole<int>(*c, "verdict.host.cores", 0, 1 << 20) : 0;
}

WatchRun read_run(const json& d) {
  WatchRun r;
  r.command = texts(array_at(d, "command", ""), "command");
  r.name = text(need(d, "name", ""), "name");
  if (r.name.find_first_not_of(" \t") == std::string::npos) refuse("name", d["name"], "a case name (it is blank)");
  r.date = text_or(d, "date", "");
  r.host_name = text_or(d, "host_name", "");
  r.host_cpu = text_or_null(d, "host_cpu");
  r.driver_version = text_or_null(d, "driver_version");
  if (const json* v = member(d, "interval_ms")) r.interval_s = number(*v, "interval_ms", kMinIntervalMs, kMaxIntervalMs) / 1000.0;
  r.no_gpu_reason = text_or_null(d, "no_gpu_reason").value_or("");
  if (const json* n = member(d, "notes")) r.notes = texts(*n, "notes");
  const double duration = number(need(d, "duration_s", ""), "duration_s", 0.0, kNoMax);
  r.timeline.duration_s = duration;
  read_end(d, duration, r);
  r.timeline.last_stderr_line = text_or(d, "last_stderr_line", "");
  if (const json* s = member(d, "steps")) read_steps(*s, r);
  const json& gpus = array_at(d, "gpus", "");
  std::set<unsigned> indices;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string at = "gpus[" + std::to_string(i) + "].";
    r.timeline.gpus.push_back(read_gpu(gpus[i], at));
    if (!indices.insert(r.timeline.gpus.back().index).second) refuse(at + "index", gpus[i]["index"], "an index no other GPU has");
  }
  r.timeline.host = read_host(object_at(d, "host", ""), recorded_cores(d));
  return r;
}

}  // namespace

Expected<WatchRun> read_watch_json(std::string_view text, const std::string& where) {
  json d;
  std::string err;
  // The one JSON loader (gpucheck/core/json_load.hpp): "exit_status" given twice is an error,
  // not the last one winning. Bare NaN reads as the string "NaN", which a number refuses.
  if (!load_json(text, where, &d, &err)) return Error{where, err.substr(std::min(err.size(), where.size() + 2))};
  if (!d.is_object() || !d.contains("gpucheck_watch_version"))
    return Error{where, "not a gpucheck watch record (no gpucheck_watch_version)"};
  if (const json& v = d["gpucheck_watch_version"];
      !v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kWatchRecordVersion)
    return Error{where, "gpucheck_watch_version " + shown(v) + ": this gpucheck reads versions 1 to " +
                            std::to_string(kWatchRecordVersion)};
  try {
    return read_run(d);
  } catch (const json::exception& e) {  // a type no check above expected: still one line
    return Error{where, std::string("not a readable watch record: ") + e.what()};
  } catch (const std::invalid_argument& e) {
    return Error{where, std::string("not a readable watch record: ") + e.what()};
  }
}

}  // namespace gpucheck::compare::watch
