#include "attention_cudnn.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "gpucheck/harness/check_cudnn.hpp"
#include "gpucheck/harness/dtype_enums.hpp"

// The op graph (cross-checked against cudnn-frontend's CompositeSDPANode, the composite
// softmax and the composite diagonal band mask it builds for cuDNN 9.x before 9.21, top-left
// and bottom-right, and the frontend's backend calls for matmul, pointwise, reduction and
// tensor descriptors):
//
//   S   = matmul(Q, K^T)                         matmul compute FLOAT; K^T has kv_heads heads
//   S1  = pointwise MUL(S, scale)                scale: FLOAT scalar passed by value
//   causal only:
//     row = GEN_INDEX(S1, axis 2) -> INT32        pointwise math precision FLOAT
//     col = GEN_INDEX(S1, axis 3) -> INT32
//     seq_q != seq_kv only (the diagonal moved to the bottom-right corner):
//       row = ADD(row, s_kv) -> INT32             compute INT32; s_kv, s_q INT32 scalars by value
//       row = SUB(row, s_q)  -> INT32
//     keep = CMP_GE(row, col) -> BOOLEAN          math precision BOOLEAN
//     S1  = BINARY_SELECT(S1, neg_inf, keep)      keep ? S1 : neg_inf; neg_inf FLOAT by value
//   M   = reduction MAX(S1)  [b,h,s_q,1]         reduction compute FLOAT
//   E   = EXP(SUB(S1, M))
//   Z   = reduction ADD(E)   [b,h,s_q,1]
//   LSE = ADD(M, LOG(Z))     [b,h,s_q,1]         the softmax statistics; see the forms below
//   P   = DIV(E, Z)                              stored in the I/O type (half or bf16)
//   O   = matmul(P, V)
//
// What the fused engines require, as the frontend builds it:
// - Q, K, V, O are the only device tensors; everything between the two matmuls is virtual
//   (CUDNN_ATTR_TENSOR_IS_VIRTUAL) and every tensor, virtual or not, has its own unique id.
// - K enters the first matmul transposed: dims [b,h_kv,d,s_kv] with strides
//   [h_kv*s_kv*d, s_kv*d, 1, d] over the same BHSD memory. Grouped-query attention is
//   nothing more: K and V carry h_kv heads and the matmuls broadcast each over the
//   heads / h_kv query heads of its group (the frontend's h_k, h_v).
// - Virtual tensors are FLOAT (the "intermediate" type), except the index tensors (INT32),
//   the mask (BOOLEAN) and P: the backend wants the second matmul's A operand in the I/O
//   type (half/bf16), like V, so the frontend retypes P and so do we.
// - The scalars (scale, neg_inf; s_kv, s_q INT32) are non-virtual tensors of dims and strides
//   {1,1,1,1} with CUDNN_ATTR_TENSOR_IS_BY_VALUE: the variant pack carries a host pointer to each.
// - Every pointwise operation sets ALPHA1 = ALPHA2 = 1; every tensor declares a 16-byte
//   alignment; all compute types are FLOAT except the mask's index arithmetic (INT32).
// - neg_inf is -infinity from cuDNN 9.10 on and the lowest finite float before, as the
//   frontend chooses it per backend version.
// - Ops are listed in data-flow order, the frontend's order; cuDNN links them through the
//   tensors' ids.
//
// Graph forms tried in turn, the first that yields a plan kept (each failure's reason goes
// into the Unsupported message):
//   lse_virtual    the frontend's inference graph: LSE computed into a virtual tensor.
//   lse_output     its training graph: LSE written to a FLOAT [b,h,s_q,1] device tensor
//                  (placed after the plan's workspace, so callers see only a larger one).
//   plain_softmax  no LSE branch at all.
//   sdpa_op        cuDNN >= 9.13.1 only, non-causal only: the single SDPA_FWD operation
//                  (Q, K untransposed, V, O, scale), which is what the frontend now prefers
//                  where it applies (9.19's SDPA_FWD has no mask attribute but a block mask).
//
// A causal mask over one query row (seq_q 1) hides no key: the graph is built without it,
// the same function; cuDNN 9.18.1's release notes list decode-phase SDPA with a causal mask
// and h_q != h_kv as a known issue, and a framework passes is_causal=False there anyway.

namespace gpucheck::attention_cudnn {
namespace {

constexpr std::int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidO = 4, kUidStats = 5, kUidScale = 6, kUidNegInf = 7,
                       kUidSeqKv = 8, kUidSeqQ = 9;
constexpr std::int64_t kFirstVirtualUid = 100;
constexpr std::size_t kStatsAlign = 256;
// Engine configurations tried per form before giving up: each failed plan may have spent a
// run-time compilation.
constexpr std::size_t kMaxConfigsPerForm = 16;

enum class Form { lse_virtual, lse_output, plain_softmax, sdpa_op };

const char* form_name(Form f) {
  switch (f) {
    case Form::lse_virtual: return "lse_virtual";
    case Form::lse_output: return "lse_output";
    case Form::plain_softmax: return "plain_softmax";
    case Form::sdpa_op: return "sdpa_op";
  }
  return "?";
}

// cuDNN's own account of its last failure in this thread ("" when it has none).
std::string last_cudnn_message() {
  std::array<char, 512> buf{};
  cudnnGetLastErrorString(buf.data(), buf.size());
  std::string s(buf.data());
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

// Owner of one backend descriptor.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) { GPUCHECK_CUDNN(cudnnBackendCreateDescriptor(type, &d_)); }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }

  void set(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, std::int64_t n, const void* v) const {
    GPUCHECK_CUDNN(cudnnBackendSetAttribute(d_, a, t, n, v));
  }
  void set(cudnnBackendAttributeName_t a, const Desc& v) const {
    cudnnBackendDescriptor_t raw = v.get();
    set(a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw);
  }
  // Finalization is where cuDNN rejects what it does not support: the error names the step.
  void finalize(const std::string& what) const {
    if (cudnnStatus_t s = cudnnBackendFinalize(d_); s != CUDNN_STATUS_SUCCESS) {
      throw GpuError("cuDNN " + std::string(cudnnGetErrorString(s)) + " finalizing " + what + ": " +
                     last_cudnn_message());
    }
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

struct Shape {
  std::array<std::int64_t, 4> dims{}, strides{};
};

Shape packed(std::int64_t d0, std::int64_t d1, std::int64_t d2, std::int64_t d3) {
  return {{d0, d1, d2, d3}, {d1 * d2 * d3, d2 * d3, d3, 1}};
}

enum class Kind { device, virt, by_value };

// An op graph under construction: owns every descriptor it refers to, so that the finalized
// graph (and the plans made from it) never outlive a tensor or operation. Tensors are handed
// out as pointers into that store, not references: g++ 13's -Wdangling-reference would take
// `const Desc& t = g.tensor(packed(...))` for a dangling one.
class Graph {
 public:
  using Tensor = const Desc*;

  Tensor tensor(const Shape& s, cudnnDataType_t type, Kind kind, std::int64_t uid = 0) {
    if (kind == Kind::virt) uid = next_virtual_uid_++;
    const Desc& d = own(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::int64_t align = 16;
    d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, s.dims.data());
    d.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, s.strides.data());
    d.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    d.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    const bool yes = true;
    if (kind == Kind::virt) d.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes);
    if (kind == Kind::by_value) d.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes);
    d.finalize("tensor uid " + std::to_string(uid));
    return &d;
  }

  Tensor virt(const Shape& s, cudnnDataType_t type) { return tensor(s, type, Kind::virt); }

  void matmul(const char* name, Tensor a, Tensor b, Tensor c) {
    const Desc& mm = own(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    mm.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    mm.finalize(std::string(name) + " matmul descriptor");
    const Desc& op = own(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, *a);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, *b);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, *c);
    op.set(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
    add_op(op, name);
  }

  // y = mode(x[, b[, t]]) computed in `precision`; returns y. axis only for GEN_INDEX.
  Tensor pointwise(const char* name, cudnnPointwiseMode_t mode, cudnnDataType_t precision, Tensor y, Tensor x,
                   Tensor b = nullptr, Tensor t = nullptr, std::int64_t axis = -1) {
    const Desc& pw = own(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision);
    if (mode == CUDNN_POINTWISE_GEN_INDEX) pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    pw.finalize(std::string(name) + " pointwise descriptor");
    const Desc& op = own(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, *x);
    if (b) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t) op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, *y);
    const float one = 1.f;
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
    op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
    add_op(op, name);
    return y;
  }

  // y = reduce(x) over the dimensions where y has extent 1; returns y.
  Tensor reduction(const char* name, cudnnReduceTensorOp_t reduce, Tensor y, Tensor x) {
    const Desc& rd = own(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    rd.set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    rd.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce);
    rd.finalize(std::string(name) + " reduction descriptor");
    const Desc& op = own(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, *x);
    op.set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, *y);
    add_op(op, name);
    return y;
  }

  // An operation descriptor whose attributes the caller sets; add_op() once they are set.
  const Desc* operation(cudnnBackendDescriptorType_t type) { return &own(type); }

  void add_op(const Desc& op, const char* name) {
    op.finalize(std::string(name) + " operation");
    ops_.push_back(op.get());
  }

  const Desc* finalize(cudnnHandle_t h) {
    graph_ = std::make_unique<Desc>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph_->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<std::int64_t>(ops_.size()),
                ops_.data());
    graph_->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    graph_->finalize("operation graph");
    return graph_.get();
  }

 private:
  const Desc& own(cudnnBackendDescriptorType_t type) {
    owned_.push_back(std::make_unique<Desc>(type));
    return *owned_.back();
  }

  std::vector<std::unique_ptr<Desc>> owned_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  std::unique_ptr<Desc> graph_;
  std::int64_t next_virtual_uid_ = kFirstVirtualUid;
};

// Host values behind the by-value tensors; their addresses go into the variant pack.
struct Scalars {
  float scale = 1.f;
  float neg_inf = -std::numeric_limits<float>::infinity();
  std::int32_t seq_kv = 0, seq_q = 0;  // the bottom-right mask's shift, s_kv - s_q
};

// Whether the graph carries a mask: causal over more than one query row (one row sees every key).
bool masked(const Spec& s) { return s.causal && s.seq_q > 1; }

// The flash-attention graph of the comment at the top, in form f (not sdpa_op). Returns the
// uids the variant pack must carry besides Q, K, V, O.
std::vector<std::int64_t> build_composite(Graph& g, const Spec& s, Form f) {
  using T = Graph::Tensor;
  const std::int64_t b = s.batch, h = s.heads, hkv = s.kv(), sq = s.seq_q, skv = s.seq_kv, d = s.head_dim;
  const cudnnDataType_t fp32 = CUDNN_DATA_FLOAT;
  const Shape scores = packed(b, h, sq, skv);
  const Shape per_row = packed(b, h, sq, 1);
  const Shape scalar = packed(1, 1, 1, 1);
  // K^T: the BHSD buffer read with the last two dims (and strides) swapped.
  const Shape k_t{{b, hkv, d, skv}, {hkv * skv * d, skv * d, 1, d}};

  const T q = g.tensor(packed(b, h, sq, d), s.data, Kind::device, kUidQ);
  const T k = g.tensor(k_t, s.data, Kind::device, kUidK);
  const T v = g.tensor(packed(b, hkv, skv, d), s.data, Kind::device, kUidV);
  const T o = g.tensor(packed(b, h, sq, d), s.data, Kind::device, kUidO);
  const T scale = g.tensor(scalar, fp32, Kind::by_value, kUidScale);
  std::vector<std::int64_t> uids{kUidScale};

  const T raw = g.virt(scores, fp32);
  g.matmul("bmm1", q, k, raw);
  T x = g.pointwise("attn_scale", CUDNN_POINTWISE_MUL, fp32, g.virt(scores, fp32), raw, scale);
  if (masked(s)) {
    const T neg_inf = g.tensor(scalar, fp32, Kind::by_value, kUidNegInf);
    uids.push_back(kUidNegInf);
    T row = g.pointwise("gen_row_index", CUDNN_POINTWISE_GEN_INDEX, fp32, g.virt(scores, CUDNN_DATA_INT32), x,
                        nullptr, nullptr, 2);
    const T col = g.pointwise("gen_col_index", CUDNN_POINTWISE_GEN_INDEX, fp32, g.virt(scores, CUDNN_DATA_INT32), x,
                              nullptr, nullptr, 3);
    if (sq != skv) {  // bottom-right: query i sees keys j <= i + s_kv - s_q
      const cudnnDataType_t i32 = CUDNN_DATA_INT32;
      const T seq_kv = g.tensor(scalar, i32, Kind::by_value, kUidSeqKv);
      const T seq_q = g.tensor(scalar, i32, Kind::by_value, kUidSeqQ);
      uids.push_back(kUidSeqKv);
      uids.push_back(kUidSeqQ);
      row = g.pointwise("row_plus_skv", CUDNN_POINTWISE_ADD, i32, g.virt(scores, i32), row, seq_kv);
      row = g.pointwise("row_minus_sq", CUDNN_POINTWISE_SUB, i32, g.virt(scores, i32), row, seq_q);
    }
    const T keep = g.pointwise("row_ge_col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN,
                               g.virt(scores, CUDNN_DATA_BOOLEAN), row, col);
    x = g.pointwise("causal_select", CUDNN_POINTWISE_BINARY_SELECT, fp32, g.virt(scores, fp32), x, neg_inf, keep);
  }
  const T max = g.reduction("row_max", CUDNN_REDUCE_TENSOR_MAX, g.virt(per_row, fp32), x);
  const T centred = g.pointwise("sub_max", CUDNN_POINTWISE_SUB, fp32, g.virt(scores, fp32), x, max);
  const T e = g.pointwise("exp", CUDNN_POINTWISE_EXP, fp32, g.virt(scores, fp32), centred);
  const T sum = g.reduction("row_sum", CUDNN_REDUCE_TENSOR_ADD, g.virt(per_row, fp32), e);
  if (f != Form::plain_softmax) {
    const T log_sum = g.pointwise("log_sum", CUDNN_POINTWISE_LOG, fp32, g.virt(per_row, fp32), sum);
    const T stats =
        f == Form::lse_output ? g.tensor(per_row, fp32, Kind::device, kUidStats) : g.virt(per_row, fp32);
    if (f == Form::lse_output) uids.push_back(kUidStats);
    g.pointwise("lse", CUDNN_POINTWISE_ADD, fp32, stats, max, log_sum);
  }
  const T p = g.pointwise("normalise", CUDNN_POINTWISE_DIV, fp32, g.virt(scores, s.data), e, sum);
  g.matmul("bmm2", p, v, o);
  return uids;
}

// The single SDPA_FWD operation (cuDNN >= 9.13.1; no mask in this file's use of it).
std::vector<std::int64_t> build_sdpa_op([[maybe_unused]] Graph& g, [[maybe_unused]] const Spec& s) {
#if CUDNN_VERSION >= 91301
  const std::int64_t b = s.batch, h = s.heads, hkv = s.kv(), sq = s.seq_q, skv = s.seq_kv, d = s.head_dim;
  const Desc* op = g.operation(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
  op->set(CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, *g.tensor(packed(b, h, sq, d), s.data, Kind::device, kUidQ));
  op->set(CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, *g.tensor(packed(b, hkv, skv, d), s.data, Kind::device, kUidK));
  op->set(CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, *g.tensor(packed(b, hkv, skv, d), s.data, Kind::device, kUidV));
  op->set(CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, *g.tensor(packed(b, h, sq, d), s.data, Kind::device, kUidO));
  op->set(CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC,
          *g.tensor(packed(1, 1, 1, 1), CUDNN_DATA_FLOAT, Kind::by_value, kUidScale));
  g.add_op(*op, "sdpa_fwd");
  return {kUidScale};
#else
  throw GpuError("built against cuDNN " + std::to_string(CUDNN_VERSION) + ", SDPA_FWD needs 9.13.1");
#endif
}

const char* note_name(cudnnBackendNumericalNote_t n) {
  switch (n) {
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: return "tensor_core";
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return "down_convert_inputs";
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return "reduced_precision_reduction";
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: return "nondeterministic";
    case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP: return "strict_nan_prop";
    default: return "other";
  }
}

// "engine=8 knobs=24:3,29:0 notes=tensor_core" for one engine configuration. Only a label:
// a query cuDNN refuses leaves its part out ("?") instead of failing a plan that works.
std::string describe_config(const Desc& cfg) {
  auto get = [](const Desc& d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, std::int64_t want,
                std::int64_t& got, void* out) {
    got = 0;
    return cudnnBackendGetAttribute(d.get(), a, t, want, &got, out) == CUDNN_STATUS_SUCCESS;
  };
  std::int64_t n = 0;
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t raw = engine.get();
  std::int64_t index = -1;
  if (!get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, n, &raw) ||
      !get(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, n, &index))
    return "engine=?";

  std::string knobs;
  std::int64_t count = 0;
  if (get(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, count, nullptr) && count > 0) {
    std::vector<std::unique_ptr<Desc>> choices;
    std::vector<cudnnBackendDescriptor_t> choice_raw;
    for (std::int64_t i = 0; i < count; ++i) {
      choices.push_back(std::make_unique<Desc>(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
      choice_raw.push_back(choices.back()->get());
    }
    if (!get(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, n, choice_raw.data()))
      n = 0;
    choices.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(n, 0, count)));
    for (const auto& choice : choices) {
      cudnnBackendKnobType_t type{};
      std::int64_t value = 0;
      if (!get(*choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, n, &type) ||
          !get(*choice, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, n, &value))
        continue;
      if (!knobs.empty()) knobs.push_back(',');
      knobs += std::to_string(static_cast<int>(type)) + ":" + std::to_string(value);
    }
  }

  std::string notes;
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> note_buf{};
  if (get(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
          static_cast<std::int64_t>(note_buf.size()), n, note_buf.data())) {
    for (std::int64_t i = 0; i < std::clamp<std::int64_t>(n, 0, static_cast<std::int64_t>(note_buf.size())); ++i) {
      if (!notes.empty()) notes.push_back(',');
      notes += note_name(note_buf[static_cast<std::size_t>(i)]);
    }
  }
  return "engine=" + std::to_string(index) + " knobs=" + (knobs.empty() ? "none" : knobs) +
         " notes=" + (notes.empty() ? "none" : notes);
}

// The engine configurations one heuristics mode offers for the graph; why none, in `why`.
std::vector<std::unique_ptr<Desc>> engine_configs(const Desc& graph, cudnnBackendHeurMode_t mode, std::string& why) {
  Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  std::vector<std::unique_ptr<Desc>> cfgs;
  if (cudnnStatus_t st = cudnnBackendFinalize(heur.get()); st != CUDNN_STATUS_SUCCESS) {
    why = std::string(cudnnGetErrorString(st)) + " " + last_cudnn_message();
    return cfgs;
  }
  std::int64_t count = 0;
  GPUCHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                          &count, nullptr));
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    cfgs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(cfgs.back()->get());
  }
  if (count > 0) {
    std::int64_t got = 0;
    GPUCHECK_CUDNN(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                            count, &got, raw.data()));
    cfgs.resize(static_cast<std::size_t>(std::clamp<std::int64_t>(got, 0, count)));
  }
  if (cfgs.empty()) why = "no engine configurations";
  return cfgs;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

// Declaration order matters: members die in reverse, so the pack goes before the plan and
// the plan before the graph it was built from.
struct Sdpa::Impl {
  Scalars scalars;
  Graph graph;
  std::unique_ptr<Desc> plan;
  std::size_t stats_offset = 0;  // where the LSE tensor starts in the workspace (lse_output)
  std::size_t workspace = 0;
  std::vector<std::int64_t> extra_uids;  // by-value scalars and the LSE, besides Q, K, V, O
  std::string label;
  // The variant pack of the last execute() and the pointers it was built for.
  std::unique_ptr<Desc> pack;
  std::array<const void*, 5> bound{};
};

Spec spec_for(const kernels::AttentionProblem& p) {
  Spec s;
  s.batch = p.batch;
  s.heads = p.heads;
  s.kv_heads = p.kv();
  s.seq_q = p.seq_q;
  s.seq_kv = p.seq_k;
  s.head_dim = p.head_dim;
  s.data = harness::cudnn_data_type(p.dtype, "attention");
  s.causal = p.causal;  // bottom-right aligned, as ours
  s.scale = p.scale;
  return s;
}

std::string unsupported_reason(const Spec& s, std::size_t cudnn_version, int cc_major, int cc_minor) {
  const std::string cc = std::to_string(cc_major) + "." + std::to_string(cc_minor);
  const std::string ver = std::to_string(cudnn_version);
  if (s.data != CUDNN_DATA_HALF && s.data != CUDNN_DATA_BFLOAT16)
    return "cuDNN fused attention runs on fp16 or bf16 data only";
  if (cudnn_version < kMinCudnnVersion) return "cuDNN " + ver + " is older than 9.0.0";
  // cudnn-frontend refuses the fp16/bf16 forward on these two for known bugs.
  if (cudnn_version == 91000 || cudnn_version == 91001)
    return "cuDNN " + ver + " has known fused-attention bugs (fixed in 9.10.2)";
  if (cc_major < 8) return "cuDNN fused attention needs compute capability 8.0 or newer, this GPU is " + cc;
  if (s.head_dim % 8 != 0) return "head dim " + std::to_string(s.head_dim) + " is not a multiple of 8";
  // Head dim: 256 on Hopper with every 9.x (the frontend's check and the support matrix of
  // 9.18.1 agree); the frontend stops Ampere and Ada up to 9.9.0 and Blackwell before 9.9.0
  // at 128; the support matrix lists decode (one query row) at 128 on every GPU but Hopper.
  std::int64_t max_d = 256;
  std::string which;
  if ((cc_major == 8 && cudnn_version <= 90900) || (cc_major == 10 && cudnn_version < 90900)) max_d = 128;
  if (s.seq_q == 1 && cc_major != 9 && max_d > 128) {
    max_d = 128;
    which = " for decode (seq_q 1; cuDNN's support matrix)";
  }
  if (s.head_dim > max_d)
    return "head dim " + std::to_string(s.head_dim) + " above " + std::to_string(max_d) + which +
           " on compute capability " + cc + " with cuDNN " + ver;
  // The frontend's rules for the bottom-right causal mask (seq_q != seq_kv; ours reject seq_q > seq_kv).
  if (s.causal && s.seq_q > s.seq_kv) return "causal needs seq_q <= seq_kv (a bottom-right aligned mask)";
  if (masked(s) && s.seq_q != s.seq_kv && cudnn_version < 90600 && (s.seq_q % 64 != 0 || s.seq_kv % 64 != 0))
    return "cuDNN " + ver +
           " runs a bottom-right causal mask only with seq_q and seq_kv multiples of 64 (9.6.0 lifts it)";
  return "";
}

Sdpa::Sdpa(cudnnHandle_t h, const Spec& spec, std::size_t max_workspace) {
  if (spec.batch < 1 || spec.heads < 1 || spec.seq_q < 1 || spec.seq_kv < 1 || spec.head_dim < 1)
    throw std::invalid_argument("attention spec: every dimension must be at least 1");
  if (spec.kv_heads < 0 || spec.kv() > spec.heads || spec.heads % spec.kv() != 0)
    throw std::invalid_argument("attention spec: kv_heads must divide heads");
  if (spec.seq_q > std::numeric_limits<std::int32_t>::max() || spec.seq_kv > std::numeric_limits<std::int32_t>::max())
    throw std::invalid_argument("attention spec: sequence lengths must fit in 32 bits (the mask's index type)");
  if (!std::isfinite(spec.scale)) throw std::invalid_argument("attention spec: scale must be finite");
  int device = 0, major = 0, minor = 0;
  GPUCHECK_CUDA(cudaGetDevice(&device));
  GPUCHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GPUCHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const std::size_t version = cudnnGetVersion();
  if (std::string why = unsupported_reason(spec, version, major, minor); !why.empty()) throw Unsupported(why);

  const std::size_t stats_bytes =
      static_cast<std::size_t>(spec.batch * spec.heads * spec.seq_q) * sizeof(float);
  std::vector<Form> forms{Form::lse_virtual, Form::lse_output, Form::plain_softmax};
  if (!masked(spec) && version >= 91301 && CUDNN_VERSION >= 91301) forms.push_back(Form::sdpa_op);

  std::string failures;
  for (Form form : forms) {
    auto impl = std::make_unique<Impl>();
    impl->scalars.scale = spec.scale;
    impl->scalars.seq_kv = static_cast<std::int32_t>(spec.seq_kv);
    impl->scalars.seq_q = static_cast<std::int32_t>(spec.seq_q);
    if (version < 91000) impl->scalars.neg_inf = std::numeric_limits<float>::lowest();
    std::string why;
    try {
      impl->extra_uids =
          form == Form::sdpa_op ? build_sdpa_op(impl->graph, spec) : build_composite(impl->graph, spec, form);
      const Desc* graph = impl->graph.finalize(h);
      const bool writes_stats = form == Form::lse_output;
      std::size_t tried = 0, too_big = 0;
      std::string plan_error;
      for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
        std::string heur_why;
        for (const auto& cfg : engine_configs(*graph, mode, heur_why)) {
          if (tried == kMaxConfigsPerForm) break;
          ++tried;
          auto plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
          plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
          plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *cfg);
          if (cudnnStatus_t st = cudnnBackendFinalize(plan->get()); st != CUDNN_STATUS_SUCCESS) {
            if (plan_error.empty()) plan_error = std::string(cudnnGetErrorString(st)) + " " + last_cudnn_message();
            continue;
          }
          std::int64_t ws = 0, n = 0;
          GPUCHECK_CUDNN(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                  CUDNN_TYPE_INT64, 1, &n, &ws));
          const std::size_t plan_ws = static_cast<std::size_t>(std::max<std::int64_t>(ws, 0));
          const std::size_t total = writes_stats ? round_up(plan_ws, kStatsAlign) + stats_bytes : plan_ws;
          if (ws < 0 || total > max_workspace) {
            ++too_big;
            continue;
          }
          impl->plan = std::move(plan);
          impl->stats_offset = writes_stats ? round_up(plan_ws, kStatsAlign) : 0;
          impl->workspace = total;
          impl->label = describe_config(*cfg) + " graph=" + form_name(form);
          impl_ = std::move(impl);
          return;
        }
        if (!heur_why.empty())
          why += std::string(mode == CUDNN_HEUR_MODE_A ? " heuristics A: " : " fallback: ") + heur_why + ";";
      }
      if (tried > 0) {
        why += " " + std::to_string(tried) + " configs tried";
        if (too_big) why += ", " + std::to_string(too_big) + " over the workspace limit";
        if (!plan_error.empty()) why += ", first plan error: " + plan_error;
      }
    } catch (const GpuError& e) {
      why += std::string(" ") + e.what();
    }
    if (!failures.empty()) failures += " | ";
    failures += std::string(form_name(form)) + ":" + why;
  }
  throw Unsupported("no cuDNN SDPA plan: " + failures);
}

Sdpa::~Sdpa() = default;
Sdpa::Sdpa(Sdpa&&) noexcept = default;
Sdpa& Sdpa::operator=(Sdpa&&) noexcept = default;

std::size_t Sdpa::workspace_bytes() const { return impl_->workspace; }

const std::string& Sdpa::engine_label() const { return impl_->label; }

void Sdpa::execute(cudnnHandle_t h, const void* q, const void* k, const void* v, void* o, void* workspace) {
  Impl& m = *impl_;
  if (m.workspace > 0 && workspace == nullptr)
    throw std::invalid_argument("cuDNN SDPA needs " + std::to_string(m.workspace) + " bytes of workspace");
  const std::array<const void*, 5> now{q, k, v, o, workspace};
  if (!m.pack || now != m.bound) {
    std::vector<std::int64_t> uids{kUidQ, kUidK, kUidV, kUidO};
    // cuDNN takes void* for inputs too; it does not write Q, K or V.
    std::vector<void*> ptrs{const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o};
    for (std::int64_t uid : m.extra_uids) {
      uids.push_back(uid);
      if (uid == kUidScale) ptrs.push_back(&m.scalars.scale);
      else if (uid == kUidNegInf) ptrs.push_back(&m.scalars.neg_inf);
      else if (uid == kUidSeqKv) ptrs.push_back(&m.scalars.seq_kv);
      else if (uid == kUidSeqQ) ptrs.push_back(&m.scalars.seq_q);
      else ptrs.push_back(static_cast<char*>(workspace) + m.stats_offset);  // kUidStats
    }
    auto pack = std::make_unique<Desc>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack->set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<std::int64_t>(uids.size()),
              uids.data());
    pack->set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<std::int64_t>(ptrs.size()),
              ptrs.data());
    pack->set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    pack->finalize("variant pack");
    m.pack = std::move(pack);
    m.bound = now;
  }
  GPUCHECK_CUDNN(cudnnBackendExecute(h, m.plan->get(), m.pack->get()));
}

}  // namespace gpucheck::attention_cudnn
