// A POSIX extended regular expression, as Google Benchmark reads --benchmark_filter, matched by
// the C library (regcomp/regexec). std::regex recursed once per character of the text: a 50 KB
// case name under `--filter 'x/.*b'` overflowed the stack (SIGSEGV), and `(a*)*b` against a
// 29-character name backtracked for minutes. glibc's matcher walks the text without recursion
// and without exponential backtracking (no back-references in ERE), so every filter of every
// command runs through this one type.
#pragma once
#include <memory>
#include <optional>
#include <string>

namespace gpucheck {

class Regex {
 public:
  // The compiled expression, or nullopt with regerror's reason in *err. An empty pattern
  // matches everything, as regcomp has it.
  static std::optional<Regex> compile(const std::string& pattern, std::string* err);
  // True when the expression matches somewhere in `text` (a search, not a whole match). Text
  // after a NUL byte is not searched.
  bool search(const std::string& text) const;
  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  Regex(std::string pattern, std::shared_ptr<const Compiled> re) : pattern_(std::move(pattern)), re_(std::move(re)) {}
  std::string pattern_;
  std::shared_ptr<const Compiled> re_;  // shared: a Regex copies like a value; regexec does not change it
};

}  // namespace gpucheck
