#include "watch/pcre2.hpp"

#include <dlfcn.h>

#include "gpucheck/core/dl.hpp"

namespace gpucheck::compare::watch {
namespace pcre2 {
namespace {

// Per line: a bound on the matcher's steps (a catastrophic pattern stops here, within
// milliseconds), its backtracking depth and its heap (KiB).
constexpr std::uint32_t kMatchLimit = 1'000'000;
constexpr std::uint32_t kDepthLimit = 10'000;
constexpr std::uint32_t kHeapLimitKiB = 64 * 1024;

}  // namespace

const Api* load(std::string* err) {
  static const Api api = [] {
    Api a;
    void* lib = dlopen("libpcre2-8.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;
    const bool ok = dl_bind(lib, "pcre2_compile_8", &a.compile) && dl_bind(lib, "pcre2_code_free_8", &a.code_free) &&
                    dl_bind(lib, "pcre2_match_data_create_from_pattern_8", &a.match_data_create_from_pattern) &&
                    dl_bind(lib, "pcre2_match_data_free_8", &a.match_data_free) && dl_bind(lib, "pcre2_match_8", &a.match) &&
                    dl_bind(lib, "pcre2_get_ovector_pointer_8", &a.ovector) &&
                    dl_bind(lib, "pcre2_get_error_message_8", &a.error_message) &&
                    dl_bind(lib, "pcre2_match_context_create_8", &a.match_context_create) &&
                    dl_bind(lib, "pcre2_match_context_free_8", &a.match_context_free) &&
                    dl_bind(lib, "pcre2_set_match_limit_8", &a.set_match_limit) &&
                    dl_bind(lib, "pcre2_set_depth_limit_8", &a.set_depth_limit);
    dl_bind(lib, "pcre2_set_heap_limit_8", &a.set_heap_limit);
    if (!ok) a.compile = nullptr;
    return a;
  }();
  if (api.compile == nullptr) {
    *err = "needs PCRE2 (libpcre2-8.so.0), which cannot be loaded here";
    return nullptr;
  }
  return &api;
}

}  // namespace pcre2

std::shared_ptr<Pcre2Pattern> Pcre2Pattern::compile(const std::string& pattern, std::string* err) {
  const pcre2::Api* api = pcre2::load(err);
  if (api == nullptr) return nullptr;
  std::shared_ptr<Pcre2Pattern> p(new Pcre2Pattern());
  p->api_ = api;
  int code = 0;
  pcre2::Size offset = 0;
  p->code_ = api->compile(reinterpret_cast<const unsigned char*>(pattern.data()), pattern.size(), 0, &code, &offset, nullptr);
  if (p->code_ == nullptr) {
    unsigned char msg[256] = {};
    if (api->error_message(code, msg, sizeof msg) < 0) msg[0] = '\0';
    *err = std::string(reinterpret_cast<const char*>(msg)) + " at offset " + std::to_string(offset);
    return nullptr;
  }
  p->data_ = api->match_data_create_from_pattern(p->code_, nullptr);
  p->ctx_ = api->match_context_create(nullptr);
  if (p->data_ == nullptr || p->ctx_ == nullptr) {
    *err = "out of memory";
    return nullptr;
  }
  api->set_match_limit(p->ctx_, pcre2::kMatchLimit);
  api->set_depth_limit(p->ctx_, pcre2::kDepthLimit);
  if (api->set_heap_limit != nullptr) api->set_heap_limit(p->ctx_, pcre2::kHeapLimitKiB);
  return p;
}

Pcre2Pattern::~Pcre2Pattern() {
  if (api_ == nullptr) return;
  if (ctx_ != nullptr) api_->match_context_free(ctx_);
  if (data_ != nullptr) api_->match_data_free(data_);
  if (code_ != nullptr) api_->code_free(code_);
}

Pcre2Pattern::Result Pcre2Pattern::search(std::string_view s, std::size_t* match_at, std::size_t* group1_at) const {
  const int rc = api_->match(code_, reinterpret_cast<const unsigned char*>(s.data()), s.size(), 0, 0, data_, ctx_);
  if (rc == pcre2::kErrorNoMatch) return Result::NoMatch;
  if (rc < 0) return Result::Limit;  // a limit (match, depth, heap) or another refusal: no answer
  const pcre2::Size* ov = api_->ovector(data_);
  *match_at = ov[0];
  // rc is 1 + the highest group set (0: the ovector was too small, which it is not here).
  *group1_at = rc >= 2 && ov[2] != pcre2::kUnset ? ov[2] : std::string_view::npos;
  return Result::Match;
}

}  // namespace gpucheck::compare::watch
