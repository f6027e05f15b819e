// bench_matmul's kernel naming without a GPU or CUPTI (benchmarks/kernel_name.hpp): CUPTI's
// kernel record read through our declaration, the names made one word the way PyTorch's
// profiler names compare (tests/unit/test_torch_reference.py checks the Python twin on the
// same names), and the kernel that names a call.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernel_name.hpp"

namespace gpucheck::kernel_name {
namespace {

CuptiKernelRecord kernel_record(std::uint32_t kind, const char* name, std::uint64_t start, std::uint64_t end) {
  CuptiKernelRecord r{};
  r.kind = kind;
  r.name = name;
  r.start = start;
  r.end = end;
  return r;
}

TEST(KernelName, ReadsKernelRecordsOnly) {
  const auto r = from_activity(kernel_record(kActivityConcurrentKernel, "nvjet_sm90_tst_192x192", 100, 350));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "nvjet_sm90_tst_192x192");
  EXPECT_EQ(r->start_ns, 100u);
  EXPECT_EQ(r->end_ns, 350u);
  EXPECT_TRUE(from_activity(kernel_record(kActivityKernel, "k", 0, 1)));
  EXPECT_FALSE(from_activity(kernel_record(1, "memcpy", 0, 1)));  // CUPTI_ACTIVITY_KIND_MEMCPY
  EXPECT_EQ(from_activity(kernel_record(kActivityKernel, nullptr, 0, 1))->name, "");
}

TEST(KernelName, DemanglesCppNamesAndKeepsPlainOnes) {
  EXPECT_EQ(demangle("_Z6kernelPfi"), "kernel(float*, int)");
  EXPECT_EQ(demangle("_ZN7cutlass7Kernel2I32cutlass_80_tensorop_bf16_128x128EEvNT_6ParamsE"),
            "void cutlass::Kernel2<cutlass_80_tensorop_bf16_128x128>(cutlass_80_tensorop_bf16_128x128::Params)");
  EXPECT_EQ(demangle("nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_TNN"), "nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_TNN");
  EXPECT_EQ(demangle("_Znot_a_name"), "_Znot_a_name");
  EXPECT_EQ(demangle("a"), "a");  // a type code to __cxa_demangle (signed char), not a kernel's name
}

TEST(KernelName, ShortNamesAreOneWordWithoutReturnTypeOrArguments) {
  EXPECT_EQ(short_name("void cutlass::Kernel2<cutlass_80_tensorop_bf16_128x128>(cutlass_80_tensorop_bf16_128x128::Params)"),
            "cutlass::Kernel2<cutlass_80_tensorop_bf16_128x128>");
  EXPECT_EQ(short_name("void gemv2T_kernel_val<int, int, __nv_bfloat16, float, 128, 16, 4, 4, false, false, "
                       "cublasGemvParamsEx<int, cublasGemvTensorStrided<__nv_bfloat16 const>, float> >"
                       "(cublasGemvParamsEx<int, cublasGemvTensorStrided<__nv_bfloat16 const>, float>, float, float)"),
            "gemv2T_kernel_val<int,int,__nv_bfloat16,float,128,16,4,4,false,false,cublasGemvParamsEx<int,"
            "cublasGemvTensorStrided<__nv_bfloat16const>,float>>");
  EXPECT_EQ(short_name("nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_TNN"), "nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_TNN");
  EXPECT_EQ(short_name("kernel(float*, int)"), "kernel");
  EXPECT_EQ(short_name("(anonymous namespace)::fill(float*, (anonymous namespace)::Args)"),
            "(anonymousnamespace)::fill");
  EXPECT_EQ(short_name("(unbalanced"), "(unbalanced");
}

TEST(KernelName, TheLongestKernelNamesTheCall) {
  EXPECT_FALSE(pick({}));
  // A split-K GEMM: the GEMM, then its reduction; the name is the GEMM's, two kernels.
  const std::vector<Record> split{{"_Z6kernelPfi", 0, 900}, {"splitKreduce_kernel", 1000, 1100}};
  const auto p = pick(split);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->name, "kernel");
  EXPECT_EQ(p->kernels, 2u);
  EXPECT_EQ(label(p), "kernel=kernel kernels=2");
  // Equal lengths: the first launched; a record whose end precedes its start counts as 0.
  EXPECT_EQ(pick({{"a", 0, 10}, {"b", 20, 30}, {"c", 50, 40}})->name, "a");
  EXPECT_EQ(pick({{"c", 50, 40}, {"b", 20, 30}})->name, "b");
  EXPECT_EQ(label(pick({{"nvjet_x", 5, 9}})), "kernel=nvjet_x");
  EXPECT_EQ(label(std::nullopt), "kernel=?");
  EXPECT_FALSE(pick({{"", 0, 10}}));  // a record without a name names nothing
}

TEST(KernelName, TheCallRunsOnceWithOrWithoutCupti) {
  // Without libcupti (this machine's CI), or with CUPTI held by a profiler, the call still runs:
  // bench_matmul verifies the output of the call it names.
  int calls = 0;
  std::string why;
  const auto records = kernel_name::trace([&] { ++calls; }, &why);
  EXPECT_EQ(calls, 1);
  if (!records) {
    EXPECT_FALSE(why.empty());
  }
  // A call that throws propagates, and CUPTI is left ready for the next trace.
  EXPECT_THROW(kernel_name::trace([&] { ++calls; throw std::runtime_error("call failed"); }, &why),
               std::runtime_error);
  EXPECT_EQ(calls, 2);
  (void)kernel_name::trace([&] { ++calls; }, &why);
  EXPECT_EQ(calls, 3);
}

}  // namespace

}  // namespace gpucheck::kernel_name
