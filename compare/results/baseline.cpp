// Baseline store. The write goes to a hidden temp file in the target folder (same file
// system, so rename is atomic), is flushed, then renamed over the old baseline: a crash at
// any point leaves either the old baseline or the new one, never half of one.
#include "results/baseline.hpp"

#include "base/output.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace gpucheck::compare {

std::string gpu_slug(std::string_view gpu_name) {
  std::string out;
  for (const char c : gpu_name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

bool valid_store_name(std::string_view n) {
  if (n.empty() || n.size() > 100 || n[0] == '.') return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
}

namespace {

// One value of a context key, or an error when the results mix several (a merged folder).
Expected<std::string> single_value(const Results& r, const std::string& key, const std::string& what) {
  const std::string v = r.context_value(key);
  if (v.find(" | ") != std::string::npos)
    return Error{r.source, "results mix " + what + "s (" + v + "); store one " + what + " per baseline"};
  return v;
}

// What the update says about the baseline it replaces.
void describe_changes(BaselineUpdate& u, const Results& results, const Results& old, double report_change_pct) {
  for (const auto& b : results.benchmarks) {
    const Benchmark* ob = old.find(b.name);
    if (ob == nullptr) {
      u.added.push_back(b.name);
      continue;
    }
    ++u.common;
    if (ob->state == RunState::Ok && b.state == RunState::Ok && ob->real_time_ns > 0) {
      const double ch = (b.real_time_ns - ob->real_time_ns) / ob->real_time_ns;
      if (std::fabs(ch) * 100.0 > report_change_pct) u.moved.push_back({b.name, ch});
    }
  }
  for (const auto& ob : old.benchmarks)
    if (results.find(ob.name) == nullptr) u.removed.push_back(ob.name);
}

}  // namespace

std::vector<std::string> baseline_candidates(const std::string& root, const std::string& gpu_name,
                                             const std::string& host_cpu, const std::string& suite) {
  const std::string dir = join_path(root, gpu_slug(gpu_name));
  std::vector<std::string> out;
  if (host_cpu != "unknown" && host_cpu.find(" | ") == std::string::npos)
    out.push_back(join_path(join_path(dir, host_slug(host_cpu)), suite + ".json"));
  out.push_back(join_path(dir, suite + ".json"));
  return out;
}

Expected<BaselineUpdate> update_baseline(FileSystem& fs, const Results& results, const BaselineUpdateOptions& o) {
  if (!valid_store_name(o.suite))
    return Error{"--suite", "bad suite name \"" + o.suite + "\" (letters, digits, '-', '_', '.')"};
  if (results.raw_entries.empty()) return Error{results.source, "no benchmarks to store"};
  auto gpu = single_value(results, "gpu_name", "GPU model");
  if (!gpu) return gpu.error();
  const std::string gpu_name = *gpu;
  std::string slug;
  if (o.gpu_slug) {
    slug = *o.gpu_slug;
    if (!valid_store_name(slug)) return Error{"--gpu", "bad GPU slug \"" + slug + "\""};
    if (gpu_name != "unknown" && gpu_slug(gpu_name) != slug && !o.force)
      return Error{results.source, "results are from " + gpu_name + " (" + gpu_slug(gpu_name) + "), not " + slug +
                                       "; --force stores them anyway"};
  } else {
    if (gpu_name == "unknown")
      return Error{results.source, "context has no gpu_name; pass --gpu SLUG to say which GPU this is"};
    slug = gpu_slug(gpu_name);
  }

  BaselineUpdate u;
  u.slug = slug;
  u.gpu_name = gpu_name;
  std::string dir = join_path(o.root, slug);
  if (o.per_host) {
    auto host = single_value(results, "host_cpu", "host CPU");
    if (!host) return host.error();
    if (*host == "unknown") return Error{results.source, "context has no host_cpu: --host cannot name the host's folder"};
    u.host_slug = host_slug(*host);
    dir = join_path(dir, u.host_slug);
  }
  u.path = join_path(dir, o.suite + ".json");
  // The stored baseline given as the results would store itself again: nothing measured, and
  // a sign that the wrong file was named (--force does not change that).
  // A folder of results is checked file by file: the stored file may sit inside it.
  const std::vector<NamedPath> inputs =
      o.inputs.empty() ? std::vector<NamedPath>{{"RESULTS", results.source}} : o.inputs;
  for (const NamedPath& in : input_files(fs, inputs))
    if (fs.same_file(in.path, u.path))
      return Error{in.path, in.option == "RESULTS"
                                ? "is the baseline this update would replace (" + u.path + "): give the results of a new run"
                                : "is " + in.option + ", an input, where this update would write the baseline (" + u.path +
                                      "): keep it elsewhere"};
  if (auto c = check_outputs(fs, {{"BASELINE", u.path}}, inputs); !c) return c.error();
  u.benchmarks = results.benchmarks.size();
  for (const auto& b : results.benchmarks)
    if (b.state != RunState::Ok) ++u.not_ok;

  const std::string text = to_gbench_json(results);
  // What we store must read back as what we were given, or nothing is written.
  auto check = parse_results(text, u.path);
  if (!check) return Error{u.path, "refusing to write a baseline that does not read back: " + check.error().message};
  if (check->benchmarks.size() != results.benchmarks.size())
    return Error{u.path, "refusing to write: the stored form lost benchmarks"};

  if (auto made = fs.make_dirs(dir); !made) return made.error();
  // One update of a folder at a time: the second waits, then sees what the first stored. The
  // lock is written (its holder's pid): a link there is refused, never followed to its target.
  const std::string lock_path = join_path(dir, ".lock");
  const FileSystem::Kind lock_kind = fs.kind(lock_path);
  if (fs.is_link(lock_path) || (lock_kind != FileSystem::Kind::Missing && lock_kind != FileSystem::Kind::File))
    return Error{lock_path, "baseline not updated: the lock is not a regular file (a link or other); remove it"};
  auto lock = fs.lock(lock_path, o.lock_wait_s);
  if (!lock) return Error{u.path, "baseline not updated: " + lock.error().str()};
  u.waited_s = (*lock)->waited_s();
  // A temporary here is another writer's (this update's or a report's): removed only when that
  // process is gone (core's remove_stale_temps), once per file it stood for.
  std::set<std::string> targets;
  if (auto names = fs.list(dir))
    for (const auto& n : *names)
      if (is_stale_temporary(n)) targets.insert(n.substr(1, n.rfind(".tmp-") - 1));
  for (const auto& t : targets)
    for (auto& n : remove_stale_temps(join_path(dir, t))) u.cleaned.push_back(std::move(n));

  std::optional<Results> old;
  if (fs.kind(u.path) != FileSystem::Kind::Missing) {
    auto old_text = fs.read(u.path, kMaxFileBytes);
    Expected<Results> parsed = old_text ? parse_results(*old_text, u.path) : Expected<Results>(old_text.error());
    if (!parsed) {
      if (!o.force) return Error{u.path, "existing baseline does not read (" + parsed.error().message + "); --force replaces it"};
    } else {
      const std::string old_gpu = parsed->context_value("gpu_name");
      if (old_gpu != gpu_name && !o.force)
        return Error{u.path, "stored baseline is from " + old_gpu + ", results are from " + gpu_name +
                                 "; --force replaces it"};
      old = std::move(*parsed);
    }
    u.replaced = true;
  }

  if (auto w = fs.write_output(u.path, text); !w) return Error{u.path, "baseline not updated: " + w.error().str()};
  if (old) describe_changes(u, results, *old, o.report_change_pct);
  return u;
}

Expected<std::vector<StoredBaseline>> list_baselines(const FileSystem& fs, const std::string& root,
                                                     const std::optional<std::string>& slug) {
  if (fs.kind(root) != FileSystem::Kind::Directory) return Error{root, "no baselines folder here"};
  std::vector<std::string> slugs;
  if (slug) {
    if (!valid_store_name(*slug)) return Error{"--gpu", "bad GPU slug \"" + *slug + "\""};
    if (fs.kind(join_path(root, *slug)) != FileSystem::Kind::Directory)
      return Error{join_path(root, *slug), "no baselines for this GPU"};
    slugs.push_back(*slug);
  } else {
    auto names = fs.list(root);
    if (!names) return names.error();
    for (const auto& n : *names)
      if (!n.starts_with(".") && fs.kind(join_path(root, n)) == FileSystem::Kind::Directory) slugs.push_back(n);
  }
  std::vector<StoredBaseline> out;
  // The GPU model's folder, then each host folder in it.
  std::vector<std::pair<std::string, std::string>> folders;  // slug, host
  for (const auto& s : slugs) {
    folders.emplace_back(s, "");
    auto names = fs.list(join_path(root, s));
    if (!names) return names.error();
    for (const auto& n : *names)
      if (!n.starts_with(".") && fs.kind(join_path(join_path(root, s), n)) == FileSystem::Kind::Directory)
        folders.emplace_back(s, n);
  }
  for (const auto& [s, host] : folders) {
    const std::string dir = host.empty() ? join_path(root, s) : join_path(join_path(root, s), host);
    auto names = fs.list(dir);
    if (!names) return names.error();
    for (const auto& n : *names) {
      if (n.starts_with(".") || !n.ends_with(".json")) continue;
      StoredBaseline b;
      b.slug = s;
      b.host = host;
      b.suite = n.substr(0, n.size() - 5);
      b.path = join_path(dir, n);
      auto text = fs.read(b.path, kMaxFileBytes);
      auto r = text ? parse_results(*text, b.path) : Expected<Results>(text.error());
      if (!r) {
        b.problem = r.error().message;
      } else {
        b.benchmarks = r->benchmarks.size();
        b.gpu_name = r->context_value("gpu_name");
        b.commit = r->context_value("gpucheck_commit");
        b.date = r->context_value("date");
        b.driver = r->context_value("driver_version");
      }
      out.push_back(std::move(b));
    }
  }
  return out;
}

}  // namespace gpucheck::compare
