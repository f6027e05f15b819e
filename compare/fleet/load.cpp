// Reading node folders. Every problem with one node stays that node's (named in the verdict);
// only what the user typed (a path that is no folder, two folders of one name) is exit 2.
#include <algorithm>

#include "accept/command.hpp"
#include "fleet/load.hpp"
#include "fleet/parallel.hpp"

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
  NodeInput in{base_name(name), {}, std::nullopt};
  Scan s;
  scan(fs, dir, 0, s);
  if (!s.temps.empty()) {
    in.problem = "half-written: " + s.temps.front() + " is a temporary left by a writer that did not finish";
  } else if (s.files.empty()) {
    in.problem = "empty: " + dir + " holds no results";
  } else if (fs.kind(join_path(dir, "accept.json")) != FileSystem::Kind::File) {
    in.problem = "half-written: " + dir + " has no accept.json (gpucheck accept did not finish)";
  } else if (auto files = load_accept_results(fs, s.files); !files) {  // the files found, not a second walk
    in.problem = "half-written: " + files.error().str();
  } else {
    in.files = std::move(*files);
  }
  return in;
}

}  // namespace

Expected<std::vector<NodeInput>> load_nodes(const FileSystem& fs, const std::vector<std::string>& paths) {
  if (paths.empty()) return Error{"fleet", "needs node folders, or one folder of node folders"};
  std::vector<std::string> dirs;  // every node folder, then read on every core
  for (const std::string& p : paths) {
    const auto kind = fs.kind(p);
    if (kind == FileSystem::Kind::Missing) return Error{p, "no such folder"};
    if (kind != FileSystem::Kind::Directory) return Error{p, "not a folder (a node folder, or a folder of node folders)"};
    if (is_node_folder(fs, p)) {
      dirs.push_back(p);
      continue;
    }
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
    if (subs.empty()) dirs.push_back(p);  // one of several node folders, empty
    dirs.insert(dirs.end(), subs.begin(), subs.end());
  }
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
