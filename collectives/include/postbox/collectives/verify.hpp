// Byte oracles: what each rank's user buffer holds before a collective and must hold after it,
// computed from the op's definition (plans.hpp, s2p.hpp, c3.hpp) and the request, never from a
// plan, so a wrong plan cannot agree with its own oracle. `postbox run --verify`, the tests and
// library users share them.
//
// Inputs name their origin: byte i of rank r's contribution is (131·r + 29·i + 17) mod 256; a
// block from rank f for rank t holds (131·f + 71·t + 29·(i mod 256) + 17) mod 256. Every byte
// the op does not define as input holds the complement of what the result puts there, so a
// missed or misplaced receive shows in every byte. Results, per op:
//   bcast       every rank: the root's bytes
//   reduce      the root: the element-wise unsigned wrapping sum (unsigned_sum()) of every input
//   allreduce   every rank: that sum
//   gather      the root: rank q's bytes at q·bytes
//   s2p         every rank: source k's message at k·bytes; the sources are the request's
//               (s2p_request_sources(): PlanRequest::sources, which select_plan() resolves
//               from --sources/--dist/--seed/--source-list, else the one "equal" source)
//   one-to-one  rank j: the block from one_to_one_source(p, j) (c3.hpp) at L
//   one-to-all  rank j ≠ root: the root's block for j at 0 (the root keeps its own at root·L)
//   all-to-one  the root: rank j's block at j·L
//   all-to-all  rank j: the block from rank i at p·L + i·L
// Buffer sizes come from the same definitions (buffer_bytes()).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/executor.hpp"

namespace postbox {

// The unsigned wrapping sum of elem_bytes-byte elements (1, 2, 4 or 8; else InputError):
// commutative, so every allreduce algorithm may use it.
ReduceFn unsigned_sum(std::uint32_t elem_bytes);

struct Mismatch {
  int rank = 0;
  std::uint64_t byte = 0;  // offset in the rank's user buffer
  unsigned want = 0, got = 0;
  // "rank 3 byte 17: expected 0x2c, got 0xd3"
  [[nodiscard]] std::string str() const;
};

// InputError unless Oracle knows op (the message lists the ops it knows).
void require_oracle(const std::string& op);

class Oracle {
 public:
  // Ops: bcast, reduce, allreduce, gather, s2p, one-to-one, one-to-all, all-to-one, all-to-all (knows());
  // any other, or a request select_plan() would refuse, → InputError.
  explicit Oracle(const PlanRequest& request);
  static bool knows(const std::string& op);

  [[nodiscard]] int p() const noexcept { return p_; }
  [[nodiscard]] const std::string& op() const noexcept { return op_; }
  // The op's buffer contract for rank (0 <= rank < p, else PB_CHECK).
  [[nodiscard]] std::uint64_t buffer_bytes(int rank) const;
  // Writes rank's input; buffer holds buffer_bytes(rank) bytes (PB_CHECK).
  void fill(int rank, std::span<std::byte> buffer) const;
  // The first byte of rank's buffer that differs from the op's result, or nullopt.
  [[nodiscard]] std::optional<Mismatch> check(int rank, std::span<const std::byte> buffer) const;
  // The plan's user buffers against the definition: "rank R: the plan's buffer is X bytes, the
  // op defines Y", or nullopt. A plan for another op or p is reported the same way.
  [[nodiscard]] std::optional<std::string> check_buffers(const Plan& plan) const;
  // The operator the results are computed with (reduce and allreduce), else null.
  [[nodiscard]] const ReduceFn* reduce() const noexcept { return combines_ ? &sum_fn_ : nullptr; }

 private:
  struct Block {
    std::uint64_t offset;
    int from, to;
    bool given, result;
  };
  std::optional<std::uint8_t> result_byte(int rank, std::uint64_t offset) const;
  std::uint8_t input_byte(int rank, std::uint64_t offset) const;

  std::string op_;
  int p_ = 0;
  int root_ = 0;
  std::uint64_t bytes_ = 0;
  bool combines_ = false;
  ReduceFn sum_fn_{};
  std::vector<std::byte> sum_;             // reduce/allreduce: the expected result
  std::vector<std::vector<Block>> blocks_;  // s2p and C³ ops: per rank, by offset
};

}  // namespace postbox
