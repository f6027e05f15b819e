// Pure helpers of the runner contract (tested without processes).
#include "runner/suite.hpp"

#include <algorithm>
#include <cctype>

#include "gpucheck/core/text.hpp"

namespace gpucheck::compare {

Expected<SuiteBinaries> discover_binaries(const FileSystem& fs, const std::string& dir) {
  if (const FileSystem::Kind k = fs.kind(dir); k != FileSystem::Kind::Directory)
    return Error{dir, k == FileSystem::Kind::Missing ? "no such folder (--bin-dir)" : "is not a folder (--bin-dir)"};
  SuiteBinaries out;
  const std::string list = join_path(dir, kBenchmarkList);
  if (fs.kind(list) == FileSystem::Kind::File) {
    auto text = fs.read(list, 1 << 20);
    if (!text) return text.error();
    out.from_list = true;
    std::size_t from = 0;
    int line_no = 0;
    while (from < text->size()) {
      const std::size_t nl = text->find('\n', from);
      const std::string line(trim(std::string_view(*text).substr(from, (nl == std::string::npos ? text->size() : nl) - from)));
      from = nl == std::string::npos ? text->size() : nl + 1;
      ++line_no;
      if (line.empty() || line[0] == '#') continue;
      if (line == kBenchmarkList)
        return Error{list, "line " + std::to_string(line_no) + ": lists itself; list binary names"};
      if (line.find('/') != std::string::npos)
        return Error{list, "line " + std::to_string(line_no) + ": \"" + line + "\" is a path; list binary names"};
      if (!fs.is_executable(join_path(dir, line)))
        return Error{list, "lists " + line + ", which is not an executable in " + dir + " (not built?)"};
      if (std::find(out.names.begin(), out.names.end(), line) == out.names.end()) out.names.push_back(line);
    }
    if (out.names.empty()) return Error{list, "lists no binaries"};
    return out;
  }
  auto names = fs.list(dir);
  if (!names) return names.error();
  for (const auto& n : *names)
    if (n.rfind("bench_", 0) == 0 && fs.is_executable(join_path(dir, n))) out.names.push_back(n);
  std::sort(out.names.begin(), out.names.end());
  if (out.names.empty()) return Error{dir, "holds no executable bench_* binaries (built with the CUDA benchmarks on?)"};
  return out;
}

std::string escape_regex(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string cases_filter(const std::vector<std::string>& names) {
  std::string f = "^(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) f += '|';
    f += escape_regex(names[i]);
  }
  return f.append(")(/|$)");
}

double default_timeout_s(std::string_view suite) { return suite == "quick" ? 300.0 : 3600.0; }

double kill_grace_s(double timeout_s) { return std::clamp(timeout_s / 10.0, 1.0, 10.0); }

std::vector<std::string> last_lines(std::string_view text, std::size_t n) {
  std::vector<std::string> out;
  std::size_t end = text.size();
  while (end > 0 && out.size() < n) {
    const std::size_t nl = text.rfind('\n', end - 1);
    const std::size_t from = nl == std::string_view::npos ? 0 : nl + 1;
    std::string line(trim(text.substr(from, end - from)));
    if (!line.empty()) {
      for (char& c : line)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
      if (line.size() > 300) line = line.substr(0, 300) + "...";
      out.push_back(std::move(line));
    }
    if (nl == std::string_view::npos) break;
    end = nl;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string last_line(std::string_view text) {
  const auto l = last_lines(text, 1);
  return l.empty() ? std::string() : l.front();
}

bool says_no_device(std::string_view line) {
  std::string lower(line);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("no cuda device") != std::string::npos || lower.find("no cuda-capable device") != std::string::npos;
}

}  // namespace gpucheck::compare
