// cuDNN's graph (backend) API for one 2-D convolution: the engine configurations its
// heuristics offer, finalized as execution plans, and those plans bound to device pointers.
// PyTorch's cudnn.benchmark searches these (through cudnn-frontend) rather than the legacy
// cudnnFind algorithms: on an H200 some of its engines beat every legacy algorithm on
// ResNet-50 backward passes, so bench_conv times both sets and keeps the faster.
#pragma once
#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpucheck/core/conv_model.hpp"

namespace gpucheck::conv_graph {

// Logical NCHW extents (filters KCRS) with the strides of the layout in memory.
struct TensorSpec {
  std::array<std::int64_t, 4> dims{}, strides{};
};

struct ConvSpec {
  ConvDir dir = ConvDir::fwd;
  cudnnDataType_t data = CUDNN_DATA_FLOAT;  // x, w and y; compute is always float
  TensorSpec x, w, y;
  std::array<std::int64_t, 2> pad{}, stride{1, 1}, dilation{1, 1};
  bool allow_tf32 = true;  // float data: engines on tensor cores (TF32) allowed
};

// Owner of one backend descriptor.
class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type);
  ~Descriptor();
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// A finalized execution plan and what the label says of it.
struct Plan {
  std::shared_ptr<const Descriptor> plan;
  std::int64_t workspace = 0;  // bytes
  std::int64_t engine = -1;    // the engine's global index
  std::string notes;           // its numerical notes: "tensor_core,winograd" or "none"
};

// Plans for the convolution, in the heuristics' order (mode A, then the fallback list's
// engines not already offered), at most max_plans. Left out, like PyTorch's filter: engines
// that down-convert inputs, that reduce in reduced precision (our cases accumulate in fp32),
// and on float data without TF32, engines on tensor cores; and plans needing more than
// max_workspace bytes. Uses the same op graph for every plan.
std::vector<Plan> find_plans(cudnnHandle_t h, const ConvSpec& spec, std::size_t max_workspace,
                             std::size_t max_plans);

// A plan bound to the tensors' device pointers and a workspace of at least plan.workspace.
class Bound {
 public:
  Bound(const Plan& p, void* x, void* w, void* y, void* workspace);
  // Enqueues one execution on the handle's stream.
  void execute(cudnnHandle_t h) const;

 private:
  std::shared_ptr<const Descriptor> plan_;
  std::unique_ptr<Descriptor> pack_;
};

}  // namespace gpucheck::conv_graph
