// The r×c mesh of ranks the s-to-p and C³ algorithms work on (row-major: rank = row·c + col).
#pragma once

#include <cstdint>
#include <string_view>

namespace postbox {

// The most ranks a mesh may have (Mesh::parse refuses more).
inline constexpr std::int64_t kMaxMeshRanks = 1'000'000;

struct Mesh {
  int rows = 1;
  int cols = 1;
  [[nodiscard]] int p() const { return rows * cols; }
  [[nodiscard]] int rank(int row, int col) const { return row * cols + col; }
  // "RxC", e.g. "10x10" (also "10X10"). Malformed, a side < 1 or more than a million ranks →
  // InputError naming the text.
  static Mesh parse(std::string_view text);
};

}  // namespace postbox
