// Renderers of an acceptance report: a terminal table per GPU, the same as Markdown, and JSON
// for machines. The failures are listed once more at the end, one line each, naming the GPU
// and the check; then everything that could not be checked, with the reason.
#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "accept/render.hpp"
#include "base/format.hpp"

namespace gpucheck::compare {
namespace {

// Rows of one GPU (or one node), in report order.
struct Section {
  std::string label;
  const AcceptGpu* gpu = nullptr;
  std::vector<const AcceptCheck*> rows;
};

std::vector<Section> sections(const AcceptReport& r) {
  std::vector<Section> out;
  for (const AcceptCheck& c : r.checks) {
    if (out.empty() || out.back().label != c.gpu) {
      Section s;
      s.label = c.gpu;
      for (const AcceptGpu& g : r.gpus)
        if (g.label == c.gpu) s.gpu = &g;
      out.push_back(std::move(s));
    }
    out.back().rows.push_back(&c);
  }
  return out;
}

std::string heading(const Section& s) {
  if (s.gpu == nullptr) return s.label;
  std::string h = s.label + "  " + s.gpu->name;
  if (s.gpu->sku != "unknown") h += " (" + s.gpu->sku + ")";
  if (s.gpu->uuid != "unknown") h += "  " + s.gpu->uuid;
  return h;
}

std::string name_of(const AcceptCheck& c) { return c.item.empty() ? c.check : c.check + " " + c.item; }
std::string or_dash(const std::string& s) { return s.empty() ? "-" : s; }

std::string summary(const AcceptReport& r) {
  return std::to_string(r.count(AcceptVerdict::Fail)) + " failed, " + std::to_string(r.count(AcceptVerdict::Pass)) + " passed, " +
         std::to_string(r.count(AcceptVerdict::Reported)) + " reported, " + std::to_string(r.count(AcceptVerdict::NotChecked)) +
         " not checked, over " + std::to_string(r.gpus.size()) + (r.gpus.size() == 1 ? " GPU" : " GPUs");
}

std::string sources(const AcceptReport& r) {
  std::size_t files = 0;
  for (const auto& g : r.gpus) files += g.files.size();
  return std::to_string(files) + (files == 1 ? " results file" : " results files") + "; specs " + r.specs_source +
         "; config " + r.config_source;
}

// Four padded cells and a free-form last one, indented by two spaces.
void append_row(std::string& out, const std::array<std::string, 4>& cells, const std::size_t (&widths)[4],
                const std::string& last) {
  out += "  ";
  for (std::size_t i = 0; i < cells.size(); ++i) {
    out += cells[i];
    out.append(widths[i] > cells[i].size() ? widths[i] - cells[i].size() : 0, ' ');
    out += "  ";
  }
  out += last;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += '\n';
}

std::vector<const AcceptCheck*> with(const AcceptReport& r, AcceptVerdict v) {
  std::vector<const AcceptCheck*> out;
  for (const auto& c : r.checks)
    if (c.verdict == v) out.push_back(&c);
  return out;
}

nlohmann::ordered_json number_or_null(const std::optional<double>& v) {
  if (v && std::isfinite(*v)) return *v;
  return nullptr;
}

}  // namespace

std::string render_accept_terminal(const AcceptReport& r) {
  std::string out = "gpucheck accept: " + sources(r) + "\n";
  std::size_t w_name = 5, w_meas = 8, w_floor = 5, w_res = 6;
  for (const auto& c : r.checks) {
    w_name = std::max(w_name, name_of(c).size());
    w_meas = std::max(w_meas, or_dash(c.measured).size());
    w_floor = std::max(w_floor, or_dash(c.floor).size());
    w_res = std::max(w_res, to_string(c.verdict).size());
  }
  const std::size_t widths[] = {w_name, w_meas, w_floor, w_res};
  for (const Section& s : sections(r)) {
    out += '\n';
    out += heading(s);
    out += '\n';
    append_row(out, {"check", "measured", "floor", "result"}, widths, "note");
    for (const AcceptCheck* c : s.rows)
      append_row(out, {name_of(*c), or_dash(c->measured), or_dash(c->floor), std::string(to_string(c->verdict))}, widths,
                 c->note);
  }
  const auto failed = with(r, AcceptVerdict::Fail);
  if (!failed.empty()) {
    out += "\nfailed (" + std::to_string(failed.size()) + "):\n";
    for (const AcceptCheck* c : failed) out += "  " + c->line() + "\n";
  }
  const auto unchecked = with(r, AcceptVerdict::NotChecked);
  if (!unchecked.empty()) {
    out += "\nnot checked (" + std::to_string(unchecked.size()) + "):\n";
    for (const AcceptCheck* c : unchecked) out += "  " + c->line() + "\n";
  }
  out += std::string("\naccept: ") + (r.failed() ? "FAIL" : "PASS") + ": " + summary(r) + "\n";
  return out;
}

std::string render_accept_markdown(const AcceptReport& r) {
  std::string out = std::string("# gpucheck accept: ") + (r.failed() ? "FAIL" : "PASS") + "\n\n";
  out += summary(r) + ". " + sources(r) + ".\n";
  for (const Section& s : sections(r)) {
    out += "\n## " + escape_markdown_cell(heading(s)) + "\n\n";
    out += "| check | measured | floor | result | note |\n| --- | ---: | --- | --- | --- |\n";
    for (const AcceptCheck* c : s.rows) {
      const std::string verdict(to_string(c->verdict));
      out += "| " + escape_markdown_cell(name_of(*c)) + " | " + escape_markdown_cell(or_dash(c->measured)) + " | " +
             escape_markdown_cell(or_dash(c->floor)) + " | " + (c->verdict == AcceptVerdict::Fail ? "**" + verdict + "**" : verdict) +
             " | " + escape_markdown_cell(c->note) + " |\n";
    }
  }
  for (const auto& [title, v] : {std::pair{"Failed", AcceptVerdict::Fail}, std::pair{"Not checked", AcceptVerdict::NotChecked}}) {
    const auto rows = with(r, v);
    if (rows.empty()) continue;
    out += std::string("\n## ") + title + "\n\n";
    for (const AcceptCheck* c : rows) out += "- " + escape_markdown_cell(c->line()) + "\n";
  }
  return out;
}

std::string render_accept_json(const AcceptReport& r) {
  using json = nlohmann::ordered_json;
  json doc;
  doc["gpucheck_accept"] = 1;
  doc["verdict"] = r.failed() ? "fail" : "pass";
  doc["summary"] = {{"failed", r.count(AcceptVerdict::Fail)},
                    {"passed", r.count(AcceptVerdict::Pass)},
                    {"reported", r.count(AcceptVerdict::Reported)},
                    {"not_checked", r.count(AcceptVerdict::NotChecked)}};
  doc["specs"] = r.specs_source;
  doc["config"] = r.config_source;
  json gpus = json::array();
  for (const AcceptGpu& g : r.gpus) {
    const bool fails = std::any_of(r.checks.begin(), r.checks.end(), [&](const AcceptCheck& c) {
      return c.gpu == g.label && c.verdict == AcceptVerdict::Fail;
    });
    gpus.push_back({{"label", g.label}, {"verdict", fails ? "fail" : "pass"}, {"host", g.host}, {"index", g.index},
                    {"uuid", g.uuid}, {"pci_bus_id", g.pci_bus_id}, {"name", g.name}, {"sku", g.sku},
                    {"files", g.files}});
  }
  doc["gpus"] = std::move(gpus);
  json checks = json::array();
  for (const AcceptCheck& c : r.checks) {
    checks.push_back({{"gpu", c.gpu}, {"check", c.check}, {"item", c.item},
                      {"verdict", c.verdict == AcceptVerdict::NotChecked ? "not_checked" : c.verdict == AcceptVerdict::Fail ? "fail"
                                                                                   : std::string(to_string(c.verdict))},
                      {"value", number_or_null(c.value)}, {"limit", number_or_null(c.limit)}, {"unit", c.unit},
                      {"measured", c.measured}, {"floor", c.floor}, {"note", c.note}, {"benchmark", c.benchmark}});
  }
  doc["checks"] = std::move(checks);
  // Names and notes come from result files: replace invalid UTF-8 rather than throw.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace gpucheck::compare
