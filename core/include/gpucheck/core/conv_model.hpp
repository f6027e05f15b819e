// The pure side of bench_conv: ResNet-50's convolution layers, output-shape and FLOP math,
// the names the cases go by, what each direction does with the three tensors, their extents
// and strides per layout, cuDNN algorithm names, which of Find's results a case may time and
// which timed candidate wins, the index math of a direct host reference (which input
// elements meet in one output element, for each direction) and the tolerance a convolution
// result is held to. No CUDA or cuDNN headers here.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucheck/core/dtype.hpp"
#include "gpucheck/core/verify.hpp"

namespace gpucheck {

// A 2-D convolution (cross-correlation, dilation 1, one group): input n x c x h x w, filter
// k x c x r x s, the same stride and padding along both spatial axes.
struct ConvShape {
  std::int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
  std::int64_t stride = 1;
  std::int64_t pad = -1;  // < 0: the "same" padding r / 2 (what PyTorch's anchor uses)

  std::int64_t pad_h() const { return pad < 0 ? r / 2 : pad; }
  std::int64_t pad_w() const { return pad < 0 ? s / 2 : pad; }
  std::int64_t p() const;  // output height: (h + 2 pad - r) / stride + 1
  std::int64_t q() const;  // output width
  bool valid() const;      // every extent positive, output non-empty
  // 2 * N*K*C*R*S*P*Q: the multiply-adds of a direct convolution, the same for forward,
  // backward-data and backward-filter (and the count ci/torch_reference.py uses).
  double flops() const;
  // "n64c64h56w56k64r3s3"; a stride other than 1 adds "u<stride>", a padding other than
  // r/2 (s/2) adds "p<pad>": conv1 of ResNet-50 is "n64c3h224w224k64r7s7u2".
  std::string name() const;
};

// The 23 distinct convolutions of torchvision's ResNet-50 (v1.5: stride on the 3x3 conv of
// a bottleneck) at the given batch, in network order.
std::vector<ConvShape> resnet50_convs(std::int64_t batch);

enum class ConvDir { fwd, bwd_data, bwd_filter };
enum class ConvLayout { nchw, nhwc };
// Every direction, in enum order: tables keyed by direction have one row per entry.
inline constexpr std::array<ConvDir, 3> kConvDirs{ConvDir::fwd, ConvDir::bwd_data, ConvDir::bwd_filter};

// The three tensors of a convolution: the input x (dx), the filter w (dw), the output y (dy).
enum class ConvTensor { x, w, y };
// What a direction does with them: the tensor it writes, and the operands (A, B) of
// conv_terms: (x, w) for fwd, (dy, w) for bwd_data, (dy, x) for bwd_filter.
struct ConvRoles {
  ConvTensor out, a, b;
};
ConvRoles conv_roles(ConvDir d);
// A tensor's logical NCHW extents (the filter's KCRS) and element count.
std::array<std::int64_t, 4> conv_dims(const ConvShape& s, ConvTensor t);
std::size_t conv_elems(const ConvShape& s, ConvTensor t);
// The strides, in elements, of a tensor with logical NCHW extents `dims` stored in layout
// l: NCHW (filters KCRS) or NHWC (filters KRSC, channels innermost).
std::array<std::int64_t, 4> conv_strides(ConvLayout l, const std::array<std::int64_t, 4>& dims);

std::string_view to_string(ConvDir d);
std::string_view to_string(ConvLayout l);
// The name's variant: "nchw", "nhwc", "nchw_bwd_data", "nhwc_bwd_filter", ...
std::string conv_variant(ConvLayout l, ConvDir d);
// "conv/<variant>/<dtype>/<shape>".
std::string conv_case_name(ConvLayout l, ConvDir d, DType t, const ConvShape& shape);

// cuDNN's legacy algorithm enums by value, for labels: fwd 0..7, bwd_data 0..5, bwd_filter
// 0..6 ("IMPLICIT_PRECOMP_GEMM", "ALGO_1", "WINOGRAD_NONFUSED", ...); "algo<i>" otherwise.
std::string conv_algo_name(ConvDir d, int algo);

// One result of cuDNN's Find (cudnnConvolution*AlgoPerf_t) in library-neutral terms.
struct ConvFound {
  int algo = -1;
  bool ran = false;         // status CUDNN_STATUS_SUCCESS
  std::string status;       // cuDNN's status text
  float time_ms = -1;       // cuDNN's own time for it
  std::size_t workspace = 0;
  int math = 0;             // cudnnMathType_t, carried to the choice
  bool tensor_op = false;   // a tensor-op math type (TF32 on float data)
};
// Find's results a case may time, in Find's order (fastest first), at most max_n: those that
// ran, with a non-negative time, a workspace within max_workspace and, for strict fp32, not
// on tensor cores (TF32).
std::vector<ConvFound> conv_usable(std::span<const ConvFound> found, DType t, std::size_t max_workspace,
                                   std::size_t max_n);
// " IMPLICIT_GEMM:CUDNN_STATUS_SUCCESS FFT:CUDNN_STATUS_NOT_SUPPORTED ...": every result, for
// the error when none is usable.
std::string conv_describe_found(std::span<const ConvFound> found, ConvDir d);
// The candidate with the lowest median time; a stalled candidate (infinite or NaN median) is
// left out, a tie goes to the earlier one. nullopt when every candidate stalled (or none).
std::optional<std::size_t> conv_fastest(std::span<const double> median_s);
// The finalists of a search: the candidates whose median is within `band` (a fraction: 0.06 is
// 6%) of the lowest, at most max_n of them (the fastest, ties to the earlier, when more are in
// the band), in candidate order. A stalled candidate (non-finite median) or a negative time is
// never one; empty when no candidate has a time. Throws std::invalid_argument on a negative
// or NaN band.
std::vector<std::size_t> conv_finalists(std::span<const double> median_s, double band, std::size_t max_n);
// The pick that holds still across processes: among the candidates within `band` of the
// lowest median (non-finite and negative ones left out), the earliest in candidate order, so
// two engines inside the noise give the same pick whichever read faster this time. `within`
// counts the candidates in the band (the pick among them). nullopt when no candidate has a
// time; std::invalid_argument on a negative or NaN band. With band 0, conv_fastest's pick.
struct ConvPick {
  std::size_t index = 0;
  std::size_t within = 0;
};
std::optional<ConvPick> conv_pick_in_band(std::span<const double> median_s, double band);

// Element counts of the NCHW tensors: x (n c h w), filter (k c r s), y (n k p q).
std::size_t conv_x_elems(const ConvShape& s);
std::size_t conv_w_elems(const ConvShape& s);
std::size_t conv_y_elems(const ConvShape& s);
// The tensor a direction writes (y, dx or dw) and its element count.
std::size_t conv_out_elems(const ConvShape& s, ConvDir d);

// One output element of a direction, all tensors in NCHW (filter KCRS) order, equals
// sum over the returned pairs of A[first] * B[second], where (A, B) is (x, w) for fwd,
// (dy, w) for bwd_data and (dy, x) for bwd_filter. `out_index` is the linear NCHW index of
// y, dx or dw. Terms that fall into the padding are left out.
std::vector<std::pair<std::size_t, std::size_t>> conv_terms(const ConvShape& s, ConvDir d,
                                                            std::size_t out_index);
// The longest reduction of any output element (C*R*S for fwd, K*ceil(R/u)*ceil(S/u) for
// bwd_data, N*P*Q for bwd_filter): what rounding error grows with.
std::size_t conv_reduction_length(const ConvShape& s, ConvDir d);

// How close a convolution result must be to the double reference: reduction_tolerance for
// the dtype, widened for what cuDNN's algorithms legitimately do besides a plain dot product
// (Winograd and FFT transforms rounded to fp32, or to the input type for fp16/bf16), yet
// tight enough that a TF32 kernel in the strict fp32 case fails.
Tolerance conv_tolerance(DType t, std::size_t reduction_length);

}  // namespace gpucheck
