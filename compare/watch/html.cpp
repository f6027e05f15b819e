// The page's charts and style are the report's (report/charts): one look for every HTML page.
#include "watch/html.hpp"

#include <cstdio>

#include "base/format.hpp"
#include "report/charts.hpp"

namespace gpucheck::compare::watch {

namespace gw = gpucheck::watch;

namespace {

template <typename F>
LineSeries gpu_series(const gw::GpuTimeline& g, std::string name, F get) {
  LineSeries s{std::move(name), {}};
  for (const auto& p : g.points)
    if (auto v = get(p.s)) s.points.emplace_back(p.t_s, static_cast<double>(*v));
  return s;
}

template <typename F>
LineSeries host_series(const std::vector<gw::HostPoint>& host, std::string name, F get) {
  LineSeries s{std::move(name), {}};
  for (const auto& p : host)
    if (auto v = get(p.h)) s.points.emplace_back(p.t_s, *v);
  return s;
}

std::string chart(std::string title, std::string y_label, std::vector<LineSeries> series,
                  std::optional<double> limit = std::nullopt, std::optional<double> y_max = std::nullopt) {
  std::erase_if(series, [](const LineSeries& s) { return s.points.empty(); });
  if (series.empty()) return "<p class=\"muted\">" + escape_xml(title) + ": not read</p>\n";
  LineChart c;
  c.title = std::move(title);
  c.x_label = "seconds";
  c.y_label = std::move(y_label);
  c.series = std::move(series);
  c.limit = limit;
  c.y_min = 0.0;
  c.y_max = y_max;
  return "<h3>" + escape_xml(c.title) + "</h3>\n<div class=\"chart\">" + svg_line_chart(c) + "</div>\n";
}

std::string cell(const std::optional<double>& v, const char* f) {
  if (!v) return "<td class=\"note\">-</td>";
  char buf[48];
  std::snprintf(buf, sizeof buf, f, *v);
  return std::string("<td>") + buf + "</td>";
}

}  // namespace

std::string watch_html(const WatchRun& r) {
  const gw::Verdict& v = r.verdict;
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>gpucheck watch: " +
                  escape_xml(r.name) + "</title>\n" + chart_style_block() + "</head><body>\n";
  std::string cmd;
  for (const auto& a : r.command) {
    if (!cmd.empty()) cmd += ' ';
    cmd += a;
  }
  h += "<h1>gpucheck watch</h1>\n<p class=\"muted\"><code>" + escape_xml(cmd) + "</code> on " + escape_xml(r.host_name) +
       ", " + escape_xml(r.date) + ", exit status " + std::to_string(r.end.status()) + "</p>\n";
  h += "<h2>Verdict</h2>\n<p><b>" + escape_xml(v.headline) + "</b></p>\n";
  if (!r.no_gpu_reason.empty()) h += "<p class=\"muted\">" + escape_xml(r.no_gpu_reason) + "</p>\n";
  if (!v.next_steps.empty()) {
    h += "<ul>\n";
    for (const auto& n : v.next_steps) h += "<li>" + escape_xml(n) + "</li>\n";
    h += "</ul>\n";
  }
  if (!v.gpus.empty()) {
    h += "<table><tr><th class=\"name\">GPU</th><th>verdict</th><th>util %</th><th>SM active %</th><th>tensor %</th>"
         "<th>DRAM BW %</th><th>PCIe MiB/s</th><th>power W</th><th>limit W</th><th>SM MHz</th><th>max °C</th>"
         "<th class=\"text\">evidence</th></tr>\n";
    for (const auto& g : v.gpus) {
      const auto& f = g.f;
      std::string ev;
      for (const auto& e : g.evidence) {
        if (!ev.empty()) ev += "; ";
        ev += e;
      }
      h += "<tr><td class=\"name\">" + std::to_string(g.index) + (g.in_job ? "" : " (not in the job)") + "</td><td>" +
           escape_xml(gw::kind_of(g.bound).title) + (g.throttled ? ", throttled" : "") + "</td>" + cell(f.util_pct, "%.1f") +
           cell(f.sm_active_pct, "%.1f") + cell(f.tensor_active_pct, "%.1f") + cell(f.dram_bw_pct, "%.1f") +
           cell(f.pcie_MBps, "%.0f") + cell(f.power_W, "%.0f") + cell(f.power_limit_W, "%.0f") +
           cell(f.sm_clock_MHz, "%.0f") + cell(f.temperature_max_C, "%.0f") + "<td class=\"wrap\">" + escape_xml(ev) +
           "</td></tr>\n";
    }
    h += "</table>\n<p class=\"muted\">Means over each GPU's active window (first to last sample with a kernel). NVML's "
         "utilisation is the share of its own sample period (1/6 s to 1 s by product) in which any kernel ran; GPM's SM "
         "active is the share of SMs busy.</p>\n";
  }
  h += "<h2>Timeline</h2>\n";
  for (const auto& g : r.timeline.gpus) {
    const std::string id = "GPU " + std::to_string(g.index);
    h += chart(id + ": utilisation beside SM active", "%",
               {gpu_series(g, "NVML utilisation", [](const GpuSample& s) { return s.util_gpu_pct; }),
                gpu_series(g, "GPM SM active", [](const GpuSample& s) { return s.sm_active_pct; })},
               std::nullopt, 100.0);
    std::optional<double> limit;
    for (const auto& p : g.points)
      if (p.s.power_limit_W) limit = p.s.power_limit_W;
    h += chart(id + ": power against the enforced limit", "W",
               {gpu_series(g, "power", [](const GpuSample& s) { return s.power_W; })}, limit);
    h += chart(id + ": PCIe", "MiB/s",
               {gpu_series(g, "rx (to the GPU)", [](const GpuSample& s) { return s.pcie_rx_MBps; }),
                gpu_series(g, "tx (from the GPU)", [](const GpuSample& s) { return s.pcie_tx_MBps; })});
    h += chart(id + ": tensor active beside DRAM bandwidth", "%",
               {gpu_series(g, "GPM tensor active", [](const GpuSample& s) { return s.tensor_active_pct; }),
                gpu_series(g, "GPM DRAM bandwidth", [](const GpuSample& s) { return s.dram_bw_pct; })},
               std::nullopt, 100.0);
  }
  h += chart("Host CPU", "%",
             {host_series(r.timeline.host, "all cores", [](const HostSample& s) { return s.cpu_pct; }),
              host_series(r.timeline.host, "busiest core", [](const HostSample& s) { return s.busiest_core_pct; })},
             std::nullopt, 100.0);
  if (r.step_regex) {
    h += "<h2>Step time</h2>\n";
    const StepStats& s = r.steps;
    if (s.ms.empty()) {
      h += "<p class=\"muted\">No output line matched <code>" + escape_xml(*r.step_regex) + "</code> with a time.</p>\n";
    } else {
      Histogram hist;
      hist.title = "step time after " + std::to_string(s.warmup) + " warm-up steps (" + std::to_string(s.ms.size()) + " steps)";
      hist.x_label = "ms";
      hist.values = s.ms;
      hist.markers.push_back({"median", *s.median_ms});
      if (s.p10_ms) hist.markers.push_back({"p10", *s.p10_ms});
      if (s.p90_ms) hist.markers.push_back({"p90", *s.p90_ms});
      h += "<h3>" + escape_xml(hist.title) + "</h3>\n<div class=\"chart\">" + svg_histogram(hist) + "</div>\n";
    }
  }
  for (const auto& n : r.notes) h += "<p class=\"muted\">" + escape_xml(n) + "</p>\n";
  h += "</body></html>\n";
  return h;
}

}  // namespace gpucheck::compare::watch
