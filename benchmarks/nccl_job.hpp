// How bench_nccl runs: one process driving every visible GPU, or one process per GPU under
// MPI. The job owns what lives for the whole run (MPI, the GPUs this process drives, one
// stream and one NCCL communicator per GPU) and the two things the engine borrows from it:
// the watchdog that waits for a collective (a hang or an NCCL error aborts the communicators
// and becomes an error, never a wait without end) and, under MPI, the agreement that keeps
// ranks in lockstep (a sample's time is the slowest rank's, every stop decision is taken
// together). Created in main() before run_family, destroyed after it. docs/MULTI_GPU.md.
#pragma once
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpucheck/core/measure.hpp"
#include "gpucheck/harness/engine.hpp"

namespace gpucheck {

// Restores the current CUDA device when the scope ends (the job and its cases switch between
// the GPUs they drive).
class DeviceRestore {
 public:
  DeviceRestore() {
    if (cudaGetDevice(&device_) != cudaSuccess) device_ = -1;
  }
  ~DeviceRestore() {
    if (device_ >= 0) cudaSetDevice(device_);
  }
  DeviceRestore(const DeviceRestore&) = delete;
  DeviceRestore& operator=(const DeviceRestore&) = delete;

 private:
  int device_ = -1;
};

class NcclJob {
 public:
  // Sets NCCL_NVLS_ENABLE=0 unless the user set it (before any NCCL call): NVLink SHARP needs
  // multicast objects, which the machines we test on do not allow.
  NcclJob();
  // Communicators destroyed (aborted after a failure: a peer may be gone), streams destroyed,
  // then MPI finalised if the job started it.
  ~NcclJob();
  NcclJob(const NcclJob&) = delete;
  NcclJob& operator=(const NcclJob&) = delete;

  // Family::take_args: removes --mpi from argv (GPUCHECK_MPI=1 asks the same) and starts MPI,
  // and --fixed-buffers (fixed_buffers());
  // on ranks other than 0 removes --benchmark_out (only rank 0 writes results). Reads
  // GPUCHECK_NCCL_TIMEOUT_S. False with a one-line reason on bad input.
  bool take_args(int* argc, char** argv, std::string* err);
  // Family::prints: only rank 0 prints.
  bool root() const { return world_rank_ == 0; }

  // Chooses the GPUs, creates the streams and communicators (in lockstep on every rank). A
  // failure is kept, not thrown: every case then fails with it (failure()).
  void start();
  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }
  void throw_if_failed() const;

  bool mpi() const { return mpi_; }
  int nranks() const { return nranks_; }  // ranks in the communicator
  // This process's GPUs: device, communicator rank, stream, communicator.
  std::size_t local_gpus() const { return devices_.size(); }
  int device(std::size_t i) const { return devices_[i]; }
  int rank(std::size_t i) const { return ranks_[i]; }
  cudaStream_t stream(std::size_t i) const { return streams_[i]; }
  ncclComm_t comm(std::size_t i) const { return comms_[i]; }

  // The engine's view: one lane per local GPU, the watchdog, the agreement (null without MPI).
  std::vector<harness::Lane> lanes() const;
  harness::Waiter waiter();
  Agreement* agreement() { return mpi_ ? agreement_.get() : nullptr; }

  // Waits for every event under the watchdog (GPUCHECK_NCCL_TIMEOUT_S). On a timeout, an
  // NCCL asynchronous error, a CUDA error or an enqueue error noted before: aborts the
  // communicators and throws GpuError. Under MPI every rank learns whether any failed and
  // all of them throw together.
  void wait(std::span<const cudaEvent_t> done);
  // An NCCL call that failed while enqueueing: kept until the next wait() reports it, so that
  // every rank leaves the case at the same point.
  void note_enqueue_error(const std::string& what);
  bool enqueue_error_pending() const { return !pending_error_.empty(); }

  // Across ranks (identity in a single process).
  bool all(bool ok);
  std::uint64_t sum(std::uint64_t v);
  std::uint64_t min(std::uint64_t v);
  double max(double v);
  // Runs `fn` on this process's GPUs; if it failed on any rank, every rank throws (this
  // rank's own exception where it failed), so nobody is left waiting in a collective.
  template <typename Fn>
  void agreed(const std::string& what, Fn&& fn) {
    std::exception_ptr error;
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
    if (!all(error == nullptr)) {
      if (error) std::rethrow_exception(error);
      throw_failed_elsewhere(what);
    }
  }

  // The least free device memory over every GPU of the job (all ranks).
  std::uint64_t least_free_memory();
  // The largest L2 over every GPU of the job (all ranks), in bytes.
  std::uint64_t largest_l2_bytes();
  // --fixed-buffers: every call of a case on the same buffers (warm in L2 when they fit),
  // instead of nccl-tests' one region per call.
  bool fixed_buffers() const { return fixed_buffers_; }

  // nccl_launch, nccl_ranks, nccl_processes, nccl_nvls_enable, nccl_buffers.
  std::map<std::string, std::string> context() const;

 private:
  void start_mpi();
  int local_rank() const;
  void fail(const std::string& why) noexcept;  // keeps the reason, aborts the communicators
  std::string watch(std::span<const cudaEvent_t> done) const;
  [[noreturn]] static void throw_failed_elsewhere(const std::string& what);
  enum class Reduction { max, min, sum };
  template <typename T>
  T reduce(T v, Reduction r);

  bool mpi_ = false;
  bool fixed_buffers_ = false;
  bool we_initialised_mpi_ = false;
  int world_rank_ = 0, world_size_ = 1;
  int nranks_ = 0;
  int timeout_s_ = 60;
  std::string nvls_;
  std::vector<int> devices_, ranks_;
  std::vector<cudaStream_t> streams_;
  std::vector<ncclComm_t> comms_;
  std::string failure_;
  std::string pending_error_;
  std::unique_ptr<Agreement> agreement_;
};

}  // namespace gpucheck
