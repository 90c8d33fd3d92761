// The r×c mesh of ranks the s-to-p and C³ algorithms work on (row-major: rank = row·c + col).
#pragma once

#include <cstdint>

namespace postbox {

// The most ranks a mesh may have (frontend's parse_mesh refuses more; the s-to-p and C³ builders
// check a request's mesh against it too).
inline constexpr std::int64_t kMaxMeshRanks = 1'000'000;

struct Mesh {
  int rows = 1;
  int cols = 1;
  [[nodiscard]] int p() const { return rows * cols; }
  [[nodiscard]] int rank(int row, int col) const { return row * cols + col; }
};

}  // namespace postbox
