// The outputs of a command: checked before anything is written, then written one way.
#include "base/output.hpp"

#include <algorithm>

namespace gpucheck::compare {

bool is_standard_output(const FileSystem& fs, const std::string& path) {
  if (path == "-") return true;
  return fs.output_facts(path).std_stream == 1;
}

Status check_outputs(const FileSystem& fs, const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (const NamedPath& o : outputs) {
    if (o.path.empty()) return Error{o.option, "needs a path (or - for standard output)"};
    if (o.path == "-") continue;
    const PathFacts f = fs.output_facts(o.path);
    if (classify_output(o.path, f) == OutputKind::refuse)
      return Error{o.path, "cannot be an output (" + o.option + "): " + refusal_reason(f)};
  }
  for (const NamedPath& o : outputs)
    for (const NamedPath& in : inputs)
      if (o.path != "-" && !in.path.empty() && fs.same_file(o.path, in.path))
        return Error{o.path, o.option + " names an input (" + in.option + "): it would be overwritten; write elsewhere"};
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
  for (const NamedPath& in : inputs)
    if (!in.path.empty() && fs.same_file(s, in.path))
      return Error{s, "GITHUB_STEP_SUMMARY names an input (" + in.option + "): it would be appended to; write elsewhere"};
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

void print_beside(const FileSystem& fs, CliOutput& io, const std::vector<std::string>& outputs, const std::string& text) {
  const bool to_stderr =
      std::any_of(outputs.begin(), outputs.end(), [&](const std::string& p) { return is_standard_output(fs, p); });
  (to_stderr ? io.err : io.out) += text;
}

}  // namespace gpucheck::compare
