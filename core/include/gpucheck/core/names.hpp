// Benchmark names are the keys of every baseline: `family/variant/dtype/shape[/extra]`.
// Building them in one place keeps them stable and readable.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

// Joins non-empty parts with '/'; throws std::invalid_argument on an empty part or one that
// contains '/' or whitespace (it would change how the name splits).
std::string bench_name(std::initializer_list<std::string_view> parts);

// "8192x8192x8192".
std::string shape_mnk(std::int64_t m, std::int64_t n, std::int64_t k);

// Exact binary size label: 8B, 4KiB, 256MiB, 1GiB; sizes that are not a whole number of the
// largest fitting unit fall back to the next smaller unit (1536 -> "1536B", 3 MiB -> "3MiB").
std::string bytes_label(std::uint64_t bytes);

// Inverse of bytes_label; returns false on anything it did not write.
bool parse_bytes_label(std::string_view s, std::uint64_t* bytes);

// A library version encoded as major*10000 + minor*100 + patch (cuBLAS 130100, cuDNN 91400,
// NCCL 22803) as "13.1.0", "9.14.0", "2.28.3".
std::string dotted_version(std::uint64_t encoded);

// Splits a name at '/'.
std::vector<std::string> split_name(std::string_view name);

}  // namespace gpucheck
