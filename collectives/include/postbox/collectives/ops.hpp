// Collective operations on a Team's ranks, SPMD style: inside team.run(), every rank calls the
// same operation with the same root, size and algorithm (what differs is its own data). Each
// call runs a cached plan (plans.hpp) on the thread executor (runtime/executor.hpp): the first
// call with a given (team, op, algorithm, p, root, size) builds the plan and its scratch, later
// calls only execute it.
//
// Typed API over std::span<T> (T trivially copyable) and an untyped byte API with a ReduceFn.
//
// Operators: any associative operator works with the rank-ordered algorithms (reduce binomial,
// allreduce recursive-doubling and reduce-bcast): the result is d_0 ⊕ d_1 ⊕ … ⊕ d_{p−1} in rank
// order. The postal allreduce combines cyclic windows and needs a commutative operator: a
// non-commutative one is refused with InputError (thrown by every rank). A typed operator counts
// as commutative when it is std::plus, std::multiplies, std::bit_and/or/xor, postbox::Min,
// postbox::Max (any of them with <T> or <>), or wrapped in postbox::Commutative{op}.
//
// Buffers: broadcast, reduce and allreduce work in place on `data` (same size at every rank);
// after reduce, only the root's data is specified. gather: `mine` at every rank, `all`
// (p·mine.size() elements) only read at the root, where block i lands at offset i·mine.size().
//
// Errors: bad input (unknown algorithm, root outside 0..p−1, sizes that differ from the plan's
// or do not divide, a too-small mailbox ring for the plan) → InputError from every rank.
#pragma once

#include <cstddef>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "postbox/collectives/rational.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {

template <class T = void>
struct Min {
  constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <class T = void>
struct Max {
  constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

// Marks a user operator as commutative.
template <class F>
struct Commutative {
  F op;
  template <class T>
  constexpr T operator()(const T& a, const T& b) const {
    return op(a, b);
  }
};
template <class F>
Commutative(F) -> Commutative<F>;

template <class F>
struct is_commutative_op : std::false_type {};
template <class T>
struct is_commutative_op<std::plus<T>> : std::true_type {};
template <class T>
struct is_commutative_op<std::multiplies<T>> : std::true_type {};
template <class T>
struct is_commutative_op<std::bit_and<T>> : std::true_type {};
template <class T>
struct is_commutative_op<std::bit_or<T>> : std::true_type {};
template <class T>
struct is_commutative_op<std::bit_xor<T>> : std::true_type {};
template <class T>
struct is_commutative_op<Min<T>> : std::true_type {};
template <class T>
struct is_commutative_op<Max<T>> : std::true_type {};
template <class F>
struct is_commutative_op<Commutative<F>> : std::true_type {};

// ---- Untyped byte API -----------------------------------------------------------------------

// The executors these calls keep (for tests and diagnostics): one per (team, plan) used, a team
// counted by Team::id() (never by address, so a team made where a destroyed one lived gets its
// own), at most kPlanCacheEntries (plans.hpp; emptied when full, like the plan cache).
std::size_t cached_executor_count();

// shape "" = default_bcast_shape() (plans.hpp).
void broadcast_bytes(RankContext& ctx, int root, std::span<std::byte> data, const std::string& shape = "");
// data.size() must be a multiple of op.elem_bytes.
void reduce_bytes(RankContext& ctx, int root, std::span<std::byte> data, const ReduceFn& op,
                  const std::string& algo = "binomial");
void gather_bytes(RankContext& ctx, int root, std::span<const std::byte> mine, std::span<std::byte> all,
                  const std::string& algo = "binomial");
// algo "" = postal for a commutative op, recursive-doubling otherwise. lambda: for the postal
// algorithms (default: model_of() of plans.hpp).
void allreduce_bytes(RankContext& ctx, std::span<std::byte> data, const ReduceFn& op, const std::string& algo = "",
                     std::optional<Rational> lambda = std::nullopt);

// ---- Typed API ------------------------------------------------------------------------------

namespace internal {
template <class T, class F>
void typed_reduce(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void* state) {
  const F& f = *static_cast<const F*>(state);
  for (std::size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, x + i * sizeof(T), sizeof(T));
    std::memcpy(&b, y + i * sizeof(T), sizeof(T));
    const T c = f(a, b);
    std::memcpy(out + i * sizeof(T), &c, sizeof(T));
  }
}
template <class T, class F>
ReduceFn make_reduce_fn(const F& f) {
  static_assert(std::is_trivially_copyable_v<T>, "collectives move T as bytes");
  return ReduceFn{&typed_reduce<T, F>, &f, static_cast<std::uint32_t>(sizeof(T)), is_commutative_op<F>::value};
}
}  // namespace internal

template <class T>
void broadcast(RankContext& ctx, int root, std::span<T> data, const std::string& shape = "") {
  static_assert(std::is_trivially_copyable_v<T>, "collectives move T as bytes");
  broadcast_bytes(ctx, root, std::as_writable_bytes(data), shape);
}

template <class T, class F>
void reduce(RankContext& ctx, int root, std::span<T> data, const F& op, const std::string& algo = "binomial") {
  const ReduceFn fn = internal::make_reduce_fn<T>(op);
  reduce_bytes(ctx, root, std::as_writable_bytes(data), fn, algo);
}

template <class T>
void gather(RankContext& ctx, int root, std::span<const T> mine, std::span<T> all, const std::string& algo = "binomial") {
  static_assert(std::is_trivially_copyable_v<T>, "collectives move T as bytes");
  gather_bytes(ctx, root, std::as_bytes(mine), std::as_writable_bytes(all), algo);
}

template <class T, class F>
void allreduce(RankContext& ctx, std::span<T> data, const F& op, const std::string& algo = "",
               std::optional<Rational> lambda = std::nullopt) {
  const ReduceFn fn = internal::make_reduce_fn<T>(op);
  allreduce_bytes(ctx, std::as_writable_bytes(data), fn, algo, lambda);
}

}  // namespace postbox
