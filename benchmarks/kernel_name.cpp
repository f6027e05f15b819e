#include "kernel_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "gpucheck/core/dl.hpp"

namespace gpucheck::kernel_name {

std::optional<Record> from_activity(const CuptiKernelRecord& r) {
  if (r.kind != kActivityKernel && r.kind != kActivityConcurrentKernel) return std::nullopt;
  return Record{r.name ? std::string(r.name) : std::string(), r.start, r.end};
}

std::string demangle(std::string_view name) {
  const std::string s(name);
  if (!name.starts_with("_Z")) return s;  // __cxa_demangle also reads type codes: "a" is signed char
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(s.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : s;
}

std::string short_name(std::string_view d) {
  if (d.starts_with("void ")) d.remove_prefix(5);
  // The argument list: the last top-level "(...)" that ends the name.
  if (d.ends_with(")")) {
    int depth = 0;
    for (std::size_t i = d.size(); i-- > 0;) {
      if (d[i] == ')') ++depth;
      if (d[i] == '(' && --depth == 0) {
        if (i > 0) d = d.substr(0, i);
        break;
      }
    }
  }
  std::string out;
  for (char c : d)
    if (c != ' ') out += c;
  return out;
}

std::optional<Picked> pick(const std::vector<Record>& records) {
  auto length = [](const Record& r) { return r.end_ns > r.start_ns ? r.end_ns - r.start_ns : 0; };
  const Record* best = nullptr;
  for (const Record& r : records)
    if (!best || length(r) > length(*best)) best = &r;
  if (!best || best->name.empty()) return std::nullopt;
  return Picked{short_name(demangle(best->name)), records.size()};
}

std::string label(const std::optional<Picked>& p) {
  if (!p) return "kernel=?";
  return "kernel=" + p->name + (p->kernels > 1 ? " kernels=" + std::to_string(p->kernels) : "");
}

namespace {

using Result = int;  // CUptiResult: 0 is CUPTI_SUCCESS
using RequestFn = void (*)(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
using CompleteFn = void (*)(void* context, std::uint32_t stream, std::uint8_t* buffer, std::size_t size,
                            std::size_t valid);

struct Cupti {
  Result (*register_callbacks)(RequestFn, CompleteFn) = nullptr;
  Result (*enable)(std::uint32_t) = nullptr;
  Result (*disable)(std::uint32_t) = nullptr;
  Result (*flush_all)(std::uint32_t) = nullptr;
  Result (*next_record)(std::uint8_t*, std::size_t, void**) = nullptr;
  Result (*result_string)(Result, const char**) = nullptr;
  std::string error;  // why CUPTI cannot be used ("" when it can)
  std::mutex mutex;   // the records, filled by the buffer-complete callback
  std::vector<Record> records;

  std::string what(const char* call, Result r) const {
    const char* s = nullptr;
    if (result_string) result_string(r, &s);
    return std::string(call) + ": " + (s ? s : "CUPTI error " + std::to_string(r));
  }
};

Cupti& cupti();

constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

void on_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void on_complete(void*, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  Cupti& c = cupti();
  void* rec = nullptr;
  std::vector<Record> got;
  while (buffer && c.next_record(buffer, valid, &rec) == 0 && rec) {
    std::uint32_t kind = 0;
    std::memcpy(&kind, rec, sizeof kind);  // every record starts with its kind; only kernels are read whole
    if (kind == kActivityKernel || kind == kActivityConcurrentKernel)
      if (auto r = from_activity(*static_cast<const CuptiKernelRecord*>(rec))) got.push_back(std::move(*r));
  }
  std::free(buffer);
  const std::lock_guard lock(c.mutex);
  for (Record& r : got) c.records.push_back(std::move(r));
}

// libcupti: the library path first, then the toolkit's usual places.
void* open_cupti() {
  std::vector<std::string> paths{"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(env); home && *home)
      for (const char* sub : {"/extras/CUPTI/lib64/libcupti.so", "/lib64/libcupti.so", "/lib/libcupti.so"})
        paths.push_back(std::string(home) + sub);
  for (const char* sub : {"/extras/CUPTI/lib64/libcupti.so", "/lib64/libcupti.so", "/lib/libcupti.so"})
    paths.push_back(std::string("/usr/local/cuda") + sub);
  for (const std::string& p : paths)
    if (void* h = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  return nullptr;
}

Cupti& cupti() {
  static Cupti c;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = open_cupti();  // kept open: CUPTI's threads outlive any scope of ours
    if (!lib) {
      c.error = "libcupti not found (LD_LIBRARY_PATH, $CUDA_HOME, /usr/local/cuda)";
      return;
    }
    dl_bind(lib, "cuptiGetResultString", &c.result_string);
    if (!dl_bind(lib, "cuptiActivityRegisterCallbacks", &c.register_callbacks) ||
        !dl_bind(lib, "cuptiActivityEnable", &c.enable) || !dl_bind(lib, "cuptiActivityDisable", &c.disable) ||
        !dl_bind(lib, "cuptiActivityFlushAll", &c.flush_all) ||
        !dl_bind(lib, "cuptiActivityGetNextRecord", &c.next_record)) {
      c.error = "libcupti lacks the activity API";
      return;
    }
    if (const Result r = c.register_callbacks(on_request, on_complete); r != 0)
      c.error = c.what("cuptiActivityRegisterCallbacks", r);
  });
  return c;
}

}  // namespace

std::optional<std::vector<Record>> trace(const std::function<void()>& call, std::string* why) {
  Cupti& c = cupti();
  if (!c.error.empty()) {  // the call runs all the same: the caller needs its work done
    *why = c.error;
    call();
    return std::nullopt;
  }
  {
    const std::lock_guard lock(c.mutex);
    c.records.clear();
  }
  if (const Result r = c.enable(kActivityConcurrentKernel); r != 0) {
    *why = c.what("cuptiActivityEnable", r);
    call();
    return std::nullopt;
  }
  struct Off {  // tracing stops however the call ends
    Cupti& c;
    ~Off() { c.disable(kActivityConcurrentKernel); }
  } off{c};
  call();
  if (const Result r = c.flush_all(1 /* CUPTI_ACTIVITY_FLAG_FLUSH_FORCED */); r != 0) {
    *why = c.what("cuptiActivityFlushAll", r);
    return std::nullopt;
  }
  const std::lock_guard lock(c.mutex);
  return std::move(c.records);
}

}  // namespace gpucheck::kernel_name
