// Byte oracles (verify.hpp).
#include "postbox/collectives/verify.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "postbox/collectives/c3.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/runtime/check.hpp"
#include "plans_internal.hpp"

namespace postbox {
namespace {

std::uint8_t pattern(int rank, std::uint64_t i) {
  return static_cast<std::uint8_t>((static_cast<std::uint64_t>(rank) * 131 + i * 29 + 17) & 0xff);
}

std::uint8_t block_byte(int from, int to, std::uint64_t t) {
  return static_cast<std::uint8_t>(
      (static_cast<std::uint64_t>(from) * 131 + static_cast<std::uint64_t>(to) * 71 + (t % 256) * 29 + 17) & 0xff);
}

template <class W>
void sum_fn(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void*) {
  for (std::size_t i = 0; i < count; ++i) {
    W a, b;
    std::memcpy(&a, x + i * sizeof(W), sizeof(W));
    std::memcpy(&b, y + i * sizeof(W), sizeof(W));
    const W c = static_cast<W>(a + b);
    std::memcpy(out + i * sizeof(W), &c, sizeof(W));
  }
}

bool is_block_op(const std::string& op) {
  return op == "s2p" || is_c3_op(op);
}

}  // namespace

ReduceFn unsigned_sum(std::uint32_t elem_bytes) {
  switch (elem_bytes) {
    case 1: return {&sum_fn<std::uint8_t>, nullptr, 1, true};
    case 2: return {&sum_fn<std::uint16_t>, nullptr, 2, true};
    case 4: return {&sum_fn<std::uint32_t>, nullptr, 4, true};
    case 8: return {&sum_fn<std::uint64_t>, nullptr, 8, true};
    default: throw InputError("unsigned_sum: element size must be 1, 2, 4 or 8, got " + std::to_string(elem_bytes));
  }
}

std::string Mismatch::str() const {
  char text[96];
  std::snprintf(text, sizeof text, "rank %d byte %llu: expected 0x%02x, got 0x%02x", rank,
                static_cast<unsigned long long>(byte), want, got);
  return text;
}

bool Oracle::knows(const std::string& op) {
  return op == "bcast" || op == "reduce" || op == "allreduce" || op == "gather" || is_block_op(op);
}

void require_oracle(const std::string& op) {
  if (!Oracle::knows(op)) {
    throw InputError("no oracle for op '" + op +
                     "' (verification knows bcast, reduce, allreduce, gather, s2p, one-to-one, one-to-all, all-to-one, all-to-all)");
  }
}

Oracle::Oracle(const PlanRequest& req) : op_(req.op), p_(req.p), root_(req.root), bytes_(0) {
  require_oracle(op_);
  if (p_ < 1) throw InputError("p must be at least 1, got " + std::to_string(p_));
  if (req.bytes < 0 || req.bytes > kMaxPlanBytes) throw InputError("bytes must be in 0..1 GiB, got " + std::to_string(req.bytes));
  if (root_ < 0 || root_ >= p_) throw InputError("root " + std::to_string(root_) + " is outside 0.." + std::to_string(p_ - 1));
  bytes_ = static_cast<std::uint64_t>(req.bytes);
  combines_ = op_ == "reduce" || op_ == "allreduce";
  if (combines_) {
    sum_fn_ = unsigned_sum(req.elem_bytes);
    internal::require_elements(req);
    sum_.resize(bytes_);
    std::vector<std::byte> in(bytes_);
    for (int q = 0; q < p_; ++q) {
      for (std::uint64_t i = 0; i < bytes_; ++i) (q == 0 ? sum_ : in)[i] = static_cast<std::byte>(pattern(q, i));
      if (q > 0 && bytes_ > 0) sum_fn_.fn(sum_.data(), in.data(), sum_.data(), bytes_ / req.elem_bytes, nullptr);
    }
  }
  if (!is_block_op(op_)) return;
  // Blocks of `bytes_` bytes: who holds which (from, to) block before and after.
  const std::uint64_t L = bytes_;
  blocks_.resize(static_cast<std::size_t>(p_));
  auto add = [&](int rank, std::uint64_t offset, int from, int to, bool given, bool result) {
    blocks_[static_cast<std::size_t>(rank)].push_back({offset, from, to, given, result});
  };
  if (op_ == "s2p") {
    const std::vector<int> src = s2p_request_sources(req, s2p_request_mesh(req));
    for (int r = 0; r < p_; ++r)
      for (std::size_t k = 0; k < src.size(); ++k) add(r, k * L, src[k], static_cast<int>(k), src[k] == r, true);
  } else if (op_ == "one-to-one") {
    for (int i = 0; i < p_; ++i) {
      add(i, 0, i, one_to_one_destination(p_, i), true, false);
      add(one_to_one_destination(p_, i), L, i, one_to_one_destination(p_, i), false, true);
    }
  } else if (op_ == "one-to-all") {
    for (int j = 0; j < p_; ++j) {
      add(root_, static_cast<std::uint64_t>(j) * L, root_, j, true, j == root_);
      if (j != root_) add(j, 0, root_, j, false, true);
    }
  } else if (op_ == "all-to-one") {
    for (int j = 0; j < p_; ++j) {
      if (j != root_) add(j, 0, j, root_, true, false);
      add(root_, static_cast<std::uint64_t>(j) * L, j, root_, j == root_, true);
    }
  } else {  // all-to-all
    const auto P = static_cast<std::uint64_t>(p_);
    for (int i = 0; i < p_; ++i) {
      for (int j = 0; j < p_; ++j) {
        add(i, static_cast<std::uint64_t>(j) * L, i, j, true, false);
        add(j, P * L + static_cast<std::uint64_t>(i) * L, i, j, false, true);
      }
    }
  }
  for (auto& v : blocks_) std::sort(v.begin(), v.end(), [](const Block& a, const Block& b) { return a.offset < b.offset; });
}

std::uint64_t Oracle::buffer_bytes(int rank) const {
  PB_CHECK(rank >= 0 && rank < p_, "Oracle: rank " + std::to_string(rank) + " outside the team");
  if (!blocks_.empty()) {
    const auto& v = blocks_[static_cast<std::size_t>(rank)];
    return v.empty() ? 0 : (v.back().offset + bytes_);
  }
  if (op_ == "gather" && rank == root_) return bytes_ * static_cast<std::uint64_t>(p_);
  return bytes_;
}

std::uint8_t Oracle::input_byte(int rank, std::uint64_t i) const {
  if (op_ == "bcast") return rank == root_ ? pattern(root_, i) : static_cast<std::uint8_t>(~pattern(root_, i));
  if (op_ == "gather" && rank == root_) {
    const auto q = static_cast<int>(i / bytes_);
    const std::uint8_t v = pattern(q, i % bytes_);
    return q == root_ ? v : static_cast<std::uint8_t>(~v);
  }
  return pattern(rank, i);  // reduce, allreduce, gather at a non-root rank
}

std::optional<std::uint8_t> Oracle::result_byte(int rank, std::uint64_t i) const {
  if (op_ == "bcast") return pattern(root_, i);
  if (op_ == "gather") {
    if (rank != root_) return std::nullopt;
    return pattern(static_cast<int>(i / bytes_), i % bytes_);
  }
  if (op_ == "reduce" && rank != root_) return std::nullopt;  // partial results
  return static_cast<std::uint8_t>(sum_[i]);
}

void Oracle::fill(int rank, std::span<std::byte> buffer) const {
  PB_CHECK(buffer.size() == buffer_bytes(rank), "Oracle::fill: buffer of the op's size");
  if (!blocks_.empty()) {
    for (const Block& b : blocks_[static_cast<std::size_t>(rank)]) {
      for (std::uint64_t t = 0; t < bytes_; ++t) {
        const std::uint8_t v = block_byte(b.from, b.to, t);
        buffer[b.offset + t] = static_cast<std::byte>(b.given ? v : static_cast<std::uint8_t>(~v));
      }
    }
    return;
  }
  for (std::uint64_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<std::byte>(input_byte(rank, i));
}

std::optional<Mismatch> Oracle::check(int rank, std::span<const std::byte> buffer) const {
  PB_CHECK(buffer.size() >= buffer_bytes(rank), "Oracle::check: buffer smaller than the op's");
  auto at = [&](std::uint64_t i, std::uint8_t want) -> std::optional<Mismatch> {
    const auto got = static_cast<std::uint8_t>(buffer[i]);
    if (got == want) return std::nullopt;
    return Mismatch{rank, i, want, got};
  };
  if (!blocks_.empty()) {
    for (const Block& b : blocks_[static_cast<std::size_t>(rank)]) {
      if (!b.result) continue;
      for (std::uint64_t t = 0; t < bytes_; ++t)
        if (auto m = at(b.offset + t, block_byte(b.from, b.to, t))) return m;
    }
    return std::nullopt;
  }
  const std::uint64_t n = buffer_bytes(rank);
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto want = result_byte(rank, i);
    if (!want) return std::nullopt;  // a rank holds a result everywhere or nowhere
    if (auto m = at(i, *want)) return m;
  }
  return std::nullopt;
}

std::optional<std::string> Oracle::check_buffers(const Plan& plan) const {
  if (plan.op != op_ || plan.p != p_) {
    return "the plan is " + plan.op + " over " + std::to_string(plan.p) + " ranks, the request " + op_ + " over " +
           std::to_string(p_);
  }
  for (int r = 0; r < p_; ++r) {
    const std::uint64_t want = buffer_bytes(r), got = plan.user_bytes[static_cast<std::size_t>(r)];
    if (want != got) {
      return "rank " + std::to_string(r) + ": the plan's buffer is " + std::to_string(got) + " bytes, the op defines " +
             std::to_string(want);
    }
  }
  return std::nullopt;
}

}  // namespace postbox
