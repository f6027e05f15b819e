// The JSON scanner every load goes through (internal to core): strict RFC 8259 in one pass over
// the bytes, no recursion (nesting is a stack, bounded by the caller's depth), no allocation per
// token (a string without escapes is copied once into a reused buffer; escapes are decoded only
// where there are some), numbers read by std::from_chars. It accepts exactly what nlohmann's
// parser accepts after sanitize_non_finite (a leading UTF-8 BOM, strings of well-formed UTF-8,
// integers as unsigned / signed / double as nlohmann types them), with the bare NaN, Infinity and
// -Infinity tokens read as the caller's marker strings where the sanitizer would put them. Events
// go to a handler with nlohmann's SAX interface. A refusal is only where: its wording is
// nlohmann's, and json_load.cpp asks nlohmann's parser for it (the error path only).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::json_scan {

// The three tokens' strings (decoded), as the sanitizer's marks read back.
struct Marks {
  std::string nan, pos_inf, neg_inf;
};

enum class Outcome { Accepted, Refused, HandlerStopped };

// Hands the pages the scanner has passed back to the system every kStep bytes (a little is
// kept behind, never needed again). A refusal only keeps the pages.
class Releaser {
 public:
  Releaser(const char* begin, const char* end, bool on)
      : end_(end), next_(on ? step_from(begin) : nullptr), from_(page_up(begin)) {}
  void at(const char* p) {
    if (next_ == nullptr || p < next_) return;
    // Whole pages inside the text only, ending a page short of where the scanner reads.
    const std::uintptr_t to = (reinterpret_cast<std::uintptr_t>(p) & ~(page() - 1)) - page();
    if (to > from_) {
      (void)madvise(reinterpret_cast<void*>(from_), to - from_, MADV_DONTNEED);  // a refusal only keeps the pages
      from_ = to;
      released_ = true;
    }
    next_ = step_from(p);
  }
  // Whether any of the text was handed back (it then reads as zeros there).
  [[nodiscard]] bool released() const { return released_; }

 private:
  static constexpr std::ptrdiff_t kStep = std::ptrdiff_t{64} << 20;
  static std::uintptr_t page() { return static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE)); }
  static std::uintptr_t page_up(const char* p) {
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
    return (a + page() - 1) & ~(page() - 1);
  }
  // kStep bytes on, or null where the text ends before (no pointer past its end is formed).
  const char* step_from(const char* p) const { return end_ - p > kStep ? p + kStep : nullptr; }
  const char* end_;
  const char* next_;
  std::uintptr_t from_;
  bool released_ = false;
};

// Byte classes inside a string: 0 plain, 1 the closing quote, 2 a backslash, 3 a control
// character (refused), 4 the lead of a multi-byte UTF-8 sequence.
struct StringTable {
  unsigned char c[256];
  constexpr StringTable() : c() {
    for (int i = 0; i < 256; ++i) c[i] = i < 0x20 ? 3 : i == '"' ? 1 : i == '\\' ? 2 : i >= 0x80 ? 4 : 0;
  }
};
inline constexpr StringTable kString{};

// A character that would join a bare token to its neighbour ("NaNx" is no token): the sanitizer's rule.
inline bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

template <class Sax>
class Scanner {
 public:
  Scanner(std::string_view text, const Marks& marks, int max_depth, Sax& sax, bool release)
      : p_(text.data()), end_(text.data() + text.size()), marks_(marks), max_depth_(max_depth), sax_(sax),
        releaser_(text.data(), text.data() + text.size(), release) {}

  Outcome run() {
    if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[0]) == 0xEF && static_cast<unsigned char>(p_[1]) == 0xBB &&
        static_cast<unsigned char>(p_[2]) == 0xBF)
      p_ += 3;
    if (!value_loop()) return outcome_;
    skip_ws();
    // nlohmann's lexer reads a NUL between tokens as the end of the input (the results reader
    // refuses a NUL before any of this; other files keep nlohmann's reading).
    return p_ == end_ || *p_ == '\0' ? Outcome::Accepted : Outcome::Refused;
  }
  // Where the scan stopped (for the message when nlohmann disagrees), and whether the text
  // behind it was handed back.
  [[nodiscard]] std::size_t offset(const char* begin) const { return static_cast<std::size_t>(p_ - begin); }
  [[nodiscard]] bool released() const { return releaser_.released(); }

 private:
  bool refuse() {
    outcome_ = Outcome::Refused;
    return false;
  }
  bool stop() {
    outcome_ = Outcome::HandlerStopped;
    return false;
  }
  void skip_ws() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // The document as a loop over a stack of open containers ('{' or '['): a value, then what
  // may follow it, until the top level's value is complete.
  bool value_loop() {
    for (;;) {
      skip_ws();
      if (p_ == end_) return refuse();
      releaser_.at(p_);
      const char c = *p_;
      if (c == '{' || c == '[') {
        if (static_cast<int>(stack_.size()) >= max_depth_) return refuse();
        ++p_;
        stack_.push_back(c);
        if (!(c == '{' ? sax_.start_object(static_cast<std::size_t>(-1)) : sax_.start_array(static_cast<std::size_t>(-1))))
          return stop();
        skip_ws();
        if (p_ != end_ && *p_ == (c == '{' ? '}' : ']')) {
          ++p_;
          stack_.pop_back();
          if (!(c == '{' ? sax_.end_object() : sax_.end_array())) return stop();
        } else if (c == '{') {
          if (!key()) return false;
          continue;
        } else {
          continue;
        }
      } else if (!scalar()) {
        return false;
      }
      if (!after_value()) return false;
      if (stack_.empty()) return true;
    }
  }

  // After a value: closes containers, and stops before the next value (a key read for an object).
  bool after_value() {
    while (!stack_.empty()) {
      skip_ws();
      if (p_ == end_) return refuse();
      const char c = *p_++;
      const char open = stack_.back();
      if (c == ',') return open == '{' ? key() : true;
      if (c != (open == '{' ? '}' : ']')) return refuse();
      stack_.pop_back();
      if (!(open == '{' ? sax_.end_object() : sax_.end_array())) return stop();
    }
    return true;
  }

  // A key and its colon.
  bool key() {
    skip_ws();
    if (p_ == end_) return refuse();
    if (*p_ == '"') {
      if (!string()) return false;
    } else if (const std::string* mark = bare_token(); mark != nullptr) {
      buf_.assign(*mark);
    } else {
      return refuse();
    }
    if (!sax_.key(buf_)) return stop();
    skip_ws();
    if (p_ == end_ || *p_ != ':') return refuse();
    ++p_;
    return true;
  }

  bool scalar() {
    switch (*p_) {
      case '"':
        if (!string()) return false;
        return sax_.string(buf_) || stop();
      case 't':
        return literal("true", 4) && (sax_.boolean(true) || stop());
      case 'f':
        return literal("false", 5) && (sax_.boolean(false) || stop());
      case 'n':
        return literal("null", 4) && (sax_.null() || stop());
      default:
        break;
    }
    if (const std::string* mark = bare_token(); mark != nullptr) {
      buf_.assign(*mark);
      return sax_.string(buf_) || stop();
    }
    return number();
  }

  bool literal(const char* word, std::ptrdiff_t n) {
    if (end_ - p_ < n || std::string_view(p_, static_cast<std::size_t>(n)) != std::string_view(word, static_cast<std::size_t>(n)))
      return refuse();
    p_ += n;
    return true;
  }

  // NaN, Infinity or -Infinity standing alone (as the sanitizer replaces them): its mark, and
  // the scan past it; nullptr (nothing read) otherwise.
  const std::string* bare_token() {
    const std::string_view rest(p_, static_cast<std::size_t>(end_ - p_));
    const std::string* mark = nullptr;
    std::size_t n = 0;
    if (rest.starts_with("NaN")) {
      mark = &marks_.nan;
      n = 3;
    } else if (rest.starts_with("Infinity")) {
      mark = &marks_.pos_inf;
      n = 8;
    } else if (rest.starts_with("-Infinity")) {
      mark = &marks_.neg_inf;
      n = 9;
    }
    if (mark == nullptr || (n < rest.size() && is_word(rest[n]))) return nullptr;
    p_ += n;
    return mark;
  }

  bool number() {
    const char* const start = p_;
    const bool negative = p_ != end_ && *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return refuse();
    if (*p_++ != '0')
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    bool is_float = false;
    if (p_ != end_ && *p_ == '.') {
      is_float = true;
      if (++p_ == end_ || *p_ < '0' || *p_ > '9') return refuse();
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      is_float = true;
      if (++p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || *p_ < '0' || *p_ > '9') return refuse();
      while (p_ != end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    }
    if (!is_float) {  // nlohmann's types: unsigned, else signed, else (out of range) a double
      if (negative) {
        std::int64_t v = 0;
        if (const auto r = std::from_chars(start, p_, v); r.ec == std::errc() && r.ptr == p_)
          return sax_.number_integer(v) || stop();
      } else {
        std::uint64_t v = 0;
        if (const auto r = std::from_chars(start, p_, v); r.ec == std::errc() && r.ptr == p_)
          return sax_.number_unsigned(v) || stop();
      }
    }
    return floating(start);
  }

  // A double as strtod reads it (from_chars refuses an underflow that strtod makes 0 or subnormal);
  // an overflow is refused, as nlohmann refuses it.
  bool floating(const char* start) {
    double v = 0.0;
    const auto r = std::from_chars(start, p_, v);
    if (r.ec != std::errc() || r.ptr != p_) {
      const std::string copy(start, p_);
      v = std::strtod(copy.c_str(), nullptr);
    }
    if (!std::isfinite(v)) return refuse();
    return sax_.number_float(v, empty_) || stop();
  }

  // A string literal into buf_ (p_ at its opening quote; after its closing quote on return).
  bool string() {
    const char* run = ++p_;
    buf_.clear();
    for (;;) {
      while (p_ != end_ && kString.c[static_cast<unsigned char>(*p_)] == 0) ++p_;
      if (p_ == end_) return refuse();
      switch (kString.c[static_cast<unsigned char>(*p_)]) {
        case 1:
          buf_.append(run, p_);
          ++p_;
          return true;
        case 2:
          buf_.append(run, p_);
          if (!escape()) return false;
          run = p_;
          break;
        case 3:
          return refuse();
        default:
          if (!utf8()) return refuse();
          break;
      }
    }
  }

  // One well-formed UTF-8 sequence of 2 to 4 bytes (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF).
  bool utf8() {
    const auto b = [&](std::ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
    const unsigned char lead = b(0);
    std::ptrdiff_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) n = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) {
      n = 3;
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      n = 4;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (end_ - p_ < n || b(1) < lo || b(1) > hi) return false;
    for (std::ptrdiff_t i = 2; i < n; ++i)
      if (b(i) < 0x80 || b(i) > 0xBF) return false;
    p_ += n;
    return true;
  }

  // Four hex digits after "\u" (p_ on the first), or -1.
  long hex4() {
    if (end_ - p_ < 4) return -1;
    long v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  }

  // An escape (p_ at its backslash) decoded onto buf_.
  bool escape() {
    if (++p_ == end_) return refuse();
    const char c = *p_++;
    switch (c) {
      case '"': buf_ += '"'; return true;
      case '\\': buf_ += '\\'; return true;
      case '/': buf_ += '/'; return true;
      case 'b': buf_ += '\b'; return true;
      case 'f': buf_ += '\f'; return true;
      case 'n': buf_ += '\n'; return true;
      case 'r': buf_ += '\r'; return true;
      case 't': buf_ += '\t'; return true;
      case 'u': break;
      default: return refuse();
    }
    long cp = hex4();
    if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return refuse();
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: its low half must follow
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return refuse();
      p_ += 2;
      const long low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) return refuse();
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    put_utf8(static_cast<std::uint32_t>(cp));
    return true;
  }

  void put_utf8(std::uint32_t cp) {
    if (cp < 0x80) {
      buf_ += static_cast<char>(cp);
    } else if (cp < 0x800) {
      buf_ += static_cast<char>(0xC0 | (cp >> 6));
      buf_ += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      buf_ += static_cast<char>(0xE0 | (cp >> 12));
      buf_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      buf_ += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      buf_ += static_cast<char>(0xF0 | (cp >> 18));
      buf_ += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      buf_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      buf_ += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  const char* p_;
  const char* const end_;
  const Marks& marks_;
  const int max_depth_;
  Sax& sax_;
  Releaser releaser_;
  std::vector<char> stack_;
  std::string buf_;
  const std::string empty_;
  Outcome outcome_ = Outcome::Accepted;
};

}  // namespace gpucheck::json_scan
