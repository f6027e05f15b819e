// bench_conv: cuDNN 2-D convolution throughput in TFLOP/s (2*N*K*C*R*S*P*Q per call, the same
// count for forward, backward-data and backward-filter) on ResNet-50's layers, NCHW against
// NHWC (filters KCRS against KRSC, as PyTorch's channels_last), fp32 (strict FMA), tf32,
// fp16 and bf16 (fp32 compute, like PyTorch). The algorithm is chosen once per (direction,
// layout, dtype, shape): cudnnFind*Ex measures every legacy algorithm once and ranks them;
// the first few usable ones and the first ten execution plans of the graph API's heuristics
// (conv_graph.hpp: the engines PyTorch's cudnn.benchmark searches) are then timed here back
// to back (1 warm-up + 5 calls each, CUDA events, stream held by the spin kernel while
// queued) and the lowest median wins. Find's
// one-shot ranking alone misleads for multi-kernel algorithms: on an H200 (cuDNN 9.14) it
// ranked WINOGRAD_NONFUSED first for fp16 n64c64h56w56k64r3s3 (65 TFLOP/s in our loop,
// PyTorch 130) and FFT_TILING first for tf32 (66 against 86). The choice is cached and
// recorded in the label ("algo=... ws=... math=..." or "engine=N(graph) ws=... notes=...",
// then "picked=timed(N candidates)", plus "find_first=..." when Find ranked another legacy
// algorithm first), so a regression can be traced to it.
// Before timing, the NCHW result is checked on sampled elements against a double direct
// convolution, and an NHWC result, transposed back to NCHW, must equal the NCHW one.
//
// Reading it against PyTorch: torch.backends.cudnn.allow_tf32 defaults to True, so the
// anchors' conv/torch_*/fp32 figures compare with our "tf32" cases, not with "fp32" (which
// forbids TF32 with CUDNN_FMA_MATH). NVIDIA_TF32_OVERRIDE=0 in the environment turns TF32
// off for both; the label then says "tf32_override=0".
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "conv_graph.hpp"
#include "gpucheck/core/conv_model.hpp"
#include "gpucheck/core/names.hpp"
#include "gpucheck/core/verify.hpp"
#include "gpucheck/harness/check.hpp"
#include "gpucheck/harness/check_cudnn.hpp"
#include "gpucheck/harness/main.hpp"
#include "gpucheck/harness/registry.hpp"
#include "gpucheck/harness/timing.hpp"
#include "gpucheck/kernels/fill.cuh"
#include "gpucheck/kernels/spin.cuh"
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
// quick suite's search took 6 s longer.
constexpr std::size_t kMaxGraphPlans = 10;
constexpr int kTimedCalls = 5;
// The spin kernel's limit while the timed calls are queued (a stuck host, not work).
constexpr unsigned long long kSpinTimeoutNs = 2'000'000'000ull;

struct ConvCase {
  ConvLayout layout;
  ConvDir dir;
  DType dtype;
  ConvShape shape;
  std::string name() const { return conv_case_name(layout, dir, dtype, shape); }
};

DType storage_type(DType t) { return t == DType::tf32 ? DType::fp32 : t; }

cudnnDataType_t cudnn_type(DType t) {
  switch (t) {
    case DType::fp32:
    case DType::tf32: return CUDNN_DATA_FLOAT;
    case DType::fp16: return CUDNN_DATA_HALF;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    default: throw std::invalid_argument("conv: unsupported dtype " + std::string(to_string(t)));
  }
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

cudnnHandle_t cudnn_handle() {
  static cudnnHandle_t h = [] {
    cudnnHandle_t x = nullptr;
    GPUCHECK_CUDNN(cudnnCreate(&x));
    return x;
  }();
  return h;
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
  float find_ms = 0;    // cuDNN's own time for it during the search
  float timed_ms = 0;   // median of our back-to-back calls (0 when not timed)
  int timed = 0;        // candidates timed to choose it
  int find_first = -1;  // the algorithm Find ranked first among the usable ones
  int stalled = 0;      // candidates left out because queuing their calls stalled
  std::string graph_note;  // why the graph API offered no plan (empty when it did)
};

// The cudnn.benchmark cache: one search per case name.
std::map<std::string, AlgoChoice>& algo_cache() {
  static std::map<std::string, AlgoChoice> cache;
  return cache;
}

// Results come sorted fastest first; the usable ones (ran, fit the workspace and, for strict
// fp32, are not tensor-op (TF32) kernels) in that order, at most kMaxTimedCandidates.
template <typename Perf>
std::vector<AlgoChoice> usable(const std::vector<Perf>& perf, int returned, DType t, ConvDir dir,
                               const std::string& what) {
  std::string seen;
  std::vector<AlgoChoice> out;
  returned = std::clamp(returned, 0, static_cast<int>(perf.size()));
  for (int i = 0; i < returned && out.size() < kMaxTimedCandidates; ++i) {
    const Perf& p = perf[static_cast<std::size_t>(i)];
    seen.push_back(' ');
    seen.append(conv_algo_name(dir, static_cast<int>(p.algo)));
    seen.push_back(':');
    seen.append(cudnnGetErrorString(p.status));
    if (p.status != CUDNN_STATUS_SUCCESS || p.time < 0 || p.memory > kFindWorkspaceBytes) continue;
    if (t == DType::fp32 &&
        (p.mathType == CUDNN_TENSOR_OP_MATH || p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
      continue;
    AlgoChoice a;
    a.algo = static_cast<int>(p.algo);
    a.workspace = p.memory;
    a.math = p.mathType;
    a.find_ms = p.time;
    out.push_back(a);
  }
  if (!out.empty()) return out;
  throw GpuError(what + ": cudnnFind found no usable algorithm (" + std::to_string(returned) + " tried:" + seen + ")");
}

// One convolution in one layout: descriptors, the three tensors (x, w, y; which are inputs
// depends on the direction), the chosen algorithm and its workspace.
class ConvOp {
 public:
  explicit ConvOp(const ConvCase& c)
      : c_(c),
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
    const std::size_t e = storage_bytes(storage_type(c.dtype));
    x_ = harness::DeviceBuffer(e * conv_x_elems(c.shape));
    w_ = harness::DeviceBuffer(e * conv_w_elems(c.shape));
    y_ = harness::DeviceBuffer(e * conv_y_elems(c.shape));
  }

  const ConvCase& conv_case() const { return c_; }
  void* x() const { return x_.get(); }
  void* w() const { return w_.get(); }
  void* y() const { return y_.get(); }
  // The tensor this direction writes.
  const harness::DeviceBuffer& out() const {
    return c_.dir == ConvDir::fwd ? y_ : c_.dir == ConvDir::bwd_data ? x_ : w_;
  }

  // Chooses the algorithm (cached per case name), then allocates its workspace. The search
  // overwrites the output tensor (never an input).
  void choose_algorithm() {
    auto& cache = algo_cache();
    auto it = cache.find(c_.name());
    if (it == cache.end()) it = cache.emplace(c_.name(), find()).first;
    algo_ = it->second;
    // PyTorch runs with the math type the search reported for the winner; strict fp32 keeps FMA.
    if (c_.dtype != DType::fp32) GPUCHECK_CUDNN(cudnnSetConvolutionMathType(cd_.get(), algo_.math));
    ws_ = harness::DeviceBuffer(algo_.workspace);
    bound_.reset();
    if (algo_.plan) bound_.emplace(*algo_.plan, x_.get(), w_.get(), y_.get(), ws_.get());
  }

  void run(cudaStream_t s) const {
    if (bound_) {
      cudnnHandle_t h = cudnn_handle();
      GPUCHECK_CUDNN(cudnnSetStream(h, s));
      bound_->execute(h);
    } else {
      enqueue(s, algo_.algo, ws_.get(), algo_.workspace);
    }
  }

  std::string label() const {
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
    l.append(algo_.timed == 1 ? " candidate)" : " candidates)");
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
  AlgoChoice find() {
    cudnnHandle_t h = cudnn_handle();
    GPUCHECK_CUDNN(cudnnSetStream(h, harness::Device::get().stream()));
    harness::DeviceBuffer ws(kFindWorkspaceBytes);
    int max = 0, got = 0;
    const std::string what = c_.name();
    switch (c_.dir) {
      case ConvDir::fwd: {
        GPUCHECK_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
        GPUCHECK_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(h, xd_.get(), x_.get(), wd_.get(), w_.get(), cd_.get(),
                                                              yd_.get(), y_.get(), max, &got, perf.data(), ws.get(),
                                                              ws.bytes()));
        return time_candidates(with_graph_plans(usable(perf, got, c_.dtype, c_.dir, what), h), ws);
      }
      case ConvDir::bwd_data: {
        GPUCHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
        GPUCHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithmEx(h, wd_.get(), w_.get(), yd_.get(), y_.get(),
                                                                   cd_.get(), xd_.get(), x_.get(), max, &got,
                                                                   perf.data(), ws.get(), ws.bytes()));
        return time_candidates(with_graph_plans(usable(perf, got, c_.dtype, c_.dir, what), h), ws);
      }
      case ConvDir::bwd_filter: {
        GPUCHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max));
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
        GPUCHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithmEx(h, xd_.get(), x_.get(), yd_.get(), y_.get(),
                                                                     cd_.get(), wd_.get(), w_.get(), max, &got,
                                                                     perf.data(), ws.get(), ws.bytes()));
        return time_candidates(with_graph_plans(usable(perf, got, c_.dtype, c_.dir, what), h), ws);
      }
    }
    throw GpuError(what + ": unknown direction");
  }

  // The graph API's view of this case: logical NCHW/KCRS extents with the layout's strides.
  conv_graph::ConvSpec graph_spec() const {
    const ConvShape& sh = c_.shape;
    auto spec_of = [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
      conv_graph::TensorSpec t;
      t.dims = {n, c, h, w};
      t.strides = c_.layout == ConvLayout::nchw ? std::array<std::int64_t, 4>{c * h * w, h * w, w, 1}
                                                : std::array<std::int64_t, 4>{h * w * c, 1, w * c, c};
      return t;
    };
    conv_graph::ConvSpec s;
    s.op = c_.dir == ConvDir::fwd ? conv_graph::Op::fwd
           : c_.dir == ConvDir::bwd_data ? conv_graph::Op::bwd_data : conv_graph::Op::bwd_filter;
    s.data = type_;
    s.x = spec_of(sh.n, sh.c, sh.h, sh.w);
    s.w = spec_of(sh.k, sh.c, sh.r, sh.s);
    s.y = spec_of(sh.n, sh.k, sh.p(), sh.q());
    s.pad = {sh.pad_h(), sh.pad_w()};
    s.stride = {sh.stride, sh.stride};
    s.allow_tf32 = c_.dtype != DType::fp32;
    return s;
  }

  // Find's usable legacy algorithms followed by the graph API's plans. A cuDNN that rejects the
  // graph (another version's attributes) leaves the legacy search alone, and the label says so.
  std::vector<AlgoChoice> with_graph_plans(std::vector<AlgoChoice> cands, cudnnHandle_t h) {
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
      cands.push_back(std::move(a));
    }
    return cands;
  }

  // One call of this direction with the given algorithm and workspace, on s (the descriptor's
  // math type must already be the algorithm's).
  void enqueue(cudaStream_t s, int algo, void* ws, std::size_t ws_bytes) const {
    const float one = 1.f, zero = 0.f;  // float scaling for float, half and bfloat16 data
    cudnnHandle_t h = cudnn_handle();
    GPUCHECK_CUDNN(cudnnSetStream(h, s));
    switch (c_.dir) {
      case ConvDir::fwd:
        GPUCHECK_CUDNN(cudnnConvolutionForward(h, &one, xd_.get(), x_.get(), wd_.get(), w_.get(), cd_.get(),
                                               static_cast<cudnnConvolutionFwdAlgo_t>(algo), ws, ws_bytes, &zero,
                                               yd_.get(), y_.get()));
        return;
      case ConvDir::bwd_data:
        GPUCHECK_CUDNN(cudnnConvolutionBackwardData(h, &one, wd_.get(), w_.get(), yd_.get(), y_.get(), cd_.get(),
                                                    static_cast<cudnnConvolutionBwdDataAlgo_t>(algo), ws, ws_bytes,
                                                    &zero, xd_.get(), x_.get()));
        return;
      case ConvDir::bwd_filter:
        GPUCHECK_CUDNN(cudnnConvolutionBackwardFilter(h, &one, xd_.get(), x_.get(), yd_.get(), y_.get(), cd_.get(),
                                                      static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo), ws,
                                                      ws_bytes, &zero, wd_.get(), w_.get()));
        return;
    }
    throw GpuError(c_.name() + ": unknown direction");
  }

  // Times each candidate as the benchmark's loop will run it: one warm-up call (also loads
  // its kernels before the stream is held), then kTimedCalls calls queued back to back behind
  // the spin kernel, an event between consecutive calls; the lowest median wins. Overwrites
  // the output tensor only. `ws` holds kFindWorkspaceBytes >= every candidate's workspace.
  AlgoChoice time_candidates(std::vector<AlgoChoice> cands, const harness::DeviceBuffer& ws) {
    harness::Device& dev = harness::Device::get();
    cudaStream_t s = dev.stream();
    std::vector<harness::Event> ev;
    ev.reserve(static_cast<std::size_t>(kTimedCalls) + 1);
    for (int i = 0; i <= kTimedCalls; ++i) ev.emplace_back();
    int stalled = 0;
    cudnnHandle_t h = cudnn_handle();
    for (AlgoChoice& a : cands) {
      if (a.workspace > ws.bytes()) throw GpuError(c_.name() + ": candidate workspace exceeds the search's");
      std::optional<conv_graph::Bound> bound;
      if (a.plan) {
        bound.emplace(*a.plan, x_.get(), w_.get(), y_.get(), ws.get());
      } else if (c_.dtype != DType::fp32) {
        GPUCHECK_CUDNN(cudnnSetConvolutionMathType(cd_.get(), a.math));
      }
      const auto call = [&] {
        if (bound) {
          GPUCHECK_CUDNN(cudnnSetStream(h, s));
          bound->execute(h);
        } else {
          enqueue(s, a.algo, ws.get(), a.workspace);
        }
      };
      call();  // warm-up
      GPUCHECK_CUDA(cudaMemsetAsync(dev.spin_timed_out(), 0, sizeof(int), s));
      {
        // Releases the stream however this block is left (a throw mid-queue included).
        struct Release {
          volatile int* flag;
          ~Release() { set_flag(flag, 1); }
        } release{dev.host_flag()};
        set_flag(dev.host_flag(), 0);
        kernels::spin_until_flag(dev.device_view_of_flag(), dev.spin_timed_out(), kSpinTimeoutNs, s);
        ev[0].record(s);
        for (std::size_t i = 1; i < ev.size(); ++i) {
          call();
          ev[i].record(s);
        }
      }
      std::vector<float> ms;
      ms.reserve(static_cast<std::size_t>(kTimedCalls));
      for (std::size_t i = 1; i < ev.size(); ++i) ms.push_back(ev[i].elapsed_ms_since(ev[i - 1]));
      int timed_out = 0;
      GPUCHECK_CUDA(cudaMemcpyAsync(&timed_out, dev.spin_timed_out(), sizeof(int), cudaMemcpyDeviceToHost, s));
      GPUCHECK_CUDA(cudaStreamSynchronize(s));
      if (timed_out) {
        // Queuing its calls took over 2 s (e.g. it waits on the host): its times are not
        // trustworthy and the benchmark's loop could not hold the stream either; leave it out.
        a.timed_ms = std::numeric_limits<float>::infinity();
        ++stalled;
        continue;
      }
      std::sort(ms.begin(), ms.end());
      a.timed_ms = ms[ms.size() / 2];
      if (!(a.timed_ms > 0))
        throw GpuError(c_.name() + ": non-positive time for " +
                       (a.plan ? "engine " + std::to_string(a.plan->engine) : "algorithm " + std::to_string(a.algo)));
    }
    const auto best = std::min_element(cands.begin(), cands.end(),
                                       [](const AlgoChoice& l, const AlgoChoice& r) { return l.timed_ms < r.timed_ms; });
    if (!(best->timed_ms < std::numeric_limits<float>::infinity()))
      throw GpuError(c_.name() + ": every candidate algorithm stalled the held stream for over 2 s");
    AlgoChoice chosen = *best;
    chosen.timed = static_cast<int>(cands.size());
    chosen.stalled = stalled;
    chosen.find_first = cands.front().algo;
    chosen.graph_note = graph_note_;
    return chosen;
  }

  static void set_flag(volatile int* f, int v) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    *f = v;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  ConvCase c_;
  cudnnDataType_t type_;
  TensorDesc xd_, yd_;
  FilterDesc wd_;
  ConvDesc cd_;
  harness::DeviceBuffer x_, w_, y_, ws_;
  AlgoChoice algo_;
  std::optional<conv_graph::Bound> bound_;  // the chosen graph plan bound to x_, w_, y_, ws_
  std::string graph_note_;                  // set by with_graph_plans
};

// Copies an NCHW-ordered tensor (n, c, h, w) to NHWC order or back (filters: n = k,
// c = c, h = r, w = s), in its own dtype (exact).
void transform(const void* src, ConvLayout from, void* dst, ConvLayout to, DType t, std::int64_t n, std::int64_t c,
               std::int64_t h, std::int64_t w, cudaStream_t s) {
  const cudnnDataType_t ct = cudnn_type(t);
  TensorDesc sd(cudnn_format(from), ct, n, c, h, w), dd(cudnn_format(to), ct, n, c, h, w);
  const float one = 1.f, zero = 0.f;
  cudnnHandle_t hd = cudnn_handle();
  GPUCHECK_CUDNN(cudnnSetStream(hd, s));
  GPUCHECK_CUDNN(cudnnTransformTensor(hd, &one, sd.get(), src, &zero, dd.get(), dst));
}

// The three tensors' logical NCHW extents.
std::array<std::int64_t, 4> x_dims(const ConvShape& s) { return {s.n, s.c, s.h, s.w}; }
std::array<std::int64_t, 4> w_dims(const ConvShape& s) { return {s.k, s.c, s.r, s.s}; }
std::array<std::int64_t, 4> y_dims(const ConvShape& s) { return {s.n, s.k, s.p(), s.q()}; }

void transform_dims(const void* src, ConvLayout from, void* dst, ConvLayout to, DType t,
                    const std::array<std::int64_t, 4>& d, cudaStream_t s) {
  transform(src, from, dst, to, t, d[0], d[1], d[2], d[3], s);
}

std::array<std::int64_t, 4> out_dims(const ConvShape& s, ConvDir d) {
  return d == ConvDir::fwd ? y_dims(s) : d == ConvDir::bwd_data ? x_dims(s) : w_dims(s);
}

// Fixed seeds: every run of a case sees the same data, so the one verification per case
// (below) covers the calls that are timed later.
constexpr std::uint64_t kSeedX = 0xC0'4E'01, kSeedW = 0xC0'4E'02, kSeedY = 0xC0'4E'03;

// Checks the NCHW op's output on sampled elements against a double direct convolution over
// the stored inputs. The op must have run.
void check_against_host(const ConvOp& op) {
  const ConvCase& c = op.conv_case();
  const ConvShape& s = c.shape;
  cudaStream_t st = harness::Device::get().stream();
  const DType t = storage_type(c.dtype);
  const std::size_t len = conv_reduction_length(s, c.dir);
  const std::size_t out_n = conv_out_elems(s, c.dir);
  // Operands per direction (see conv_terms): fwd (x, w), bwd_data (dy, w), bwd_filter (dy, x).
  const void* a = c.dir == ConvDir::fwd ? op.x() : op.y();
  const void* b = c.dir == ConvDir::bwd_filter ? op.x() : op.w();
  // At most ~4M gathered terms: 64 samples for short reductions, fewer (>= 4) for
  // backward-filter's N*P*Q-long ones.
  const std::size_t samples = std::clamp<std::size_t>(std::size_t{4'000'000} / std::max<std::size_t>(len, 1), 4, 64);
  std::mt19937_64 rng(kSeedY ^ out_n);
  std::vector<std::size_t> idx{0, out_n - 1};  // the first and last elements catch edge bugs
  while (idx.size() < std::min(samples, out_n)) idx.push_back(static_cast<std::size_t>(rng() % out_n));
  const std::vector<double> got = kernels::gather_to_host_double(op.out().get(), idx, t, st);
  SampleChecker check(conv_tolerance(c.dtype, len));
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const auto terms = conv_terms(s, c.dir, idx[i]);
    std::vector<std::size_t> ia, ib;
    ia.reserve(terms.size());
    ib.reserve(terms.size());
    for (const auto& [pa, pb] : terms) {
      ia.push_back(pa);
      ib.push_back(pb);
    }
    const auto va = kernels::gather_to_host_double(a, ia, t, st);
    const auto vb = kernels::gather_to_host_double(b, ib, t, st);
    double ref = 0, scale = 0;
    for (std::size_t j = 0; j < terms.size(); ++j) {
      ref += va[j] * vb[j];
      scale += std::fabs(va[j] * vb[j]);
    }
    check.add(idx[i], ref, got[i], scale);
  }
  const CheckReport rep = check.report();
  if (!rep.ok()) throw VerificationError(c.name() + ": NCHW result differs from the host reference: " + rep.describe());
}

// The NCHW twin of a case: same direction, dtype and shape.
ConvCase nchw_twin(const ConvCase& c) {
  ConvCase r = c;
  r.layout = ConvLayout::nchw;
  return r;
}

void fill_inputs(const ConvOp& op, cudaStream_t s) {
  const ConvCase& c = op.conv_case();
  const DType t = c.dtype;  // tf32: full fp32 values; the tolerance covers TF32's rounding
  kernels::fill_uniform(op.x(), conv_x_elems(c.shape), storage_type(t), kSeedX, -1.f, 1.f, s);
  kernels::fill_uniform(op.w(), conv_w_elems(c.shape), storage_type(t), kSeedW, -1.f, 1.f, s);
  kernels::fill_uniform(op.y(), conv_y_elems(c.shape), storage_type(t), kSeedY, -1.f, 1.f, s);
}

// Copies the NCHW op's three tensors into the NHWC op (inputs; the output is poisoned later).
void copy_to_nhwc(const ConvOp& nchw, const ConvOp& nhwc, cudaStream_t s) {
  const ConvShape& sh = nchw.conv_case().shape;
  const DType t = storage_type(nchw.conv_case().dtype);
  transform_dims(nchw.x(), ConvLayout::nchw, nhwc.x(), ConvLayout::nhwc, t, x_dims(sh), s);
  transform_dims(nchw.w(), ConvLayout::nchw, nhwc.w(), ConvLayout::nhwc, t, w_dims(sh), s);
  transform_dims(nchw.y(), ConvLayout::nchw, nhwc.y(), ConvLayout::nhwc, t, y_dims(sh), s);
}

std::set<std::string>& verified_cases() {
  static std::set<std::string> v;
  return v;
}

// Verifies `op` (built and filled from the fixed seeds): NCHW against the host reference;
// NHWC, transposed back, against the NCHW twin's full output.
void verify_or_throw(const ConvOp& op, const ConvOp* nchw_ref) {
  const ConvCase& c = op.conv_case();
  cudaStream_t s = harness::Device::get().stream();
  const DType t = storage_type(c.dtype);
  if (c.layout == ConvLayout::nchw) {
    kernels::poison(op.out().get(), op.out().bytes(), s);
    op.run(s);
    check_against_host(op);
    return;
  }
  const ConvOp& ref = *nchw_ref;
  kernels::poison(ref.out().get(), ref.out().bytes(), s);
  ref.run(s);
  check_against_host(ref);
  kernels::poison(op.out().get(), op.out().bytes(), s);
  op.run(s);
  harness::DeviceBuffer back(op.out().bytes());
  transform_dims(op.out().get(), ConvLayout::nhwc, back.get(), ConvLayout::nchw, t, out_dims(c.shape, c.dir), s);
  const std::size_t len = conv_reduction_length(c.shape, c.dir);
  const Tolerance tol = conv_tolerance(c.dtype, len);
  // Two independent results each within tol of the truth: twice the bound apart at most. The
  // typical scale of an element is len * E|a| E|b| = len / 4 for inputs uniform in [-1, 1).
  const double rtol = 2.0 * tol.rel_out;
  const double atol = 2.0 * tol.rel_acc * static_cast<double>(len) / 4.0;
  const kernels::DiffStats d =
      kernels::compare_arrays(back.get(), ref.out().get(), conv_out_elems(c.shape, c.dir), t, rtol, atol, s);
  if (d.mismatches != 0 || d.nonfinite != 0 || !(d.rel_l2() <= 2.0 * tol.rel_l2))
    throw VerificationError(c.name() + ": NHWC result differs from NCHW: " + std::to_string(d.mismatches) + " of " +
                            std::to_string(d.count) + " over tolerance, " + std::to_string(d.nonfinite) +
                            " non-finite, max abs err " + std::to_string(d.max_abs_err) + ", rel_l2 " +
                            std::to_string(d.rel_l2()));
}

void conv(benchmark::State& state, const ConvCase& c) {
  cudaStream_t s = harness::Device::get().stream();
  ConvOp op(c);
  std::unique_ptr<ConvOp> ref;
  if (c.layout == ConvLayout::nchw) {
    fill_inputs(op, s);
  } else {
    ref = std::make_unique<ConvOp>(nchw_twin(c));
    fill_inputs(*ref, s);
    copy_to_nhwc(*ref, op, s);
  }
  GPUCHECK_CUDA(cudaStreamSynchronize(s));
  op.choose_algorithm();
  // Google Benchmark calls this body several times per case; the data and the algorithm are
  // the same every time, so one verification per case suffices.
  if (!verified_cases().count(c.name())) {
    if (ref) ref->choose_algorithm();
    verify_or_throw(op, ref.get());
    verified_cases().insert(c.name());
  }
  ref.reset();  // free the twin before timing
  const harness::Timing t = harness::time_on_stream(state, [&](cudaStream_t st) { op.run(st); });
  state.counters["TFLOPS"] = harness::tflops(c.shape.flops(), t);
  state.SetLabel(op.label());
}

}  // namespace

void harness::register_benchmarks(Device& device) {
  std::vector<ConvCase> cases;
  const std::vector<ConvLayout> layouts{ConvLayout::nchw, ConvLayout::nhwc};
  if (device.full()) {
    for (std::int64_t batch : {64, 256})
      for (const ConvShape& shape : resnet50_convs(batch))
        for (ConvDir dir : {ConvDir::fwd, ConvDir::bwd_data, ConvDir::bwd_filter})
          for (DType t : {DType::fp32, DType::tf32, DType::fp16, DType::bf16})
            for (ConvLayout l : layouts) cases.push_back({l, dir, t, shape});
  } else {
    // The three shapes torch_anchors.py measures, forward, in the anchors' dtypes (its fp32
    // runs with TF32 allowed, so our tf32 is its counterpart).
    for (const ConvShape& shape : resnet50_convs(64)) {
      const std::string n = shape.name();
      if (n != "n64c64h56w56k64r3s3" && n != "n64c256h56w56k64r1s1" && n != "n64c128h28w28k128r3s3") continue;
      for (DType t : {DType::fp16, DType::tf32})
        for (ConvLayout l : layouts) cases.push_back({l, ConvDir::fwd, t, shape});
    }
  }
  for (const ConvCase& c : cases) {
    auto* b = register_case(c.name(), [c](benchmark::State& s) { conv(s, c); });
    // Quick: 0.1 s of GPU time per case is hundreds of calls at these sizes and keeps the
    // binary's wall time in a few seconds.
    if (!device.full()) b->MinTime(0.1);
  }
}

}  // namespace gpucheck
