// The name of the kernel a library call ran, which cuBLASLt's API does not give (its algorithm
// is an index): CUPTI's activity API records the kernels of one untimed call. libcupti ships
// with the CUDA toolkit but not always on the library path, and its headers are not needed:
// it is loaded at run time (dlopen) and the few functions and the kernel record's leading
// fields are declared here. Without CUPTI (or when a profiler holds it) the name is unknown
// and the case still runs. Used by bench_matmul; the pure parts are unit-tested.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::kernel_name {

// CUPTI's kernel activity record (CUpti_ActivityKernel4 to CUpti_ActivityKernel10 of
// cupti_activity.h share these leading fields; later fields are appended, never moved).
struct CuptiKernelRecord {
  std::uint32_t kind;  // CUpti_ActivityKind
  std::uint8_t cache_config, shared_memory_config;
  std::uint16_t registers_per_thread;
  std::uint32_t partitioned_cache_requested, partitioned_cache_executed;
  std::uint64_t start, end, completed;  // ns
  std::uint32_t device_id, context_id, stream_id;
  std::int32_t grid[3], block[3];
  std::int32_t static_shared_memory, dynamic_shared_memory;
  std::uint32_t local_memory_per_thread, local_memory_total;
  std::uint32_t correlation_id;
  std::int64_t grid_id;
  const char* name;  // mangled
};
static_assert(offsetof(CuptiKernelRecord, start) == 16 && offsetof(CuptiKernelRecord, end) == 24);
static_assert(offsetof(CuptiKernelRecord, correlation_id) == 92 && offsetof(CuptiKernelRecord, name) == 104);
inline constexpr std::uint32_t kActivityKernel = 3, kActivityConcurrentKernel = 10;  // CUpti_ActivityKind

// One kernel a call ran.
struct Record {
  std::string name;  // as CUPTI gives it (mangled for C++ kernels)
  std::uint64_t start_ns = 0, end_ns = 0;
};

// A kernel record read from a CUPTI activity record: nullopt for another kind of record.
std::optional<Record> from_activity(const CuptiKernelRecord& r);

// The C++ name of a mangled one ("_Z..."); a name that is not mangled (nvjet_..., extern "C"
// kernels) as it is.
std::string demangle(std::string_view name);

// A demangled kernel name as one word, the same on our side and PyTorch's (whose profiler
// demangles): no leading "void ", no argument list, no spaces. ci/torch_reference.py's
// short_kernel_name applies the same rules.
std::string short_name(std::string_view demangled);

// The kernel that names a call: the longest-running of its kernels (the GEMM, not a split-K
// reduction or a memset), the first of equals; `kernels` is how many the call launched.
struct Picked {
  std::string name;  // short_name(demangle(...))
  std::size_t kernels = 0;
};
std::optional<Picked> pick(const std::vector<Record>& records);

// "kernel=NAME" (with " kernels=N" when the call launched more than one), or "kernel=?".
std::string label(const std::optional<Picked>& p);

// Runs `call` once, whatever CUPTI says (it must complete its work before returning:
// synchronise), and returns the kernels it launched, recorded by CUPTI; nullopt with *why
// when CUPTI cannot be loaded or refuses (a profiler such as nsys or ncu already holds it).
// Under ncu, bench_matmul's verification call once never ran that way, and every GEMM failed
// its check on the poisoned output (2026-12-03). Thread-compatible: one trace at a time.
std::optional<std::vector<Record>> trace(const std::function<void()>& call, std::string* why);

}  // namespace gpucheck::kernel_name
