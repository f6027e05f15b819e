#include "gpucheck/core/regex.hpp"

#include <regex.h>

namespace gpucheck {

struct Regex::Compiled {
  regex_t re{};
  bool compiled = false;  // regfree only what regcomp built
  Compiled() = default;
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;
  ~Compiled() {
    if (compiled) regfree(&re);
  }
};

std::optional<Regex> Regex::compile(const std::string& pattern, std::string* err) {
  auto c = std::make_shared<Compiled>();
  const int rc = regcomp(&c->re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char buf[256] = {};
    regerror(rc, &c->re, buf, sizeof buf);
    if (err != nullptr) *err = buf;
    return std::nullopt;
  }
  c->compiled = true;
  return Regex(pattern, std::move(c));
}

bool Regex::search(const std::string& text) const { return regexec(&re_->re, text.c_str(), 0, nullptr, 0) == 0; }

}  // namespace gpucheck
