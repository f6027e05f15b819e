// PCRE2 (8-bit), loaded with dlopen as NVML is (core/src/telemetry.cpp): the GPU machine has
// libpcre2-8.so.0 but no header, so the few functions and constants watch uses are declared
// here, as in pcre2.h. PCRE2 runs a pattern with limits on its work (match, depth, heap), so a
// user's catastrophic --step pattern costs one line, never the job; std::regex recursed per
// character and crashed on a 100 KB line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gpucheck::compare::watch {

namespace pcre2 {
using Size = std::size_t;  // PCRE2_SIZE
struct Code;               // pcre2_code_8
struct MatchData;          // pcre2_match_data_8
struct MatchContext;       // pcre2_match_context_8
constexpr int kErrorNoMatch = -1;       // PCRE2_ERROR_NOMATCH
constexpr int kErrorMatchLimit = -47;   // PCRE2_ERROR_MATCHLIMIT
constexpr int kErrorDepthLimit = -53;   // PCRE2_ERROR_DEPTHLIMIT
constexpr int kErrorHeapLimit = -63;    // PCRE2_ERROR_HEAPLIMIT
constexpr Size kUnset = ~Size{0};       // PCRE2_UNSET

// The library's entry points (the _8 names of pcre2.h), bound once.
struct Api {
  Code* (*compile)(const unsigned char*, Size, std::uint32_t, int*, Size*, void*) = nullptr;
  void (*code_free)(Code*) = nullptr;
  MatchData* (*match_data_create_from_pattern)(const Code*, void*) = nullptr;
  void (*match_data_free)(MatchData*) = nullptr;
  int (*match)(const Code*, const unsigned char*, Size, Size, std::uint32_t, MatchData*, MatchContext*) = nullptr;
  Size* (*ovector)(MatchData*) = nullptr;
  int (*error_message)(int, unsigned char*, Size) = nullptr;
  MatchContext* (*match_context_create)(void*) = nullptr;
  void (*match_context_free)(MatchContext*) = nullptr;
  int (*set_match_limit)(MatchContext*, std::uint32_t) = nullptr;
  int (*set_depth_limit)(MatchContext*, std::uint32_t) = nullptr;
  int (*set_heap_limit)(MatchContext*, std::uint32_t) = nullptr;  // 10.30+; may be absent
};
// The loaded library, or nullptr with *err saying why ("cannot load libpcre2-8.so.0: ...").
const Api* load(std::string* err);
}  // namespace pcre2

// A compiled pattern with its match data and limits. Copies share the compiled pattern;
// matching is not thread-safe (one match data).
class Pcre2Pattern {
 public:
  // nullptr-free on success; on failure *err holds the library's message (or why it is missing).
  static std::shared_ptr<Pcre2Pattern> compile(const std::string& pattern, std::string* err);
  ~Pcre2Pattern();
  Pcre2Pattern(const Pcre2Pattern&) = delete;
  Pcre2Pattern& operator=(const Pcre2Pattern&) = delete;

  enum class Result { Match, NoMatch, Limit };
  // Searches `s`; on a match, where group 0 and group 1 start (group1_at: npos when unset).
  Result search(std::string_view s, std::size_t* match_at, std::size_t* group1_at) const;

 private:
  Pcre2Pattern() = default;
  const pcre2::Api* api_ = nullptr;
  pcre2::Code* code_ = nullptr;
  pcre2::MatchData* data_ = nullptr;
  pcre2::MatchContext* ctx_ = nullptr;
};

}  // namespace gpucheck::compare::watch
