// Error checks for the CUDA runtime: every failing call throws with the call text, file and
// line. The harness turns the exception into a skipped case; nothing aborts the binary. Also
// the one text of a CUDA error and the one "is there a device" probe of binaries and tests.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "gpucheck/core/contract.hpp"

namespace gpucheck {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A case this device, driver or library cannot run (fp8 on an A100, no cuDNN engine for the
// shape, fewer GPUs than asked): the case is reported as skipped with this reason, not failed.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A result that does not match its reference: an error, never a figure.
class VerificationError : public GpuError {
 public:
  using GpuError::GpuError;
};

[[noreturn]] inline void throw_gpu_error(const char* lib, const std::string& what, const char* call,
                                         const char* file, int line) {
  throw GpuError(std::string(lib) + " error " + what + " in " + call + " at " + file + ":" +
                 std::to_string(line));
}

// A CUDA error as every message shows it: "cudaErrorX (what it means)".
inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  throw_gpu_error("CUDA", cuda_error_text(e), call, file, line);
}

// The devices the runtime sees; with none, why, as the line a binary or test prints:
// "no CUDA device found (cudaGetDeviceCount: 0 devices)" (or the runtime's reason, or that no
// driver is installed: the runtime then blames the driver's version).
struct DeviceCount {
  int count = 0;
  std::string none;  // empty when count > 0
};
inline DeviceCount cuda_device_count() {
  DeviceCount d;
  const cudaError_t e = cudaGetDeviceCount(&d.count);
  if (e != cudaSuccess) d.count = 0;
  if (d.count == 0)
    d.none = contract::no_device_text(contract::probe_driver(), std::string("cudaGetDeviceCount: ") +
                                                                   (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices"));
  return d;
}

}  // namespace gpucheck

#define GPUCHECK_CUDA(call)                                                  \
  do {                                                                       \
    if (cudaError_t gpucheck_status_ = (call); gpucheck_status_ != cudaSuccess)                          \
      ::gpucheck::throw_cuda_error(gpucheck_status_, #call, __FILE__, __LINE__);           \
  } while (false)

// After a kernel launch: launch-configuration errors surface here, not at the next call.
#define GPUCHECK_CUDA_LAUNCH(what)                                           \
  do {                                                                       \
    if (cudaError_t gpucheck_status_ = cudaGetLastError(); gpucheck_status_ != cudaSuccess)              \
      ::gpucheck::throw_cuda_error(gpucheck_status_, what, __FILE__, __LINE__);            \
  } while (false)

// For destructors: never throws, reports to stderr instead.
#define GPUCHECK_CUDA_NOEXCEPT(call)                                                          \
  do {                                                                                        \
    if (cudaError_t gpucheck_status_ = (call); gpucheck_status_ != cudaSuccess)                                           \
      std::fprintf(stderr, "gpucheck: CUDA error %s in %s at %s:%d\n",                                 \
                   ::gpucheck::cuda_error_text(gpucheck_status_).c_str(), #call, __FILE__, __LINE__);        \
  } while (false)
