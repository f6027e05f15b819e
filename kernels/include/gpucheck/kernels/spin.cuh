// Holds a stream until the host has queued the timed work behind it, so that host launch
// latency stays out of event timings (the first timed launch would otherwise start late).
#pragma once
#include <cuda_runtime.h>

namespace gpucheck::kernels {

// One thread spins until *flag (mapped host memory) becomes non-zero or timeout_ns of
// global time pass; writes 1 to *timed_out in the latter case (a hang becomes an error).
void spin_until_flag(volatile int* flag, int* timed_out, unsigned long long timeout_ns,
                     cudaStream_t s);

// One thread busy-waits `ns` nanoseconds of global time: work of a known duration, for tests
// of the measurement engine.
void busy_wait(unsigned long long ns, cudaStream_t s);

}  // namespace gpucheck::kernels
