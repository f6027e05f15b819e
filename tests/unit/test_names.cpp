#include <gtest/gtest.h>

#include <stdexcept>

#include "gpucheck/core/names.hpp"
#include "gpucheck/core/text.hpp"

namespace gpucheck {
namespace {

// Issue 35: an argument's escape sequence is shown escaped in an error line, never raw.
TEST(Text, VisibleTextEscapesControlAndBidiCharacters) {
  EXPECT_EQ(visible_text("dtype=bf16\x1b[31m"), "dtype=bf16\\x1b[31m");
  EXPECT_EQ(visible_text("a\tb\x7f"), "a\\x09b\\x7f");
  EXPECT_EQ(visible_text("x\xe2\x80\xaey"), "x\\u202ey");  // right-to-left override
  EXPECT_EQ(visible_text("\xc2\xb5s"), "\xc2\xb5s");        // µs stays as it is
  EXPECT_EQ(visible_text(""), "");
  EXPECT_EQ(visible_text("\xe2\x80"), "\xe2\x80");  // a cut UTF-8 sequence is not read past its end
  EXPECT_EQ(visible_text(visible_text("\x1b")), visible_text("\x1b"));  // escaping twice changes nothing
}

TEST(Text, VisibleExcerptCutsLongTextAtACharacter) {
  EXPECT_EQ(visible_excerpt("a\nb", 10), "a\\x0ab");
  EXPECT_EQ(visible_excerpt("abcdef", 6), "abcdef");
  EXPECT_EQ(visible_excerpt("abcdef", 3), "abc... (6 bytes)");
  EXPECT_EQ(visible_excerpt("a\xc2\xb5s", 2), "a... (4 bytes)");  // not inside the µ
  EXPECT_LT(visible_excerpt(std::string(1 << 20, 'x')).size(), 300u);
}

TEST(Text, TrimDropsAsciiWhitespaceAtBothEndsOnly) {
  EXPECT_EQ(trim("  x64 \r\n"), "x64");
  EXPECT_EQ(trim("\t\v\fa b\t"), "a b");
  EXPECT_EQ(trim("a"), "a");
  EXPECT_EQ(trim(" \n\r\t "), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("\xc2\xa0x"), "\xc2\xa0x");  // not ASCII whitespace: kept
}

TEST(Names, BuildsFamilyVariantDtypeShape) {
  EXPECT_EQ(bench_name({"matmul", "cublaslt", "bf16", shape_mnk(8192, 8192, 8192)}),
            "matmul/cublaslt/bf16/8192x8192x8192");
  EXPECT_EQ(bench_name({"pcie", "h2d", "pinned", bytes_label(256u << 20)}), "pcie/h2d/pinned/256MiB");
}

TEST(Names, RejectsPartsThatWouldChangeTheSplit) {
  EXPECT_THROW(bench_name({"matmul", "", "bf16"}), std::invalid_argument);
  EXPECT_THROW(bench_name({"matmul", "a/b", "bf16"}), std::invalid_argument);
  EXPECT_THROW(bench_name({"matmul", "a b", "bf16"}), std::invalid_argument);
  EXPECT_THROW(bench_name({}), std::invalid_argument);
}

TEST(Names, BytesLabelUsesTheLargestExactUnit) {
  EXPECT_EQ(bytes_label(0), "0B");
  EXPECT_EQ(bytes_label(8), "8B");
  EXPECT_EQ(bytes_label(1023), "1023B");
  EXPECT_EQ(bytes_label(1024), "1KiB");
  EXPECT_EQ(bytes_label(1536), "1536B");
  EXPECT_EQ(bytes_label(4096), "4KiB");
  EXPECT_EQ(bytes_label(3u << 20), "3MiB");
  EXPECT_EQ(bytes_label(std::uint64_t{1} << 30), "1GiB");
  EXPECT_EQ(bytes_label(std::uint64_t{8} << 30), "8GiB");
  EXPECT_EQ(bytes_label((std::uint64_t{1} << 30) + (512u << 20)), "1536MiB");
}

TEST(Names, BytesLabelParsesBack) {
  for (std::uint64_t b : {std::uint64_t{8}, std::uint64_t{1536}, std::uint64_t{4096}, std::uint64_t{256} << 20,
                          std::uint64_t{8} << 30}) {
    std::uint64_t back = 0;
    ASSERT_TRUE(parse_bytes_label(bytes_label(b), &back)) << bytes_label(b);
    EXPECT_EQ(back, b);
  }
  std::uint64_t x = 0;
  EXPECT_FALSE(parse_bytes_label("MiB", &x));
  EXPECT_FALSE(parse_bytes_label("12", &x));
  EXPECT_FALSE(parse_bytes_label("1.5GiB", &x));
  EXPECT_FALSE(parse_bytes_label("-1KiB", &x));
  EXPECT_FALSE(parse_bytes_label("99999999999999999999TiB", &x));
}

TEST(Names, Split) {
  auto p = split_name("nccl/allreduce/fp32/1GiB/g8");
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0], "nccl");
  EXPECT_EQ(p[4], "g8");
  EXPECT_EQ(split_name("solo").size(), 1u);
  EXPECT_EQ(split_name("a//b").size(), 3u);
}

TEST(Names, DottedLibraryVersions) {
  EXPECT_EQ(dotted_version(130100), "13.1.0");  // cuBLASLt
  EXPECT_EQ(dotted_version(91400), "9.14.0");   // cuDNN
  EXPECT_EQ(dotted_version(22803), "2.28.3");   // NCCL
  EXPECT_EQ(dotted_version(0), "0.0.0");
}

}  // namespace
}  // namespace gpucheck
