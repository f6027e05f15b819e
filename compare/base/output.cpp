// The outputs of a command: checked before anything is written, then written one way.
#include "base/output.hpp"

#include <algorithm>
#include <optional>

namespace gpucheck::compare {

bool is_standard_output(const FileSystem& fs, const std::string& path) {
  if (path == "-") return true;
  return fs.output_facts(path).std_stream == 1;
}

namespace {

constexpr int kMaxInputDepth = 16;
constexpr std::size_t kMaxInputFiles = 1'000'000;
constexpr int kMaxFolderDepth = 256;  // folders above an output that are compared with the inputs

void add_folder_files(const FileSystem& fs, const NamedPath& in, const std::string& dir, int depth,
                      std::vector<NamedPath>& files) {
  if (depth > kMaxInputDepth || files.size() >= kMaxInputFiles) return;
  auto names = fs.list(dir);
  if (!names) return;
  for (const std::string& n : *names) {
    const std::string full = join_path(dir, n);
    const FileSystem::Kind k = fs.kind(full);
    if (k == FileSystem::Kind::Directory) add_folder_files(fs, in, full, depth + 1, files);
    else if (k == FileSystem::Kind::File) files.push_back({in.option + " (in " + in.path + ")", full});
  }
}

// An output must not be an input's file (links resolved: the same device and inode).
std::optional<Error> overlap(const FileSystem& fs, const NamedPath& o, const std::vector<NamedPath>& files) {
  for (const NamedPath& in : files)
    if (fs.same_file(o.path, in.path))
      return Error{o.path, o.option + " names an input, " + in.path + " (" + in.option +
                               "): it would be overwritten; write elsewhere"};
  return std::nullopt;
}

// An output file must not land inside an input folder: the next read of that folder would take
// it for an input (a results folder refuses a stray file; a node folder gains one). The output's
// folder and each folder above it (DIR/.., resolved by the kernel, so links count as what they
// name) against `folders`, the inputs that are folders. The walk starts at the nearest folder
// that exists (a command makes the rest, as the gate and fleet make their --out) and ends at the
// root or at something that is not a folder (the write then fails on its own).
std::optional<Error> inside_input_folder(const FileSystem& fs, const NamedPath& o, const std::vector<const NamedPath*>& folders) {
  if (folders.empty()) return std::nullopt;
  std::string up = parent_path(o.path);
  // Folders the command makes first (the gate's and fleet's --out): from the nearest that exists.
  for (int depth = 0; depth < kMaxFolderDepth && fs.kind(up) == FileSystem::Kind::Missing; ++depth) {
    std::string next = parent_path(up);
    if (next == up) break;
    up = std::move(next);
  }
  for (int depth = 0; depth < kMaxFolderDepth && fs.kind(up) == FileSystem::Kind::Directory; ++depth) {
    for (const NamedPath* in : folders)
      if (fs.same_file(up, in->path))
        return Error{o.path, o.option + " is inside " + in->path + " (" + in->option +
                                 "), a folder it reads: the next read would take it for an input; write elsewhere"};
    std::string next = join_path(up, "..");
    if (fs.same_file(next, up)) break;  // the root
    up = std::move(next);
  }
  return std::nullopt;
}

}  // namespace

std::vector<NamedPath> input_files(const FileSystem& fs, const std::vector<NamedPath>& inputs) {
  std::vector<NamedPath> files;
  for (const NamedPath& in : inputs) {
    if (in.path.empty() || in.path == "-") continue;
    if (fs.kind(in.path) == FileSystem::Kind::Directory) add_folder_files(fs, in, in.path, 0, files);
    else files.push_back(in);
  }
  return files;
}

Status check_output_folder(const FileSystem& fs, const NamedPath& folder, const std::vector<NamedPath>& inputs) {
  if (fs.kind(folder.path) != FileSystem::Kind::Directory) return Done{};
  std::vector<NamedPath> written;
  add_folder_files(fs, folder, folder.path, 0, written);
  const std::vector<NamedPath> files = input_files(fs, inputs);
  for (const NamedPath& w : written)
    for (const NamedPath& in : files)
      if (fs.same_file(w.path, in.path))
        return Error{in.path, in.option + " is " + w.path + ", inside " + folder.path + ", which " + folder.option +
                                  " writes into: it would be overwritten; keep it elsewhere"};
  return Done{};
}

Status check_outputs(const FileSystem& fs, const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  std::vector<const NamedPath*> replaced;  // outputs that will be regular files
  for (const NamedPath& o : outputs) {
    if (o.path.empty()) return Error{o.option, "needs a path (or - for standard output)"};
    if (o.path == "-") continue;
    const PathFacts f = fs.output_facts(o.path);
    const OutputKind k = classify_output(o.path, f);
    if (k == OutputKind::refuse) return Error{o.path, "cannot be an output (" + o.option + "): " + refusal_reason(f)};
    if (k == OutputKind::replace) replaced.push_back(&o);
  }
  const std::vector<NamedPath> files = input_files(fs, inputs);
  for (const NamedPath& o : outputs)
    if (o.path != "-")
      if (auto e = overlap(fs, o, files)) return *e;
  std::vector<const NamedPath*> folders;
  for (const NamedPath& in : inputs)
    if (!in.path.empty() && in.path != "-" && fs.kind(in.path) == FileSystem::Kind::Directory) folders.push_back(&in);
  for (const NamedPath* o : replaced)
    if (auto e = inside_input_folder(fs, *o, folders)) return *e;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      const NamedPath& a = outputs[i];
      const NamedPath& b = outputs[j];
      const bool both_stdout = is_standard_output(fs, a.path) && is_standard_output(fs, b.path);
      if (both_stdout || (a.path != "-" && b.path != "-" && fs.same_file(a.path, b.path)))
        return Error{b.path, a.option + " and " + b.option + " name one " +
                                 (both_stdout ? std::string("stream (standard output)") : std::string("file")) +
                                 ": one would overwrite the other"};
    }
  return Done{};
}

Status check_command_outputs(const FileSystem& fs, const CliEnvironment& env, const std::vector<NamedPath>& outputs,
                            const std::vector<NamedPath>& inputs) {
  if (auto c = check_outputs(fs, outputs, inputs); !c) return c;
  if (!env.step_summary_path || env.step_summary_path->empty()) return Done{};
  const std::string& s = *env.step_summary_path;
  if (auto e = overlap(fs, {"GITHUB_STEP_SUMMARY", s}, input_files(fs, inputs))) return *e;
  for (const NamedPath& o : outputs)
    if (o.path != "-" && fs.same_file(s, o.path))
      return Error{s, "GITHUB_STEP_SUMMARY and " + o.option + " name one file: one would overwrite the other"};
  return Done{};
}

Status write_command_output(FileSystem& fs, CliOutput& io, const std::string& path, std::string_view data) {
  if (is_standard_output(fs, path)) {
    io.out += data;
    return Done{};
  }
  return fs.write_output(path, data);
}

Status write_command_outputs(FileSystem& fs, CliOutput& io,
                             const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::pair<std::string, std::string_view>> files;
  std::string to_stdout;
  for (const auto& [path, data] : outputs) {
    if (is_standard_output(fs, path)) to_stdout += data;
    else files.emplace_back(path, data);
  }
  if (auto w = fs.write_outputs(files); !w) return w;
  io.out += to_stdout;
  return Done{};
}

void print_beside(const FileSystem& fs, CliOutput& io, const std::vector<std::string>& outputs, const std::string& text) {
  const bool to_stderr =
      std::any_of(outputs.begin(), outputs.end(), [&](const std::string& p) { return is_standard_output(fs, p); });
  (to_stderr ? io.err : io.out) += text;
}

}  // namespace gpucheck::compare
