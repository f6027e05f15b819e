// bench_conv: cuDNN 2-D convolution throughput in TFLOP/s (2*N*K*C*R*S*P*Q per call, the same
// count for forward, backward-data and backward-filter) on ResNet-50's layers, NCHW against
// NHWC (filters KCRS against KRSC, as PyTorch's channels_last), fp32 (strict FMA), tf32,
// fp16 and bf16 (fp32 compute, like PyTorch). The algorithm is chosen once per (direction,
// layout, dtype, shape): cudnnFind*Ex measures every legacy algorithm once and ranks them;
// the first few usable ones and the first ten execution plans of the graph API's heuristics
// (conv_graph.hpp: the engines PyTorch's cudnn.benchmark searches) are then timed by the
// measurement engine (1 warm-up call, then 5 samples of one call each with the stream held);
// those within 6% of the fastest (at most 4) are timed again in 4 interleaved rounds, and the
// first in a fixed order (legacy algorithms by id, then the plans in the heuristics' order)
// within 2% of the fastest wins, so a near-tie picks the same engine in every process.
// Find's one-shot ranking alone misleads for multi-kernel
// algorithms: on an H200 (cuDNN 9.14) it ranked WINOGRAD_NONFUSED first for fp16
// n64c64h56w56k64r3s3 and FFT_TILING first for tf32, both well behind PyTorch's pick in our
// loop. The choice is kept for the run and recorded in the label ("algo=... ws=...
// math=..." or "engine=N(graph) ws=... notes=...", then "picked=timed(N candidates, F
// finalists, W within 2%: first in order)", plus
// "find_first=..." when Find ranked another legacy algorithm first), so a regression can be
// traced to it.
// Before timing, the NCHW result is checked on sampled elements against a double direct
// convolution, and an NHWC result, transposed back to NCHW, must equal the NCHW one.
//
// The directions are rows of one table (kDirections: the cuDNN calls that differ) over the
// roles of the three tensors (conv_roles in core/conv_model.hpp): adding a direction is a row.
//
// Reading it against PyTorch: torch.backends.cudnn.allow_tf32 defaults to True, so the
// anchors' conv/torch_*/fp32 figures compare with our "tf32" cases, not with "fp32" (which
// forbids TF32 with CUDNN_FMA_MATH). NVIDIA_TF32_OVERRIDE=0 in the environment turns TF32
// off for both; the label then says "tf32_override=0".
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cases/conv.hpp"
#include "conv_graph.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/conv_model.hpp"
#include "gpucheck/core/stats.hpp"
#include "gpucheck/core/verify.hpp"
#include "gpucheck/harness/check_cudnn.hpp"
#include "gpucheck/harness/cudnn_handle.hpp"
#include "gpucheck/harness/device.hpp"
#include "gpucheck/harness/dtype_enums.hpp"
#include "gpucheck/harness/libraries.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/verify.cuh"

namespace gpucheck {
namespace {

// Workspace offered to cudnnFind (PyTorch offers what it can allocate; 1 GiB covers every
// algorithm that is competitive on these shapes). The chosen algorithm then gets exactly
// the workspace it reported.
constexpr std::size_t kFindWorkspaceBytes = std::size_t{1} << 30;

// Re-timing Find's candidates: at most this many (in Find's order), each with one warm-up
// call and kTimedCalls timed ones. A few milliseconds per case at these sizes.
constexpr std::size_t kMaxTimedCandidates = 6;
// Execution plans of the graph API timed beside them: the heuristics' first ten, PyTorch's
// default torch.backends.cudnn.benchmark_limit (the fallback list fills in when filters leave
// fewer). Up to ten more fallback engines were tried on the H200: no case got faster and the
// quick suite's search took longer.
constexpr std::size_t kMaxGraphPlans = 10;
constexpr int kTimedCalls = 5;
// The pick (conv_finalists, conv_pick_in_band in core): the candidates within kFinalistBand of
// the fastest first pass, at most kMaxFinalists, are timed again in kRefineRounds rounds of
// kTimedCalls samples each, in the candidate order and its reverse by turns (a clock or power
// drift over the search then favours none); of their pooled medians, the earliest in the
// candidate order within kTieBand of the lowest wins. Two engines inside the noise then give
// the same pick in every process, not whichever read faster that time.
constexpr double kFinalistBand = 0.06;
constexpr std::size_t kMaxFinalists = 4;
constexpr int kRefineRounds = 4;
constexpr double kTieBand = 0.02;

using conv::ConvCase;

cudnnDataType_t cudnn_type(DType t) {
  if (t != DType::fp32 && t != DType::tf32 && t != DType::fp16 && t != DType::bf16) harness::unsupported_dtype(t, "conv");
  return harness::cudnn_data_type(t, "conv");
}

// What the convolution descriptor asks for, as PyTorch sets it: strict fp32 = FMA only;
// tf32 = DEFAULT (TF32 tensor cores allowed on Ampere and later); fp16/bf16 = tensor ops.
cudnnMathType_t requested_math(DType t) {
  switch (t) {
    case DType::fp32: return CUDNN_FMA_MATH;
    case DType::tf32: return CUDNN_DEFAULT_MATH;
    default: return CUDNN_TENSOR_OP_MATH;
  }
}

const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "default";
    case CUDNN_TENSOR_OP_MATH: return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor_op_conv";
    case CUDNN_FMA_MATH: return "fma";
  }
  return "?";
}

cudnnTensorFormat_t cudnn_format(ConvLayout l) { return l == ConvLayout::nchw ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC; }

// cuDNN takes int extents; padding may be 0, everything else is positive.
int to_int(std::int64_t v, std::int64_t lo = 1) {
  if (v < lo || v > INT_MAX) throw std::invalid_argument("conv: extent out of cuDNN's int range");
  return static_cast<int>(v);
}

// Move-free RAII owners of cuDNN descriptors (each lives in one place).
class TensorDesc {
 public:
  TensorDesc(cudnnTensorFormat_t f, cudnnDataType_t t, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    GPUCHECK_CUDNN(cudnnCreateTensorDescriptor(&d_));
    try {
      GPUCHECK_CUDNN(cudnnSetTensor4dDescriptor(d_, f, t, to_int(n), to_int(c), to_int(h), to_int(w)));
    } catch (...) {
      cudnnDestroyTensorDescriptor(d_);
      throw;
    }
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d_); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

class FilterDesc {
 public:
  FilterDesc(cudnnTensorFormat_t f, cudnnDataType_t t, const ConvShape& s) {
    GPUCHECK_CUDNN(cudnnCreateFilterDescriptor(&d_));
    try {
      GPUCHECK_CUDNN(cudnnSetFilter4dDescriptor(d_, t, f, to_int(s.k), to_int(s.c), to_int(s.r), to_int(s.s)));
    } catch (...) {
      cudnnDestroyFilterDescriptor(d_);
      throw;
    }
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d_); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
  cudnnFilterDescriptor_t get() const { return d_; }

 private:
  cudnnFilterDescriptor_t d_ = nullptr;
};

class ConvDesc {
 public:
  ConvDesc(const ConvShape& s, cudnnMathType_t math) {
    GPUCHECK_CUDNN(cudnnCreateConvolutionDescriptor(&d_));
    try {
      // fp32 compute for every dtype: PyTorch's choice for fp16/bf16 (fp32 accumulation).
      GPUCHECK_CUDNN(cudnnSetConvolution2dDescriptor(d_, to_int(s.pad_h(), 0), to_int(s.pad_w(), 0),
                                                     to_int(s.stride), to_int(s.stride), 1, 1,
                                                     CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      GPUCHECK_CUDNN(cudnnSetConvolutionMathType(d_, math));
    } catch (...) {
      cudnnDestroyConvolutionDescriptor(d_);
      throw;
    }
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d_); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
  cudnnConvolutionDescriptor_t get() const { return d_; }

 private:
  cudnnConvolutionDescriptor_t d_ = nullptr;
};

struct AlgoChoice {
  std::shared_ptr<const conv_graph::Plan> plan;  // a graph-API plan; null: the legacy `algo`
  int algo = -1;
  std::size_t workspace = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  float find_ms = 0;      // cuDNN's own time for it during the search
  double timed_ms = 0;    // median of the engine's samples (0 when not timed)
  int timed = 0;          // candidates timed to choose it
  int finalists = 0;      // of them, timed again
  int within = 0;         // finalists within kTieBand of the fastest (it is the first of them)
  int find_first = -1;    // the algorithm Find ranked first among the usable ones
  int stalled = 0;        // candidates left out because queuing their calls stalled
  std::string graph_note; // why the graph API offered no plan (empty when it did)
};

// How each candidate of the search is timed: one warm-up call, then kTimedCalls samples of
// one call each with the stream held (no batching, no adaptive stop: a small fixed cost per
// candidate); the candidate's figure is their median.
harness::MeasureOptions search_options(harness::MeasureOptions o) {
  o.mode = TimingMode::held;
  o.plan.warmup_calls = 1;
  o.plan.warmup_s = 0;
  o.plan.min_batch = o.plan.max_batch = 1;
  o.plan.stop.min_samples = o.plan.stop.max_samples = kTimedCalls;
  o.plan.stop.min_time_s = 0;
  return o;
}

// The family's state, kept by the registry for the run (destroyed before the device): one
// cuDNN handle, created on first use, and the cudnn.benchmark cache (one search per case
// name; an NHWC case's NCHW twin reuses the NCHW case's choice).
class ConvState {
 public:
  explicit ConvState(harness::MeasureOptions search) : search_(std::move(search)) {}
  ConvState(const ConvState&) = delete;
  ConvState& operator=(const ConvState&) = delete;

  cudnnHandle_t handle() { return h_.get(); }
  std::map<std::string, AlgoChoice>& algos() { return algos_; }
  const harness::MeasureOptions& search() const { return search_; }

 private:
  harness::CudnnHandle h_;                    // declared before algos_: the plans are
  std::map<std::string, AlgoChoice> algos_;  // destroyed before the handle they were made with
  harness::MeasureOptions search_;
};

// What a direction's legacy cuDNN calls take: the handle (its stream set), the descriptors,
// the three tensors and a workspace.
struct ConvIo {
  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr;
  cudnnFilterDescriptor_t w_desc = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
  void* ws = nullptr;
  std::size_t ws_bytes = 0;
};

// Find's results (sorted fastest first) in library-neutral terms.
template <typename Perf>
std::vector<ConvFound> found_of(const std::vector<Perf>& perf, int returned) {
  std::vector<ConvFound> out;
  const auto n = static_cast<std::size_t>(std::clamp(returned, 0, static_cast<int>(perf.size())));
  for (std::size_t i = 0; i < n; ++i) {
    const Perf& p = perf[i];
    ConvFound f;
    f.algo = static_cast<int>(p.algo);
    f.ran = p.status == CUDNN_STATUS_SUCCESS;
    f.status = cudnnGetErrorString(p.status);
    f.time_ms = p.time;
    f.workspace = p.memory;
    f.math = static_cast<int>(p.mathType);
    f.tensor_op = p.mathType == CUDNN_TENSOR_OP_MATH || p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    out.push_back(std::move(f));
  }
  return out;
}

// Runs one Find*Ex: `max_count` says how many algorithms there are, `find(max, &got, perf)`
// fills up to `max` results.
template <typename Perf, typename FindEx>
std::vector<ConvFound> find_with(const ConvIo& io, cudnnStatus_t (*max_count)(cudnnHandle_t, int*), FindEx&& find) {
  int max = 0;
  GPUCHECK_CUDNN(max_count(io.h, &max));
  std::vector<Perf> perf(static_cast<std::size_t>(std::max(max, 1)));
  int got = 0;
  find(max, &got, perf.data());
  return found_of(perf, got);
}

constexpr float kOne = 1.f, kZero = 0.f;  // float scaling for float, half and bfloat16 data

// One row per direction: the legacy calls that differ between them. Which tensor a
// direction writes and which it reads come from conv_roles.
struct Direction {
  ConvDir dir;
  // cudnnFind*Ex: every legacy algorithm run once, fastest first; overwrites the output only.
  std::vector<ConvFound> (*find)(const ConvIo& io);
  // One call with a legacy algorithm (the descriptor's math type already the algorithm's).
  void (*enqueue)(const ConvIo& io, int algo);
};

constexpr std::array<Direction, 3> kDirections{{
    {ConvDir::fwd,
     [](const ConvIo& io) -> std::vector<ConvFound> {
       return find_with<cudnnConvolutionFwdAlgoPerf_t>(
           io, cudnnGetConvolutionForwardAlgorithmMaxCount, [&io](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* p) {
             GPUCHECK_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(io.h, io.x_desc, io.x, io.w_desc, io.w, io.conv,
                                                                   io.y_desc, io.y, n, got, p, io.ws, io.ws_bytes));
           });
     },
     [](const ConvIo& io, int algo) {
       GPUCHECK_CUDNN(cudnnConvolutionForward(io.h, &kOne, io.x_desc, io.x, io.w_desc, io.w, io.conv,
                                              static_cast<cudnnConvolutionFwdAlgo_t>(algo), io.ws, io.ws_bytes, &kZero,
                                              io.y_desc, io.y));
     }},
    {ConvDir::bwd_data,
     [](const ConvIo& io) -> std::vector<ConvFound> {
       return find_with<cudnnConvolutionBwdDataAlgoPerf_t>(
           io, cudnnGetConvolutionBackwardDataAlgorithmMaxCount,
           [&io](int n, int* got, cudnnConvolutionBwdDataAlgoPerf_t* p) {
             GPUCHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(
                 io.h, io.w_desc, io.w, io.y_desc, io.y, io.conv, io.x_desc, io.x, n, got, p, io.ws, io.ws_bytes));
           });
     },
     [](const ConvIo& io, int algo) {
       GPUCHECK_CUDNN(cudnnConvolutionBackwardData(io.h, &kOne, io.w_desc, io.w, io.y_desc, io.y, io.conv,
                                                   static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), io.ws, io.ws_bytes,
                                                   &kZero, io.x_desc, io.x));
     }},
    {ConvDir::bwd_filter,
     [](const ConvIo& io) -> std::vector<ConvFound> {
       return find_with<cudnnConvolutionBwdFilterAlgoPerf_t>(
           io, cudnnGetConvolutionBackwardFilterAlgorithmMaxCount,
           [&io](int n, int* got, cudnnConvolutionBwdFilterAlgoPerf_t* p) {
             GPUCHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                 io.h, io.x_desc, io.x, io.y_desc, io.y, io.conv, io.w_desc, io.w, n, got, p, io.ws, io.ws_bytes));
           });
     },
     [](const ConvIo& io, int algo) {
       GPUCHECK_CUDNN(cudnnConvolutionBackwardFilter(io.h, &kOne, io.x_desc, io.x, io.y_desc, io.y, io.conv,
                                                     static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), io.ws,
                                                     io.ws_bytes, &kZero, io.w_desc, io.w));
     }},
}};
static_assert(kDirections.size() == kConvDirs.size(), "one row per direction");
static_assert(kDirections[0].dir == kConvDirs[0] && kDirections[1].dir == kConvDirs[1] &&
                  kDirections[2].dir == kConvDirs[2],
              "rows in ConvDir order");

const Direction& direction(ConvDir d) {
  const auto i = static_cast<std::size_t>(d);
  if (i >= kDirections.size()) throw std::invalid_argument("conv: unknown direction");
  return kDirections[i];
}

// Copies a tensor with logical NCHW extents `d` (filters KCRS) from one layout to another,
// in its own dtype (exact).
void transform(cudnnHandle_t h, const void* src, ConvLayout from, void* dst, ConvLayout to, DType t,
               const std::array<std::int64_t, 4>& d, cudaStream_t s) {
  const cudnnDataType_t ct = cudnn_type(t);
  TensorDesc sd(cudnn_format(from), ct, d[0], d[1], d[2], d[3]), dd(cudnn_format(to), ct, d[0], d[1], d[2], d[3]);
  const float one = 1.f, zero = 0.f;
  GPUCHECK_CUDNN(cudnnSetStream(h, s));
  GPUCHECK_CUDNN(cudnnTransformTensor(h, &one, sd.get(), src, &zero, dd.get(), dst));
}

// Fixed seeds: every run of a case sees the same data, so the one verification per case
// covers the calls that are timed later.
constexpr std::uint64_t kSeedX = 0xC0'4E'01, kSeedW = 0xC0'4E'02, kSeedY = 0xC0'4E'03;
constexpr std::uint64_t seed(ConvTensor t) {
  return t == ConvTensor::x ? kSeedX : t == ConvTensor::w ? kSeedW : kSeedY;
}

constexpr std::array<ConvTensor, 3> kTensors{ConvTensor::x, ConvTensor::w, ConvTensor::y};

// One convolution in one layout: descriptors, the three tensors (x, w, y; which are inputs
// depends on the direction), the chosen algorithm and its workspace. An NHWC case holds its
// NCHW twin (same direction, dtype, shape and data) until it has been verified against it.
class Conv final : public harness::Op {
 public:
  Conv(const ConvCase& c, harness::Device& dev, ConvState& state)
      : c_(c),
        dev_(dev),
        state_(state),
        type_(cudnn_type(c.dtype)),
        xd_(cudnn_format(c.layout), type_, c.shape.n, c.shape.c, c.shape.h, c.shape.w),
        yd_(cudnn_format(c.layout), type_, c.shape.n, c.shape.k, c.shape.p(), c.shape.q()),
        wd_(cudnn_format(c.layout), type_, c.shape),
        cd_(c.shape, requested_math(c.dtype)) {
    // cuDNN's own output shape must agree with ours (stride, padding, rounding).
    int n = 0, k = 0, p = 0, q = 0;
    GPUCHECK_CUDNN(cudnnGetConvolution2dForwardOutputDim(cd_.get(), xd_.get(), wd_.get(), &n, &k, &p, &q));
    if (n != c.shape.n || k != c.shape.k || p != c.shape.p() || q != c.shape.q())
      throw GpuError(c.name() + ": cuDNN's output shape differs from the model's");
    const std::size_t e = storage_bytes(storage_dtype(c.dtype));
    for (ConvTensor t : kTensors) buffer(t) = harness::DeviceBuffer(e * conv_elems(c.shape, t));
  }

  const harness::DeviceBuffer& tensor(ConvTensor t) const { return tensors_[static_cast<std::size_t>(t)]; }
  // The tensor this direction writes.
  const harness::DeviceBuffer& out() const { return tensor(conv_roles(c_.dir).out); }

  // Fills the three tensors from the fixed seeds (tf32: full fp32 values; the tolerance
  // covers TF32's rounding).
  void fill() {
    const DType t = storage_dtype(c_.dtype);
    for (ConvTensor k : kTensors)
      kernels::fill_uniform(ptr(k), conv_elems(c_.shape, k), t, seed(k), -1.f, 1.f, dev_.stream());
  }

  // An NHWC case: builds and fills the NCHW twin and copies its three tensors here.
  void fill_from_twin() {
    twin_ = std::make_unique<Conv>(ConvCase{ConvLayout::nchw, c_.dir, c_.dtype, c_.shape}, dev_, state_);
    twin_->fill();
    for (ConvTensor t : kTensors)
      transform(state_.handle(), twin_->tensor(t).get(), ConvLayout::nchw, tensor(t).get(), c_.layout,
                storage_dtype(c_.dtype), conv_dims(c_.shape, t), dev_.stream());
  }

  // Chooses the algorithm (searched once per case name, then kept in the family's state),
  // then allocates its workspace. The search overwrites the output tensor (never an input).
  void choose_algorithm() {
    auto& cache = state_.algos();
    auto it = cache.find(c_.name());
    if (it == cache.end()) it = cache.emplace(c_.name(), search()).first;
    algo_ = it->second;
    // PyTorch runs with the math type the search reported for the winner; strict fp32 keeps FMA.
    if (c_.dtype != DType::fp32) GPUCHECK_CUDNN(cudnnSetConvolutionMathType(cd_.get(), algo_.math));
    ws_ = harness::DeviceBuffer(algo_.workspace);
    bound_.reset();
    if (algo_.plan) bound_.emplace(*algo_.plan, ptr(ConvTensor::x), ptr(ConvTensor::w), ptr(ConvTensor::y), ws_.get());
  }

  void run(cudaStream_t s) override { enqueue(algo_, bound_ ? &*bound_ : nullptr, ws_, s); }

  // NCHW: sampled outputs against the double host reference. NHWC: the twin checked that way,
  // then this result, transposed back to NCHW, against the twin's full output; the twin is
  // freed before timing.
  void verify() override {
    cudaStream_t s = dev_.stream();
    if (c_.layout == ConvLayout::nhwc) {
      if (!twin_) throw GpuError(c_.name() + ": no NCHW twin to verify against");
      twin_->choose_algorithm();
      twin_->verify();
    }
    kernels::poison(out().get(), out().bytes(), s);
    run(s);
    if (c_.layout == ConvLayout::nchw) {
      check_against_host();
    } else {
      check_against(*twin_);
      twin_.reset();
    }
  }

  std::string label() const override {
    std::string l;
    if (algo_.plan) {
      l.append("engine=");
      l.append(std::to_string(algo_.plan->engine));
      l.append("(graph) ws=");
      l.append(std::to_string(algo_.workspace));
      l.append(" notes=");
      l.append(algo_.plan->notes);
    } else {
      l.append("algo=");
      l.append(conv_algo_name(c_.dir, algo_.algo));
      l.push_back('(');
      l.append(std::to_string(algo_.algo));
      l.append(") ws=");
      l.append(std::to_string(algo_.workspace));
      l.append(" math=");
      l.append(math_name(algo_.math));
    }
    l.append(algo_.timed > 0 ? " picked=timed(" : " picked=find(");
    l.append(std::to_string(algo_.timed));
    l.append(algo_.timed == 1 ? " candidate" : " candidates");
    if (algo_.finalists > 0) {
      l.append(", " + std::to_string(algo_.finalists) + (algo_.finalists == 1 ? " finalist, " : " finalists, "));
      l.append(std::to_string(algo_.within) + " within " + std::to_string(std::lround(kTieBand * 100)) +
               "%: first in order");
    }
    l.push_back(')');
    if (algo_.stalled > 0) l.append(" stalled=" + std::to_string(algo_.stalled));
    if (!algo_.graph_note.empty()) l.append(" graph_plans=none(" + algo_.graph_note + ")");
    if (algo_.find_first >= 0 && (algo_.plan || algo_.find_first != algo_.algo)) {
      l.append(" find_first=");
      l.append(conv_algo_name(c_.dir, algo_.find_first));
      l.push_back('(');
      l.append(std::to_string(algo_.find_first));
      l.push_back(')');
    }
    const char* ov = std::getenv("NVIDIA_TF32_OVERRIDE");
    if (c_.dtype == DType::tf32 && ov && std::string(ov) == "0") l += " tf32_override=0";
    return l;
  }

 private:
  harness::DeviceBuffer& buffer(ConvTensor t) { return tensors_[static_cast<std::size_t>(t)]; }
  void* ptr(ConvTensor t) const { return tensor(t).get(); }

  ConvIo io(cudnnHandle_t h, void* ws, std::size_t ws_bytes) const {
    return {.h = h,
            .x_desc = xd_.get(),
            .y_desc = yd_.get(),
            .w_desc = wd_.get(),
            .conv = cd_.get(),
            .x = ptr(ConvTensor::x),
            .w = ptr(ConvTensor::w),
            .y = ptr(ConvTensor::y),
            .ws = ws,
            .ws_bytes = ws_bytes};
  }

  // One call on s: the bound graph plan, or the legacy algorithm with the workspace it reported.
  void enqueue(const AlgoChoice& a, const conv_graph::Bound* bound, const harness::DeviceBuffer& ws,
               cudaStream_t s) const {
    cudnnHandle_t h = state_.handle();
    GPUCHECK_CUDNN(cudnnSetStream(h, s));
    if (bound) bound->execute(h);
    else direction(c_.dir).enqueue(io(h, ws.get(), a.workspace), a.algo);
  }

  // cudnn.benchmark: Find's usable legacy algorithms and the graph API's plans, each timed.
  AlgoChoice search() {
    cudnnHandle_t h = state_.handle();
    GPUCHECK_CUDNN(cudnnSetStream(h, dev_.stream()));
    harness::DeviceBuffer ws(kFindWorkspaceBytes);
    const std::vector<ConvFound> found = direction(c_.dir).find(io(h, ws.get(), ws.bytes()));
    const std::vector<ConvFound> usable = conv_usable(found, c_.dtype, kFindWorkspaceBytes, kMaxTimedCandidates);
    if (usable.empty())
      throw GpuError(c_.name() + ": cudnnFind found no usable algorithm (" + std::to_string(found.size()) +
                     " tried:" + conv_describe_found(found, c_.dir) + ")");
    std::vector<AlgoChoice> cands;
    const int find_first = usable.front().algo;
    // The candidate order is the tie-break, so it is one every process agrees on: the legacy
    // algorithms by id and math type (Find's ranking is itself a one-shot timing), then the
    // graph API's plans in the heuristics' order.
    std::vector<ConvFound> by_id = usable;
    std::ranges::stable_sort(by_id, {}, [](const ConvFound& f) { return std::pair{f.algo, f.math}; });
    for (const ConvFound& f : by_id) {
      AlgoChoice a;
      a.algo = f.algo;
      a.workspace = f.workspace;
      a.math = static_cast<cudnnMathType_t>(f.math);
      a.find_ms = f.time_ms;
      cands.push_back(std::move(a));
    }
    add_graph_plans(&cands, h);
    AlgoChoice chosen = time_candidates(std::move(cands), ws);
    chosen.find_first = find_first;
    return chosen;
  }

  // The graph API's view of this case: logical NCHW/KCRS extents with the layout's strides.
  conv_graph::ConvSpec graph_spec() const {
    const ConvShape& sh = c_.shape;
    auto spec_of = [&](ConvTensor t) {
      conv_graph::TensorSpec ts;
      ts.dims = conv_dims(sh, t);
      ts.strides = conv_strides(c_.layout, ts.dims);
      return ts;
    };
    conv_graph::ConvSpec s;
    s.dir = c_.dir;
    s.data = type_;
    s.x = spec_of(ConvTensor::x);
    s.w = spec_of(ConvTensor::w);
    s.y = spec_of(ConvTensor::y);
    s.pad = {sh.pad_h(), sh.pad_w()};
    s.stride = {sh.stride, sh.stride};
    s.allow_tf32 = c_.dtype != DType::fp32;
    return s;
  }

  // Appends the graph API's plans to Find's usable legacy algorithms. A cuDNN that rejects
  // the graph (another version's attributes) leaves the legacy search alone, and the label
  // says so.
  void add_graph_plans(std::vector<AlgoChoice>* cands, cudnnHandle_t h) {
    std::vector<conv_graph::Plan> plans;
    try {
      plans = conv_graph::find_plans(h, graph_spec(), kFindWorkspaceBytes, kMaxGraphPlans);
      graph_note_ = plans.empty() ? "no usable plan" : "";
    } catch (const GpuError& e) {
      graph_note_ = e.what();
    }
    for (conv_graph::Plan& p : plans) {
      AlgoChoice a;
      a.workspace = static_cast<std::size_t>(p.workspace);
      a.plan = std::make_shared<const conv_graph::Plan>(std::move(p));
      cands->push_back(std::move(a));
    }
  }

  // One timed run of a candidate through the engine (search_options: one warm-up call, which
  // also loads its kernels, then kTimedCalls held samples of one call): its samples in seconds,
  // or none when queuing its calls stalled the held stream for over 2 s (e.g. it waits on the
  // host: its times are not trustworthy and the case's own measurement could not hold the
  // stream either). Overwrites the output tensor only.
  std::optional<std::vector<double>> time_once(const AlgoChoice& a, const harness::DeviceBuffer& ws) {
    if (a.workspace > ws.bytes()) throw GpuError(c_.name() + ": candidate workspace exceeds the search's");
    std::optional<conv_graph::Bound> bound;
    if (a.plan) {
      bound.emplace(*a.plan, ptr(ConvTensor::x), ptr(ConvTensor::w), ptr(ConvTensor::y), ws.get());
    } else if (c_.dtype != DType::fp32) {
      GPUCHECK_CUDNN(cudnnSetConvolutionMathType(cd_.get(), a.math));
    }
    const conv_graph::Bound* b = bound ? &*bound : nullptr;
    try {
      return harness::measure(dev_, [&](cudaStream_t s) { enqueue(a, b, ws, s); }, state_.search()).sampled.per_call_s;
    } catch (const harness::HoldTimeout&) {
      return std::nullopt;
    }
  }

  static double median_ms(const std::optional<std::vector<double>>& samples) {
    const std::optional<double> m = samples ? median(*samples) : std::nullopt;
    return m ? *m * 1e3 : std::numeric_limits<double>::infinity();
  }

  // The finalists timed again (kRefineRounds rounds, forward and reverse order by turns): each
  // one's median over its pooled samples, in ms (infinite once it stalled).
  std::vector<double> refine(const std::vector<AlgoChoice>& cands, const std::vector<std::size_t>& finals,
                             const harness::DeviceBuffer& ws) {
    std::vector<std::optional<std::vector<double>>> pooled(finals.size(), std::vector<double>{});
    for (int round = 0; round < kRefineRounds; ++round) {
      for (std::size_t k = 0; k < finals.size(); ++k) {
        const std::size_t i = round % 2 == 0 ? k : finals.size() - 1 - k;
        if (!pooled[i]) continue;
        const std::optional<std::vector<double>> s = time_once(cands[finals[i]], ws);
        if (s) pooled[i]->insert(pooled[i]->end(), s->begin(), s->end());
        else pooled[i].reset();
      }
    }
    std::vector<double> out;
    for (const auto& p : pooled) out.push_back(median_ms(p));
    return out;
  }

  // cudnn.benchmark's timing, made to hold still: every candidate timed once, the finalists
  // (within kFinalistBand of the fastest) timed again in interleaved rounds, and the earliest
  // finalist within kTieBand of the fastest wins (see kTieBand). `ws` holds kFindWorkspaceBytes
  // >= every candidate's workspace.
  AlgoChoice time_candidates(std::vector<AlgoChoice> cands, const harness::DeviceBuffer& ws) {
    std::vector<double> first_pass;
    int stalled = 0;
    for (AlgoChoice& a : cands) {
      const std::optional<std::vector<double>> s = time_once(a, ws);
      stalled += s ? 0 : 1;
      a.timed_ms = median_ms(s);
      first_pass.push_back(a.timed_ms);
    }
    const std::vector<std::size_t> finals = conv_finalists(first_pass, kFinalistBand, kMaxFinalists);
    if (finals.empty()) throw GpuError(c_.name() + ": every candidate algorithm stalled the held stream for over 2 s");
    const std::vector<double> refined =
        finals.size() > 1 ? refine(cands, finals, ws) : std::vector<double>{first_pass[finals.front()]};
    const std::optional<ConvPick> pick = conv_pick_in_band(refined, kTieBand);
    if (!pick) throw GpuError(c_.name() + ": every finalist algorithm stalled the held stream for over 2 s");
    AlgoChoice chosen = cands[finals[pick->index]];
    chosen.timed_ms = refined[pick->index];
    chosen.timed = static_cast<int>(cands.size());
    chosen.finalists = static_cast<int>(finals.size());
    chosen.within = static_cast<int>(pick->within);
    chosen.stalled = stalled + static_cast<int>(std::ranges::count_if(refined, [](double t) { return !std::isfinite(t); }));
    chosen.graph_note = graph_note_;
    return chosen;
  }

  // Checks this NCHW op's output (it has run) on sampled elements against a double direct
  // convolution over the stored inputs.
  void check_against_host() const {
    const ConvShape& s = c_.shape;
    cudaStream_t st = dev_.stream();
    const DType t = storage_dtype(c_.dtype);
    const ConvRoles roles = conv_roles(c_.dir);
    const std::size_t len = conv_reduction_length(s, c_.dir);
    const std::size_t out_n = conv_out_elems(s, c_.dir);
    // At most ~4M gathered terms: 64 samples for short reductions, fewer (>= 4) for
    // backward-filter's N*P*Q-long ones.
    const std::size_t samples = std::clamp<std::size_t>(std::size_t{4'000'000} / std::max<std::size_t>(len, 1), 4, 64);
    std::mt19937_64 rng(kSeedY ^ out_n);
    std::vector<std::size_t> idx{0, out_n - 1};  // the first and last elements catch edge bugs
    while (idx.size() < std::min(samples, out_n)) idx.push_back(static_cast<std::size_t>(rng() % out_n));
    const std::vector<double> got = kernels::gather_to_host_double(out().get(), idx, t, st);
    SampleChecker check(conv_tolerance(c_.dtype, len));
    for (std::size_t i = 0; i < idx.size(); ++i) {
      const auto terms = conv_terms(s, c_.dir, idx[i]);
      std::vector<std::size_t> ia, ib;
      ia.reserve(terms.size());
      ib.reserve(terms.size());
      for (const auto& [pa, pb] : terms) {
        ia.push_back(pa);
        ib.push_back(pb);
      }
      const auto va = kernels::gather_to_host_double(ptr(roles.a), ia, t, st);
      const auto vb = kernels::gather_to_host_double(ptr(roles.b), ib, t, st);
      double ref = 0, scale = 0;
      for (std::size_t j = 0; j < terms.size(); ++j) {
        ref += va[j] * vb[j];
        scale += std::fabs(va[j] * vb[j]);
      }
      check.add(idx[i], ref, got[i], scale);
    }
    const CheckReport rep = check.report();
    if (!rep.ok())
      throw VerificationError(c_.name() + ": NCHW result differs from the host reference: " + rep.describe());
  }

  // Checks this NHWC op's output (it has run), transposed back to NCHW, against the verified
  // NCHW twin's full output.
  void check_against(const Conv& nchw) const {
    cudaStream_t s = dev_.stream();
    const DType t = storage_dtype(c_.dtype);
    harness::DeviceBuffer back(out().bytes());
    transform(state_.handle(), out().get(), ConvLayout::nhwc, back.get(), ConvLayout::nchw, t,
              conv_dims(c_.shape, conv_roles(c_.dir).out), s);
    const std::size_t len = conv_reduction_length(c_.shape, c_.dir);
    const Tolerance tol = conv_tolerance(c_.dtype, len);
    // Two independent results each within tol of the truth: twice the bound apart at most. The
    // typical scale of an element is len * E|a| E|b| = len / 4 for inputs uniform in [-1, 1).
    const double rtol = 2.0 * tol.rel_out;
    const double atol = 2.0 * tol.rel_acc * static_cast<double>(len) / 4.0;
    const kernels::DiffStats d =
        kernels::compare_arrays(back.get(), nchw.out().get(), conv_out_elems(c_.shape, c_.dir), t, rtol, atol, s);
    if (d.mismatches != 0 || d.nonfinite != 0 || !(d.rel_l2() <= 2.0 * tol.rel_l2))
      throw VerificationError(c_.name() + ": NHWC result differs from NCHW: " + std::to_string(d.mismatches) + " of " +
                              std::to_string(d.count) + " over tolerance, " + std::to_string(d.nonfinite) +
                              " non-finite, max abs err " + std::to_string(d.max_abs_err) + ", rel_l2 " +
                              std::to_string(d.rel_l2()));
  }

  ConvCase c_;
  harness::Device& dev_;
  ConvState& state_;
  cudnnDataType_t type_;
  TensorDesc xd_, yd_;
  FilterDesc wd_;
  ConvDesc cd_;
  std::array<harness::DeviceBuffer, 3> tensors_;  // x, w, y (kTensors order)
  harness::DeviceBuffer ws_;
  AlgoChoice algo_;
  std::optional<conv_graph::Bound> bound_;  // the chosen graph plan bound to the tensors and ws_
  std::string graph_note_;                  // set by add_graph_plans
  std::unique_ptr<Conv> twin_;              // NHWC only, until verified
};

// A case's prepared work: built, filled from the fixed seeds (an NHWC case from its NCHW
// twin's data), its algorithm chosen. The registry verifies it next, once.
std::unique_ptr<harness::Op> prepare(const ConvCase& c, harness::Device& dev, ConvState& state) {
  auto op = std::make_unique<Conv>(c, dev, state);
  if (c.layout == ConvLayout::nchw) op->fill();
  else op->fill_from_twin();
  GPUCHECK_CUDA(cudaStreamSynchronize(dev.stream()));
  op->choose_algorithm();
  return op;
}

void register_cases(harness::Registry& r) {
  harness::record_cudnn_version();
  const std::vector<ConvCase> cases = conv::cases(r.device().suite(), r.points());
  if (cases.empty()) return;
  harness::Device& dev = r.device();
  const harness::MeasureOptions search = search_options(r.defaults());
  ConvState& state = r.keep<ConvState>(search);  // an lvalue: no temporary behind the reference (g++ 13)
  for (const ConvCase& c : cases) {
    if (!c.shape.valid()) {
      r.add_unsupported(c.name(), "the shape has no output (the filter, less padding, is larger than the input)");
      continue;
    }
    harness::Case hc;
    hc.name = c.name();
    hc.rates = {harness::tflops(c.shape.flops())};
    hc.measure = r.defaults();
    hc.setup = [c, &dev, &state] { return prepare(c, dev, state); };
    r.add(std::move(hc));
  }
}

}  // namespace

harness::Family harness::family() {
  Family f;
  f.model = conv::model();
  f.register_cases = register_cases;
  f.summary = "bench_conv: cuDNN convolutions (TFLOP/s, 2*N*K*C*R*S*P*Q per call), forward and backward, NCHW against "
              "NHWC, the algorithm found as cudnn.benchmark does; the NHWC result checked against NCHW.";
  f.list = [](Suite s, const std::vector<axes::Point>* p, const axes::DeviceFacts&) { return listed(conv::cases(s, p)); };
  f.own_help =
      "A shape cuDNN has no engine for is reported skipped with the reason.\n"
      "Examples:\n"
      "  bench_conv -a C=3 -a H=224 -a K=64 -a R=7 -a stride=2 -a padding=3 --list     ResNet-50's conv1\n"
      "  bench_conv -a dtype=bf16 -a N=32 -a C=256 -a H=14 -a K=256 -a direction=fwd,bwd_data --benchmark_out=c.json\n";
  return f;
}

}  // namespace gpucheck
