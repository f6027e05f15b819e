// The accept suites' case names, built from their parts (names.hpp lists what they are).
#include "accept/names.hpp"

namespace gpucheck::compare::accept_names {

std::string pcie(std::string_view dir) { return "pcie/" + std::string(dir) + "/pinned/256MiB"; }
std::string memory(std::string_view variant) { return "memory/" + std::string(variant) + "/u8/2GiB"; }
std::string_view gemm_dtype(std::string_view key) { return key == "fp8" ? "fp8e4m3" : key; }
std::string gemm(std::string_view key) { return "matmul/cublaslt/" + std::string(gemm_dtype(key)) + "/8192x8192x8192"; }

}  // namespace gpucheck::compare::accept_names
