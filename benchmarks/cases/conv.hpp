// bench_conv's table: one row per convolution case with the suites it belongs to. Pure.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpucheck/core/conv_model.hpp"
#include "gpucheck/core/options.hpp"

namespace gpucheck::conv {

struct ConvCase {
  ConvLayout layout;
  ConvDir dir;
  DType dtype;
  ConvShape shape;
  Suites suites;
  std::string name() const { return conv_case_name(layout, dir, dtype, shape); }
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

}  // namespace gpucheck::conv
