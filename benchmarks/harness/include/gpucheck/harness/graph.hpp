// Owners of a CUDA graph and of its executable form, and the capture of a stream's work into
// one. Destructors never throw; they report a failing destroy on stderr.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <utility>

#include "gpucheck/check_cuda.hpp"

namespace gpucheck::harness {

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (g_) GPUCHECK_CUDA_NOEXCEPT(cudaGraphDestroy(g_));
  }
  cudaGraph_t* out() { return &g_; }
  cudaGraph_t get() const { return g_; }

 private:
  cudaGraph_t g_ = nullptr;
};

class GraphExec {
 public:
  GraphExec() = default;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  GraphExec(GraphExec&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  GraphExec& operator=(GraphExec&& o) noexcept {
    if (this != &o) {
      reset();
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  ~GraphExec() { reset(); }
  void reset() noexcept {
    if (e_) GPUCHECK_CUDA_NOEXCEPT(cudaGraphExecDestroy(e_));
    e_ = nullptr;
  }
  cudaGraphExec_t* out() { return &e_; }
  cudaGraphExec_t get() const { return e_; }

 private:
  cudaGraphExec_t e_ = nullptr;
};

// What `enqueue` queues on stream s, captured (s keeps whatever it already had queued; the
// capture is ended even when enqueue throws) and instantiated.
inline GraphExec capture_exec(cudaStream_t s, const std::function<void(cudaStream_t)>& enqueue) {
  Graph g;
  GPUCHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue(s);
  } catch (...) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(s, &partial) == cudaSuccess && partial) GPUCHECK_CUDA_NOEXCEPT(cudaGraphDestroy(partial));
    throw;
  }
  GPUCHECK_CUDA(cudaStreamEndCapture(s, g.out()));
  GraphExec e;
  GPUCHECK_CUDA(cudaGraphInstantiateWithFlags(e.out(), g.get(), 0));
  return e;
}

}  // namespace gpucheck::harness
