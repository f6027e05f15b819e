// bench_conv's table: one row per convolution case with the suites it belongs to. Pure.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/axes.hpp"
#include "gpucheck/core/conv_model.hpp"
#include "gpucheck/core/options.hpp"
#include "listing.hpp"

namespace gpucheck::conv {

struct ConvCase {
  ConvLayout layout;
  ConvDir dir;
  DType dtype;
  ConvShape shape;
  Suites suites;
  std::string name() const { return conv_case_name(layout, dir, dtype, shape); }
  Coordinates coordinates() const {
    const ConvShape& x = shape;
    const auto i = [](std::int64_t v) { return std::to_string(v); };
    return {{"direction", std::string(to_string(dir))}, {"dtype", std::string(to_string(dtype))},
            {"N", i(x.n)}, {"C", i(x.c)}, {"H", i(x.h)}, {"W", i(x.w)}, {"K", i(x.k)}, {"R", i(x.r)}, {"S", i(x.s)},
            {"stride", i(x.stride)}, {"padding", x.pad < 0 ? "same" : i(x.pad)}, {"layout", std::string(to_string(layout))}};
  }
};

inline std::vector<ConvCase> rows() {
  using enum Suite;
  const std::array<ConvLayout, 2> layouts{ConvLayout::nchw, ConvLayout::nhwc};
  std::vector<ConvCase> r;
  // The three shapes torch_anchors.py measures, forward, in the anchors' dtypes (its fp32
  // runs with TF32 allowed, so our tf32 is its counterpart).
  for (const ConvShape& shape : resnet50_convs(64)) {
    const std::string n = shape.name();
    if (n != "n64c64h56w56k64r3s3" && n != "n64c256h56w56k64r1s1" && n != "n64c128h28w28k128r3s3") continue;
    for (DType t : {DType::fp16, DType::tf32})
      for (ConvLayout l : layouts) r.push_back({l, ConvDir::fwd, t, shape, {quick}});
  }
  for (std::int64_t batch : {64, 256})
    for (const ConvShape& shape : resnet50_convs(batch))
      for (ConvDir dir : kConvDirs)
        for (DType t : {DType::fp32, DType::tf32, DType::fp16, DType::bf16})
          for (ConvLayout l : layouts) r.push_back({l, dir, t, shape, {full}});
  return r;  // acceptance and burn-in run other families
}

// The axes --axis sets: W follows H, S follows R, padding is "same" (R/2, S/2) unless given;
// the layout is innermost, so a shape's NCHW and NHWC cases sit side by side.
inline std::vector<axes::Axis> axis_table() {
  using axes::Kind;
  std::vector<std::string> dirs;
  for (ConvDir d : kConvDirs) dirs.emplace_back(to_string(d));
  constexpr int kMax = 1 << 20;
  auto extent = [](std::string name, std::string help, std::string quick, std::string full) {
    return axes::Axis{std::move(name), Kind::integer, std::move(help), {}, 1, kMax, std::move(quick), std::move(full)};
  };
  axes::Axis w = extent("W", "input width", "", "");
  w.follows = "H";
  axes::Axis s = extent("S", "filter width", "", "");
  s.follows = "R";
  axes::Axis pad{"padding", Kind::integer, "zero padding each side (default: same, R/2)", {}, 0, kMax, "", "", "R"};
  pad.follow = [](std::int64_t) { return std::int64_t{-1}; };  // ConvShape's "same"
  return {
      {"direction", Kind::word, "forward, backward data, backward filter", dirs, 1, 1, "fwd", "fwd,bwd_data,bwd_filter"},
      {"dtype", Kind::dtype, "tensors (tf32: fp32 with TF32 math)", {"fp32", "tf32", "fp16", "bf16"}, 1, 1, "fp16,tf32",
       "fp32,tf32,fp16,bf16"},
      extent("N", "batch", "64", "64,256"),
      extent("C", "input channels", "64", "64"),
      extent("H", "input height", "56", "56"),
      w,
      extent("K", "output channels", "64", "64"),
      extent("R", "filter height", "3", "3"),
      s,
      extent("stride", "both directions", "1", "1"),
      pad,
      {"layout", Kind::word, "tensor layout", {"nchw", "nhwc"}, 1, 1, "nchw,nhwc", "nchw,nhwc"},
  };
}

// A suite's rows, or the axes' points.
inline std::vector<ConvCase> cases(Suite s, const std::vector<axes::Point>* points) {
  if (!points) return in_suite(rows(), s);
  std::vector<ConvCase> out;
  for (const axes::Point& p : *points) {
    ConvDir dir = ConvDir::fwd;
    for (ConvDir d : kConvDirs)
      if (to_string(d) == p.text("direction")) dir = d;
    const ConvShape shape{p.n("N"), p.n("C"), p.n("H"), p.n("W"), p.n("K"), p.n("R"), p.n("S"), p.n("stride"), p.n("padding")};
    out.push_back({p.text("layout") == "nhwc" ? ConvLayout::nhwc : ConvLayout::nchw, dir, *parse_dtype(p.text("dtype")),
                   shape, {s}});
  }
  return out;
}

}  // namespace gpucheck::conv
