// bench_conv's case model: the axes of a convolution and the suites as values of them. Pure.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/contract.hpp"
#include "gpucheck/core/conv_model.hpp"
#include "gpucheck/core/options.hpp"
#include "listing.hpp"

namespace gpucheck::conv {

struct ConvCase {
  ConvLayout layout;
  ConvDir dir;
  DType dtype;
  ConvShape shape;
  std::string name() const { return conv_case_name(layout, dir, dtype, shape); }
  Coordinates coordinates() const {
    const ConvShape& x = shape;
    const auto i = [](std::int64_t v) { return std::to_string(v); };
    return {{"direction", std::string(to_string(dir))}, {"dtype", std::string(to_string(dtype))},
            {"N", i(x.n)}, {"C", i(x.c)}, {"H", i(x.h)}, {"W", i(x.w)}, {"K", i(x.k)}, {"R", i(x.r)}, {"S", i(x.s)},
            {"stride", i(x.stride)}, {"padding", x.pad < 0 ? "same" : i(x.pad)}, {"layout", std::string(to_string(layout))}};
  }
};

// A shape as axis values (W, S and padding only where they do not follow H, R and R/2).
inline axes::Values shape_values(const ConvShape& x) {
  const auto i = [](std::int64_t v) { return std::to_string(v); };
  axes::Values v{{"N", i(x.n)}, {"C", i(x.c)}, {"H", i(x.h)}, {"K", i(x.k)}, {"R", i(x.r)}, {"stride", i(x.stride)}};
  if (x.w != x.h) v.push_back({"W", i(x.w)});
  if (x.s != x.r) v.push_back({"S", i(x.s)});
  if (x.pad >= 0) v.push_back({"padding", i(x.pad)});
  return v;
}

// The axes: W follows H, S follows R, padding is "same" (R/2, S/2) unless given; the layout
// is innermost, so a shape's NCHW and NHWC cases sit side by side. The suites: the three
// shapes ci/torch_reference.py times (its CONV_SHAPES), forward, in fp16 and tf32 (PyTorch's
// default fp32 convolution allows TF32: our tf32 is its counterpart); the full sweep of
// ResNet-50's layers. Acceptance and burn-in run other families.
inline axes::CaseModel model() {
  using axes::Kind;
  using enum Suite;
  std::vector<std::string> dirs;
  for (ConvDir d : kConvDirs) dirs.emplace_back(to_string(d));
  constexpr int kMax = 1 << 20;
  auto extent = [](std::string name, std::string help) {
    return axes::Axis{std::move(name), Kind::integer, std::move(help), {}, 1, kMax};
  };
  axes::Axis w = extent("W", "input width");
  w.follows = "H";
  axes::Axis s = extent("S", "filter width");
  s.follows = "R";
  axes::Axis pad{"padding", Kind::integer, "zero padding each side (default: same, R/2)", {}, 0, kMax, "R"};
  pad.follow = [](std::int64_t) { return std::int64_t{-1}; };  // ConvShape's "same"
  const axes::Values shape{{"N", "64"}, {"C", "64"}, {"H", "56"}, {"K", "64"}, {"R", "3"}, {"stride", "1"}};
  axes::SuiteAxes q{quick, {{"direction", "fwd"}, {"dtype", "fp16,tf32"}, {"layout", "nchw,nhwc"}}, {}};
  q.defaults.insert(q.defaults.end(), shape.begin(), shape.end());
  for (const ConvShape& x : resnet50_convs(64)) {
    const std::string n = x.name();
    if (n == "n64c64h56w56k64r3s3" || n == "n64c256h56w56k64r1s1" || n == "n64c128h28w28k128r3s3")
      q.sets.push_back(shape_values(x));
  }
  axes::SuiteAxes f{full, {{"direction", value_list(dirs)}, {"dtype", "fp32,tf32,fp16,bf16"}, {"layout", "nchw,nhwc"}}, {}};
  f.defaults.insert(f.defaults.end(), shape.begin(), shape.end());
  f.defaults[3].second = "64,256";  // N
  for (std::int64_t batch : {64, 256})
    for (const ConvShape& x : resnet50_convs(batch)) f.sets.push_back(shape_values(x));
  return {std::string(contract::family::conv),
          {{"direction", Kind::word, "forward, backward data, backward filter", dirs, 1, 1},
           {"dtype", Kind::dtype, "tensors (tf32: fp32 with TF32 math)", {"fp32", "tf32", "fp16", "bf16"}, 1, 1},
           extent("N", "batch"), extent("C", "input channels"), extent("H", "input height"), w,
           extent("K", "output channels"), extent("R", "filter height"), s, extent("stride", "both directions"), pad,
           {"layout", Kind::word, "tensor layout", {"nchw", "nhwc"}, 1, 1}},
          {q, f}};
}

// A suite's cases (or the user's points), in order.
inline std::vector<ConvCase> cases(Suite s, const std::vector<axes::Point>* user) {
  std::vector<ConvCase> out;
  for (const axes::Point& p : points_of(model(), s, user)) {
    ConvDir dir = ConvDir::fwd;
    for (ConvDir d : kConvDirs)
      if (to_string(d) == p.text("direction")) dir = d;
    const ConvShape shape{p.n("N"), p.n("C"), p.n("H"), p.n("W"), p.n("K"), p.n("R"), p.n("S"), p.n("stride"), p.n("padding")};
    out.push_back({p.text("layout") == "nhwc" ? ConvLayout::nhwc : ConvLayout::nchw, dir, *parse_dtype(p.text("dtype")), shape});
  }
  return out;
}

}  // namespace gpucheck::conv
