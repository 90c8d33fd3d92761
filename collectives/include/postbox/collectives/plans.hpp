// Plan builders: every collective algorithm written once, as a Plan (runtime/plan.hpp), then run
// by the thread executor, the emulator, or exported (GOAL/JSON/DOT). A registry maps (op, algo)
// to a builder, so other areas register their operations into the same table (s2p, C³ ...).
//
// Built in: (see docs/plans.md for each plan's buffers and order)
//   bcast      flat, binary, kary:K, binomial, lambda[:ALPHA], greedy, fibo, hier[:S1,...]
//              (the tree shapes of tree.hpp; the model comes from the request, see model_of();
//              hier from the request's hier_levels when given, with their per-level figures).
//   reduce     binomial: recursive halving over rank intervals, rank-ordered combine, so any
//              associative operator works (commutativity not needed), for any root.
//   gather     binomial: the same intervals; rank i's block lands at offset i·bytes at the root.
//   allreduce  postal: Bruck §3 / Bar-Noy–Kipnis–Schieber with deficiency ε for any n, integer
//              λ directly; for non-integer λ the faster (by T'_λ vs T''_λ) of
//              postal-delay-recv (λ treated as ⌈λ⌉) and postal-delay-send (λ scaled to ⌊λ⌋).
//              Needs a commutative operator (windows wrap around rank p−1).
//              recursive-doubling: rank-ordered (any associative operator), any p.
//              reduce-bcast: binomial reduce to 0, then binomial broadcast (any associative op).
//   s2p        br-lin, br-xy-source, br-xy-dim, xor, 2-step, repos-lin, repos-xy-source,
//              part-lin, part-xy-source (s2p.hpp; the request's mesh and sources).
//   one-to-one, one-to-all, all-to-one, all-to-all   the C³ routing algorithms of c3.hpp (the request's mesh).
//   barrier    central, dissemination, combine, mcs, tournament, fibo, hier: the barrier's
//              arrival and wake-up as messages, built from barrier_shape() (barrier_shape.hpp)
//              for the request's model; hier on the request's hier_levels, else its topology and
//              placement (null: the machine, compact). Rootless (plan.root = −1; trees complete at rank 0).
//
// Buffers (Plan::user_bytes): bcast, reduce, allreduce: `bytes` at every rank (in place; after
// reduce the non-root buffers hold partial results). gather: p·bytes at the root, `bytes`
// elsewhere (the rank's own block; read only). barrier: every message carries `bytes` (0: a
// pure notification) from user[0, bytes); scratch holds one slot per received signal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "postbox/collectives/mesh.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/runtime/plan.hpp"

namespace postbox {

class Topology;

struct PlanRequest {
  std::string op;    // "bcast", "reduce", "gather", "allreduce", ...
  std::string algo;  // a registered name; "kary:4", "lambda:0.4", "hier:fibo,binomial" carry a parameter
  int p = 1;
  std::int64_t bytes = 0;        // per-rank contribution; signed so that a negative value is refused
  int root = 0;                  // ignored (plan.root = -1) by rootless ops such as allreduce and barrier
  std::uint32_t elem_bytes = 1;  // reduce granularity; bytes must be a multiple where ops combine
  std::optional<Rational> lambda;  // postal latency λ >= 1 (exclusive with model)
  std::optional<SendRecv> model;   // send and receive latency (λ = 1 + r/s)
  // s2p and the C³ ops (op_takes_mesh): the ranks' mesh, rows·cols = p; none: the mesh closest
  // to square (near_square_mesh).
  std::optional<Mesh> mesh;
  // s2p: the source ranks in source order (distinct, inside the mesh); empty: one source, the
  // "equal" distribution's (s2p.hpp: s2p_request_sources).
  std::vector<int> sources;
  // For hier: the topology and rank → PU placement (null: the machine, compact placement).
  const Topology* topology = nullptr;
  const std::vector<int>* placement = nullptr;
  // For hier: explicit classes and per-level figures (tree.hpp: HierLevels; a job across
  // processes), used instead of topology and placement. Groups of a size other than p → PB_CHECK.
  std::shared_ptr<const HierLevels> hier_levels;
};

using PlanBuilder = std::function<Plan(const PlanRequest&)>;

struct PlanBuilderInfo {
  std::string op;
  std::string algo;  // as listed, e.g. "kary:K"; the part before ':' is the registry key
  std::string description;
};

// Registers a builder for (op, algo). algo "name:PARAM" registers the family "name", matched by
// any "name" or "name:..." request (the builder parses the parameter). Re-registering a key
// replaces it. Thread-safe.
void register_plan_builder(const std::string& op, const std::string& algo, const std::string& description,
                           PlanBuilder builder);
// Every registered builder, sorted by (op, algo).
std::vector<PlanBuilderInfo> list_plan_builders();

// InputError "unknown op 'X' (known: ...)", or FieldError "unknown algo 'Y' for op X (known: ...)" unless
// a builder is registered for (op, algo); build_plan() checks this first.
void check_plan_known(const std::string& op, const std::string& algo);

// Whether op has a root (false for allreduce, s2p, all-to-all, one-to-one and barrier).
bool op_has_root(const std::string& op);

// The ops whose builders read PlanRequest::mesh (s2p and the C³ ops).
bool op_takes_mesh(const std::string& op);

// InputError unless bytes is a whole number of elem_bytes elements where the op combines
// (reduce, allreduce); build_plan() checks it too.
void check_elements(const PlanRequest& request);

// Largest PlanRequest::bytes build_plan() accepts (1 GiB, the mailboxes' largest message).
inline constexpr std::int64_t kMaxPlanBytes = std::int64_t{1} << 30;

// An upper bound on the messages of the plan a request asks for, from the op's definition
// before anything is built: trees about p, round-based algorithms p·(⌈log2 p⌉ + 2), s2p xor
// and C³ 1-lev all-to-all p·(p − 1); 0 for ops registered elsewhere (no estimate).
std::uint64_t plan_message_bound(const PlanRequest& request);
// Memory a plan takes per message once built: a send and a receive at the 88 bytes a finished
// op needs (PlanDraft, runtime/src/plan.cpp).
inline constexpr std::uint64_t kPlanBytesPerMessage = 2 * 88;
// InputError (limits.hpp: require_memory) when plan_message_bound() messages would need more
// memory than is available; build_plan() calls it before building.
void check_plan_memory(const PlanRequest& request);
// The problem when the plan of a request would send a message above kMaxPlanBytes, e.g.
// "gather/binomial would send a message of 2147483648 bytes (2 blocks of 1073741824 bytes); the
// largest message is 1 GiB (1073741824 bytes)"; nullopt when every message fits. Found before
// anything is built, from the op: a gather forwards a subtree's blocks (interval tree, at most
// ⌈p/2⌉), s2p and the C³ ops combine blocks along their schedule (computed only where bytes times
// the op's blocks could pass the limit); every other op sends at most bytes at once.
// build_plan() refuses such a request (InputError) before it calls the builder, and
// select_plan() before anything is built, naming --bytes. (build_s2p_plan() and
// build_c3_plan() themselves do not: the C³ unit calculator prices plans that never run.)
std::optional<std::string> oversized_message(const PlanRequest& request);

// Checks the request (InputError naming the problem: unknown op or algo, p < 1 or > 2^30, a p
// whose plan cannot fit in the memory available, root outside 0..p−1, negative bytes or more
// than kMaxPlanBytes, bytes not a multiple of elem_bytes where the op combines, both lambda and
// model, a message above kMaxPlanBytes: oversized_message()) and builds the plan. The result
// passes validate(); a builder that returns an invalid plan is a bug (PB_CHECK).
Plan build_plan(const PlanRequest& request);

// build_plan() through a cache keyed by (op, algo, p, root, bytes, elem_bytes, model, mesh, sources,
// topology, placement): a repeated request costs a look-up. The topology counts by its id()
// and the placement by its contents, never by address, so a topology or vector made where an
// old one lived does not get the old one's plan. At most kPlanCacheEntries plans (emptied when
// full). Thread-safe; plans are immutable.
inline constexpr std::size_t kPlanCacheEntries = 512;
std::shared_ptr<const Plan> cached_plan(const PlanRequest& request);

// The latency model a request means: model, else SendRecv::from_lambda(lambda), else
// env_latency(), else s = 1, r = 1 (λ = 2).
SendRecv model_of(const PlanRequest& request);

// s and r from POSTBOX_S_NS and POSTBOX_R_NS (both set: nanoseconds, s > 0, r >= 0), until
// calibration provides calibrated_latency(). Malformed → InputError naming the variable.
std::optional<SendRecv> env_latency();

// The broadcast shape used when none is named: greedy (optimal for the model) when s and r are
// known (env_latency()), binomial otherwise.
std::string default_bcast_shape();

// The integer latency the postal allreduce runs with for λ: λ itself when integral; else ⌈λ⌉
// (delay-receive) or ⌊λ⌋ (delay-send), whichever has the smaller exact time T'_λ(n), T''_λ(n)
// (postal.hpp; a tie goes to delay-receive).
struct PostalChoice {
  std::int64_t L = 1;
  std::string variant;  // "integer", "delay-recv", "delay-send"
};
PostalChoice choose_postal(const Rational& lambda, std::int64_t n);

// The deficiency schedule of the postal allreduce for n ranks and integer latency L (docs/global-combine.md):
// t rounds; N[r] = N_{L,ε}(r) for r = 0..t; eps[k] for k = 0..t−L (empty when t < L).
struct PostalSchedule {
  std::int64_t L = 1;
  std::int64_t t = 0;
  std::vector<std::int64_t> N;
  std::vector<int> eps;
};
PostalSchedule postal_schedule(std::int64_t n, std::int64_t L);

}  // namespace postbox
