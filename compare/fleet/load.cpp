// Reading node folders. Every problem with one node stays that node's (named in the verdict);
// only what the user typed (a path that is no folder, two folders of one name) is exit 2.
#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "accept/command.hpp"
#include "fleet/load.hpp"
#include "fleet/parallel.hpp"
#include "gpucheck/core/json_load.hpp"

namespace gpucheck::compare::fleet {
namespace {

constexpr int kMaxDepth = 6;

// One walk of a node folder: its results files (as accept's loader walks: hidden entries, logs/
// and the verdict accept.json skipped) and any temporary a killed writer left.
struct Scan {
  std::vector<std::string> files, temps;
};

void scan(const FileSystem& fs, const std::string& dir, int depth, Scan& s) {
  if (depth > kMaxDepth) return;
  auto names = fs.list(dir);
  if (!names) return;
  for (const std::string& n : *names) {
    const std::string full = join_path(dir, n);
    if (is_stale_temporary(n)) s.temps.push_back(full);
    if (n.starts_with(".") || n == "logs") continue;
    const auto kind = fs.kind(full);
    if (kind == FileSystem::Kind::Directory) scan(fs, full, depth + 1, s);
    else if (kind == FileSystem::Kind::File && n.ends_with(".json") && n != "accept.json") s.files.push_back(full);
  }
}

using json = nlohmann::ordered_json;

const std::string& text_field(const json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string())
    throw std::runtime_error((where.empty() ? std::string(key) : where + "." + key) + ": expected a string");
  return it->get_ref<const std::string&>();
}

const json& list_field(const json& doc, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_array()) throw std::runtime_error(std::string(key) + ": expected a list");
  return *it;
}

// accept.json as render_accept_json writes it (schema 1). Strict where a field decides the
// node's verdict: the schema, the verdict, each check's verdict.
RecordedAccept parse_recorded(const json& doc) {
  if (!doc.is_object()) throw std::runtime_error("expected an object (gpucheck accept's verdict)");
  const auto schema = doc.find("gpucheck_accept");
  if (schema == doc.end() || !schema->is_number_unsigned() || schema->get<std::uint64_t>() != 1)
    throw std::runtime_error("gpucheck_accept: expected 1 (the schema this gpucheck reads)");
  const std::string& verdict = text_field(doc, "verdict", "");
  if (verdict != "pass" && verdict != "fail") throw std::runtime_error("verdict: expected \"pass\" or \"fail\"");
  RecordedAccept r;
  const json& checks = list_field(doc, "checks");
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const json& c = checks[i];
    const std::string where = "checks[" + std::to_string(i) + "]";
    if (!c.is_object()) throw std::runtime_error(where + ": expected an object");
    const std::string& v = text_field(c, "verdict", where);
    if (v != "pass" && v != "fail" && v != "reported" && v != "not_checked")
      throw std::runtime_error(where + ".verdict: expected pass, fail, reported or not_checked");
    const std::string& bench = text_field(c, "benchmark", where);
    if (!bench.empty() && v != "not_checked") r.benchmarks.push_back(bench);
    if (v != "fail") continue;
    AcceptCheck f;
    f.gpu = text_field(c, "gpu", where);
    f.check = text_field(c, "check", where);
    f.item = text_field(c, "item", where);
    f.note = text_field(c, "note", where);
    f.verdict = AcceptVerdict::Fail;
    r.failures.push_back(std::move(f));
  }
  if (verdict == "fail" && r.failures.empty()) {  // a verdict with no check behind it still counts
    AcceptCheck f;
    f.gpu = "node";
    f.check = "accept";
    f.note = "accept.json says fail";
    f.verdict = AcceptVerdict::Fail;
    r.failures.push_back(std::move(f));
  }
  for (const json& g : list_field(doc, "gpus")) {
    if (!g.is_object()) throw std::runtime_error("gpus: expected objects");
    const std::string& uuid = text_field(g, "uuid", "gpus[]");
    if (!uuid.empty() && uuid != "unknown") r.gpu_uuids.push_back(uuid);
  }
  return r;
}

Expected<RecordedAccept> read_recorded_accept(const FileSystem& fs, const std::string& path) {
  auto text = fs.read(path, kMaxFileBytes);
  if (!text) return text.error();
  json doc;
  std::string err;
  if (!load_json(*text, path, &doc, &err)) return Error{path, err.substr(std::min(err.size(), path.size() + 2))};
  try {
    return parse_recorded(doc);
  } catch (const std::exception& e) {
    return Error{path, e.what()};
  }
}

bool is_gpu_folder(const std::string& n) {
  return n == "node" || (n.size() > 3 && n.starts_with("gpu") &&
                         std::all_of(n.begin() + 3, n.end(), [](char c) { return c >= '0' && c <= '9'; }));
}

// A node folder holds accept.json, results, or accept's gpuN/ and node/ folders.
bool is_node_folder(const FileSystem& fs, const std::string& dir) {
  auto names = fs.list(dir);
  if (!names) return false;
  return std::any_of(names->begin(), names->end(), [&](const std::string& n) {
    const std::string full = join_path(dir, n);
    return (n.ends_with(".json") && !n.starts_with(".") && fs.kind(full) == FileSystem::Kind::File) ||
           (is_gpu_folder(n) && fs.kind(full) == FileSystem::Kind::Directory);
  });
}

NodeInput read_node(const FileSystem& fs, const std::string& dir) {
  std::string name = dir;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  NodeInput in{base_name(name), {}, std::nullopt, std::nullopt, dir};
  Scan s;
  scan(fs, dir, 0, s);
  const std::string verdict = join_path(dir, "accept.json");
  if (!s.temps.empty()) {
    in.problem = "half-written: " + s.temps.front() + " is a temporary left by a writer that did not finish";
  } else if (s.files.empty()) {
    in.problem = "empty: " + dir + " holds no results";
  } else if (fs.kind(verdict) != FileSystem::Kind::File) {
    in.problem = "half-written: " + dir + " has no accept.json (gpucheck accept did not finish)";
  } else if (auto files = load_accept_results(fs, s.files); !files) {  // the files found, not a second walk
    in.problem = "half-written: " + files.error().str();
  } else if (auto recorded = read_recorded_accept(fs, verdict); !recorded) {
    in.problem = "half-written: " + recorded.error().str();
  } else {
    in.files = std::move(*files);
    in.recorded = std::move(*recorded);
  }
  return in;
}

}  // namespace

Expected<NodeFolders> node_folders(const FileSystem& fs, const std::vector<std::string>& paths) {
  if (paths.empty()) return Error{"fleet", "needs node folders, or one folder of node folders"};
  NodeFolders f;
  for (const std::string& p : paths) {
    const auto kind = fs.kind(p);
    if (kind == FileSystem::Kind::Missing) return Error{p, "no such folder"};
    if (kind != FileSystem::Kind::Directory) return Error{p, "not a folder (a node folder, or a folder of node folders)"};
    if (is_node_folder(fs, p)) {
      f.nodes.push_back(p);
      continue;
    }
    f.parents.push_back(p);
    auto names = fs.list(p);
    if (!names) return names.error();
    std::vector<std::string> subs;
    for (const std::string& n : *names) {
      const std::string full = join_path(p, n);
      if (n.starts_with(".") || n == kRecheckFolder || fs.kind(full) != FileSystem::Kind::Directory) continue;
      if (fs.kind(join_path(full, "fleet.json")) == FileSystem::Kind::File) continue;  // a fleet's own --out
      subs.push_back(full);
    }
    if (subs.empty() && paths.size() == 1) return Error{p, "holds no node folders"};
    if (subs.empty()) f.nodes.push_back(p);  // one of several node folders, empty
    f.nodes.insert(f.nodes.end(), subs.begin(), subs.end());
  }
  return f;
}

Expected<std::vector<NodeInput>> load_nodes(const FileSystem& fs, const std::vector<std::string>& paths) {
  auto folders = node_folders(fs, paths);
  if (!folders) return folders.error();
  const std::vector<std::string>& dirs = folders->nodes;  // every node folder, then read on every core
  std::vector<NodeInput> out(dirs.size());
  parallel_for(dirs.size(), [&](std::size_t i) { out[i] = read_node(fs, dirs[i]); });
  std::vector<std::string> names;
  for (const NodeInput& n : out) names.push_back(n.name);
  std::sort(names.begin(), names.end());
  if (const auto d = std::adjacent_find(names.begin(), names.end()); d != names.end())
    return Error{"fleet", "two node folders are named \"" + *d + "\" (a node is its folder's name)"};
  return out;
}

}  // namespace gpucheck::compare::fleet
