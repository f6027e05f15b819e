// Result files grouped into GPUs: by the context's gpu_uuid, else gpu_pci_bus_id, else the
// device index, within one host; " | "-joined values of merged files split apart again. A file
// that holds several GPUs, or a case given twice for one GPU, is an error, not a guess.
#include "accept/gpus.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "base/format.hpp"
#include "gpucheck/core/telemetry.hpp"
#include "gpucheck/core/text.hpp"

namespace gpucheck::compare::accept_detail {

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
std::string list_some(const std::vector<std::string>& xs, std::size_t most) {
  std::string s;
  for (std::size_t i = 0; i < xs.size() && i < most; ++i) s += (i ? ", " : "") + xs[i];
  if (xs.size() > most) s += " and " + std::to_string(xs.size() - most) + " more";
  return s;
}

const Benchmark* GpuView::find(const std::string& name) const {
  const auto it = bench.find(name);
  return it == bench.end() ? nullptr : it->second;
}
std::vector<std::string> GpuView::values(const std::string& k) const {
  const auto it = ctx.find(k);
  return it == ctx.end() ? std::vector<std::string>{} : it->second;
}
std::vector<long long> GpuView::ints(const std::string& k) const {
  std::vector<long long> out;
  for (const auto& v : values(k))
    if (const auto i = to_int(v)) out.push_back(*i);
  return out;
}
int GpuView::max_int(const std::string& k) const {
  const auto v = ints(k);
  return v.empty() ? 0 : static_cast<int>(*std::max_element(v.begin(), v.end()));
}
int GpuView::min_int(const std::string& k) const {
  const auto v = ints(k);
  return v.empty() ? 0 : static_cast<int>(*std::min_element(v.begin(), v.end()));
}
std::string GpuView::why_unknown(const std::string& k) const {
  return recorded.count(k) ? k + " unknown (NVML did not report it)"
                           : k + " not in the results (written by an older gpucheck)";
}

namespace {

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

}  // namespace

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

AcceptCheck make_check(const GpuView& g, std::string check, std::string item) {
  AcceptCheck c;
  c.gpu = g.info.label;
  c.check = std::move(check);
  c.item = std::move(item);
  return c;
}

}  // namespace gpucheck::compare::accept_detail
