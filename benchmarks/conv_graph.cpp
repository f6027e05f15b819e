#include "conv_graph.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "gpucheck/harness/check_cudnn.hpp"

namespace gpucheck::conv_graph {
namespace {

constexpr std::int64_t kUidX = 1, kUidW = 2, kUidY = 3;

void set(const Descriptor& d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, std::int64_t n,
         const void* v) {
  GPUCHECK_CUDNN(cudnnBackendSetAttribute(d.get(), a, t, n, v));
}

void set_desc(const Descriptor& d, cudnnBackendAttributeName_t a, const Descriptor& v) {
  cudnnBackendDescriptor_t raw = v.get();
  set(d, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
}

std::unique_ptr<Descriptor> tensor(const TensorSpec& s, cudnnDataType_t type, std::int64_t uid) {
  auto d = std::make_unique<Descriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::int64_t align = 16;  // cudaMalloc'd buffers (256-byte aligned)
  set(*d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  set(*d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, s.dims.data());
  set(*d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, s.strides.data());
  set(*d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  set(*d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
  GPUCHECK_CUDNN(cudnnBackendFinalize(d->get()));
  return d;
}

const char* note_name(cudnnBackendNumericalNote_t n) {
  switch (n) {
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: return "tensor_core";
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return "down_convert_inputs";
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return "reduced_precision_reduction";
    case CUDNN_NUMERICAL_NOTE_FFT: return "fft";
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: return "nondeterministic";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD: return "winograd";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4: return "winograd_4x4";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6: return "winograd_6x6";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13: return "winograd_13x13";
    case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP: return "strict_nan_prop";
    default: return "other";
  }
}

// Each direction's operation descriptor and the attributes that name its tensors: x (dx), w
// (dw), y (dy), the convolution descriptor and the scaling. A wrong name here does not stop
// the benchmark: finalize fails, every case of the direction falls back to the legacy search
// and its label says "graph_plans=none(<the cuDNN error>)".
struct OpAttributes {
  ConvDir dir;
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};
constexpr std::array<OpAttributes, 3> kOpAttributes{{
    {ConvDir::fwd, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
     CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
    {ConvDir::bwd_data, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
    {ConvDir::bwd_filter, CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
     CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA},
}};
static_assert(kOpAttributes.size() == kConvDirs.size(), "one row per direction");

const OpAttributes& op_attributes(ConvDir d) {
  for (const OpAttributes& a : kOpAttributes)
    if (a.dir == d) return a;
  throw GpuError("conv_graph: no operation for direction " + std::string(to_string(d)));
}

// The op graph of one convolution; the tensor and convolution descriptors it refers to stay
// alive with it.
struct Graph {
  std::unique_ptr<Descriptor> x, w, y, conv, op, graph;
};

Graph make_graph(cudnnHandle_t h, const ConvSpec& s) {
  Graph g;
  g.x = tensor(s.x, s.data, kUidX);
  g.w = tensor(s.w, s.data, kUidW);
  g.y = tensor(s.y, s.data, kUidY);
  g.conv = std::make_unique<Descriptor>(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::int64_t spatial = 2;
  set(*g.conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  set(*g.conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  set(*g.conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  set(*g.conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, s.dilation.data());
  set(*g.conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, s.stride.data());
  set(*g.conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, s.pad.data());
  set(*g.conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, s.pad.data());
  GPUCHECK_CUDNN(cudnnBackendFinalize(g.conv->get()));

  const float alpha = 1.f, beta = 0.f;
  const OpAttributes& a = op_attributes(s.dir);
  g.op = std::make_unique<Descriptor>(a.type);
  set_desc(*g.op, a.x, *g.x);
  set_desc(*g.op, a.w, *g.w);
  set_desc(*g.op, a.y, *g.y);
  set_desc(*g.op, a.conv, *g.conv);
  set(*g.op, a.alpha, CUDNN_TYPE_FLOAT, 1, &alpha);
  set(*g.op, a.beta, CUDNN_TYPE_FLOAT, 1, &beta);
  GPUCHECK_CUDNN(cudnnBackendFinalize(g.op->get()));

  g.graph = std::make_unique<Descriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set_desc(*g.graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, *g.op);
  set(*g.graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  GPUCHECK_CUDNN(cudnnBackendFinalize(g.graph->get()));
  return g;
}

// The engine configurations one heuristics mode offers (none when the mode does not apply).
std::vector<std::unique_ptr<Descriptor>> heuristics(const Graph& g, cudnnBackendHeurMode_t mode) {
  Descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *g.graph);
  set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  std::vector<std::unique_ptr<Descriptor>> out;
  if (cudnnBackendFinalize(heur.get()) != CUDNN_STATUS_SUCCESS) return out;
  std::int64_t count = 0;
  GPUCHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                          &count, nullptr));
  if (count <= 0) return out;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    out.push_back(std::make_unique<Descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(out.back()->get());
  }
  std::int64_t got = 0;
  GPUCHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                          count, &got, raw.data()));
  out.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(got, 0, count)));
  return out;
}

struct EngineInfo {
  std::int64_t index = -1;
  std::vector<cudnnBackendNumericalNote_t> notes;
};

EngineInfo engine_info(const Descriptor& cfg) {
  Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  std::int64_t n = 0;
  GPUCHECK_CUDNN(cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                          &raw));
  EngineInfo info;
  GPUCHECK_CUDNN(
      cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &info.index));
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  n = 0;
  GPUCHECK_CUDNN(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                          static_cast<std::int64_t>(notes.size()), &n, notes.data()));
  info.notes.assign(notes.begin(),
                    notes.begin() + std::clamp<std::int64_t>(n, 0, static_cast<std::int64_t>(notes.size())));
  return info;
}

bool has(const EngineInfo& e, cudnnBackendNumericalNote_t note) {
  return std::find(e.notes.begin(), e.notes.end(), note) != e.notes.end();
}

}  // namespace

Descriptor::Descriptor(cudnnBackendDescriptorType_t type) { GPUCHECK_CUDNN(cudnnBackendCreateDescriptor(type, &d_)); }
Descriptor::~Descriptor() {
  if (d_) cudnnBackendDestroyDescriptor(d_);
}

std::vector<Plan> find_plans(cudnnHandle_t h, const ConvSpec& spec, std::size_t max_workspace, std::size_t max_plans) {
  const Graph g = make_graph(h, spec);
  std::vector<Plan> out;
  std::set<std::int64_t> engines_seen;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    for (const auto& cfg : heuristics(g, mode)) {
      if (out.size() >= max_plans) return out;
      const EngineInfo e = engine_info(*cfg);
      if (mode == CUDNN_HEUR_MODE_FALLBACK && engines_seen.count(e.index)) continue;
      if (has(e, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) || has(e, CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION))
        continue;
      if (spec.data == CUDNN_DATA_FLOAT && !spec.allow_tf32 && has(e, CUDNN_NUMERICAL_NOTE_TENSOR_CORE)) continue;
      auto plan = std::make_shared<Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      set(*plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
      set_desc(*plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *cfg);
      if (cudnnBackendFinalize(plan->get()) != CUDNN_STATUS_SUCCESS) continue;  // not supported here
      std::int64_t ws = 0, n = 0;
      GPUCHECK_CUDNN(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                              1, &n, &ws));
      if (ws < 0 || static_cast<std::uint64_t>(ws) > max_workspace) continue;
      engines_seen.insert(e.index);
      std::string notes;
      for (cudnnBackendNumericalNote_t note : e.notes) {
        if (!notes.empty()) notes.push_back(',');
        notes.append(note_name(note));
      }
      out.push_back({std::move(plan), ws, e.index, notes.empty() ? "none" : notes});
    }
  }
  return out;
}

Bound::Bound(const Plan& p, void* x, void* w, void* y, void* workspace)
    : plan_(p.plan), pack_(std::make_unique<Descriptor>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)) {
  const std::array<std::int64_t, 3> uids{kUidX, kUidW, kUidY};
  const std::array<void*, 3> ptrs{x, w, y};
  set(*pack_, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids.data());
  set(*pack_, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs.data());
  set(*pack_, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  GPUCHECK_CUDNN(cudnnBackendFinalize(pack_->get()));
}

void Bound::execute(cudnnHandle_t h) const { GPUCHECK_CUDNN(cudnnBackendExecute(h, plan_->get(), pack_->get())); }

}  // namespace gpucheck::conv_graph
