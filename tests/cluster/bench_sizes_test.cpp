// The size grammar of `postbox bench cluster --sizes` (bench/harness/cluster_bench.hpp):
// parse_byte_size's units, parse_sizes' ranges (OSU's doubling steps) and lists, and the
// refusals, each an InputError naming --sizes and quoting the text.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cluster_bench.hpp"
#include "postbox/runtime/check.hpp"

namespace pb = postbox::bench;
using Sizes = std::vector<std::int64_t>;

TEST(BenchSizes, UnitsArePowersOf1024InEitherCase) {
  EXPECT_EQ(pb::parse_byte_size("1", "--sizes"), 1);
  EXPECT_EQ(pb::parse_byte_size("8B", "--sizes"), 8);
  EXPECT_EQ(pb::parse_byte_size("8b", "--sizes"), 8);
  EXPECT_EQ(pb::parse_byte_size("64K", "--sizes"), 64 * 1024);
  EXPECT_EQ(pb::parse_byte_size("64KiB", "--sizes"), 64 * 1024);
  EXPECT_EQ(pb::parse_byte_size("64kib", "--sizes"), 64 * 1024);
  EXPECT_EQ(pb::parse_byte_size("4MiB", "--sizes"), 4 << 20);
  EXPECT_EQ(pb::parse_byte_size("4m", "--sizes"), 4 << 20);
  EXPECT_EQ(pb::parse_byte_size("1GiB", "--sizes"), std::int64_t{1} << 30);
}

TEST(BenchSizes, RangesDoubleFromLoUpToHi) {
  EXPECT_EQ(pb::parse_sizes("1:4MiB").size(), 23u);  // 1 B .. 4 MiB: OSU's default sweep
  EXPECT_EQ(pb::parse_sizes("1:4MiB").front(), 1);
  EXPECT_EQ(pb::parse_sizes("1:4MiB").back(), 4 << 20);
  EXPECT_EQ(pb::parse_sizes("3:20"), (Sizes{3, 6, 12}));  // HI need not be on a step
  EXPECT_EQ(pb::parse_sizes("8:8"), (Sizes{8}));
}

TEST(BenchSizes, ListsAreSortedAndEachSizeOnce) {
  EXPECT_EQ(pb::parse_sizes("64KiB,8,1K"), (Sizes{8, 1024, 65536}));
  EXPECT_EQ(pb::parse_sizes("4:16,8,1K"), (Sizes{4, 8, 16, 1024}));
}

TEST(BenchSizes, RefusalsNameTheOptionAndQuoteTheText) {
  const auto message = [](const std::string& text) {
    try {
      (void)pb::parse_sizes(text);
    } catch (const postbox::InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("4X"), "--sizes: '4X' is not a byte size (digits, then B, K, KiB, M, MiB, G or GiB)");
  EXPECT_EQ(message("K"), "--sizes: 'K' is not a byte size (digits, then B, K, KiB, M, MiB, G or GiB)");
  EXPECT_EQ(message("-8"), "--sizes: '-8' is not a byte size (digits, then B, K, KiB, M, MiB, G or GiB)");
  EXPECT_EQ(message(" 8"), "--sizes: ' 8' is not a byte size (digits, then B, K, KiB, M, MiB, G or GiB)");
  EXPECT_EQ(message("0"), "--sizes must be 1 B to 64 MiB each, got '0'");
  EXPECT_EQ(message("1:128MiB"), "--sizes must be 1 B to 64 MiB each, got '128MiB'");
  EXPECT_EQ(message("4K:1K"), "--sizes: the range '4K:1K' has LO above HI");
  EXPECT_EQ(message("1:2:3"), "--sizes: '1:2:3' is not a range LO:HI");
  EXPECT_NE(message("8,,16").find("--sizes"), std::string::npos);
  EXPECT_NE(message("99999999999999999999").find("--sizes"), std::string::npos);
  EXPECT_EQ(message("9999999999999G"), "--sizes: '9999999999999G' is too large");
  EXPECT_EQ(message("64MiB"), "accepted");
}

TEST(BenchSizes, SizeLabelsAndElements) {
  EXPECT_EQ(pb::size_label(1), "1 B");
  EXPECT_EQ(pb::size_label(1536), "1536 B");
  EXPECT_EQ(pb::size_label(65536), "64 KiB");
  EXPECT_EQ(pb::size_label(4 << 20), "4 MiB");
  EXPECT_STREQ(pb::sweep_element(4), "uint8");
  EXPECT_STREQ(pb::sweep_element(8), "double");
  EXPECT_STREQ(pb::sweep_element(12), "uint8");
}
