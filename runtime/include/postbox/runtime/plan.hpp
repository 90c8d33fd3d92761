// A plan: the single description of who sends what to whom, in which order. It is the
// runtime's instruction set (docs/architecture.md, docs/plans.md): collectives/ builds plans
// from trees and algorithms; the thread executor runs them on a Team, the emulator runs them in
// virtual time, the exporters write GOAL/JSON/DOT. Each collective is written once, as a plan
// builder. The barriers also have an engine of their own (barrier/) that does not run plans; it
// and the barrier plans take their structure from barrier_shape() (collectives), whose header
// names the parts still derived elsewhere.
//
// Per rank, a program of operations over regions of that rank's buffers:
//   send(peer, region)       region's bytes go to peer (send-and-forget)
//   recv(peer, region)       the next message from peer lands in region
//   reduce(dst, src)         dst = dst ⊕ src element-wise (or src ⊕ dst, see Op::src_first),
//                            with the user's operator, elements of Plan::elem_bytes bytes
//   copy(dst, src)           memcpy within the rank
// Ordering: op j may start once every op in its deps has completed. Ops without a dependency
// between them may run in any order, so receives that may complete in any order are allowed.
// Matching rule: for each ordered pair (a, b), the k-th send from a to b in a's program order
// matches the k-th recv from a in b's program order; executors keep sends to one peer, and
// receives from one peer, in program order. `tag` is that k (sequence per pair), kept for GOAL.
//
// Storage is compact (ops of all ranks in flat arrays, regions interned, deps in one array), so a
// plan over 10^7 ranks fits in memory: a broadcast costs about 60 bytes per rank. Builders append
// ops through PlanDraft (any rank order); hand-made plans are given whole with set_programs();
// readers walk ops(r), which yields OpView values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace postbox {

enum class Buffer : std::uint8_t {
  user = 0,     // the caller's buffer at this rank (its size is Plan::user_bytes[rank])
  scratch = 1,  // plan-owned scratch space (Plan::scratch_bytes[rank] bytes)
};

struct Region {
  Buffer buffer = Buffer::user;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  friend bool operator==(const Region&, const Region&) = default;
};

struct RegionHash {
  std::size_t operator()(const Region& g) const noexcept;
};

enum class OpCode : std::uint8_t { send, recv, reduce, copy };

// "send", "recv", "reduce", "copy".
const char* to_string(OpCode code) noexcept;

// Bruck §3's idle rules for a schedule built in rounds for an integer latency L (the postal
// global combine for non-integer λ). An op with round r >= 1: a send starts no earlier than the
// start of round r, a receive completes no earlier than the end of round r; rounds are σ long,
// σ = t0 (delay_receive: each receive idles to ⌈λ⌉ sends) or σ = t0·λ/L (delay_send: each send
// idles to λ/⌊λ⌋ sends), t0 and λ the machine's. Only the emulator charges the idles
// (docs/emulator.md); the thread executor runs such plans as fast as it can.
enum class Pacing : std::uint8_t { none, delay_receive, delay_send };

// "none", "delay-receive", "delay-send".
const char* to_string(Pacing pacing) noexcept;

// One operation as a builder writes it, and as programs() gives it back.
struct Op {
  OpCode code = OpCode::send;
  int peer = -1;        // send: destination; recv: source; reduce/copy: -1
  Region a;             // send: source bytes; recv: destination; reduce/copy: destination
  Region b;             // reduce/copy: source (unused for send/recv)
  bool src_first = false;  // reduce: dst = b ⊕ a instead of a ⊕ b (for non-commutative ops)
  std::uint32_t tag = 0;   // per (sender, receiver) sequence number; filled by Plan::finalize()
  std::vector<std::uint32_t> deps;  // indices of earlier ops of the same rank
  std::uint32_t round = 0;  // Pacing round (>= 1), or 0 for none
};

struct RankProgram {
  std::vector<Op> ops;
};

// One stored operation as read back: Op's fields, deps as a view into the plan.
struct OpView {
  OpCode code = OpCode::send;
  int peer = -1;
  Region a;
  Region b;
  bool src_first = false;
  std::uint32_t tag = 0;
  std::uint32_t round = 0;
  std::span<const std::uint32_t> deps;
};

class Plan;

// Rank r's ops in program order: a view, valid while the plan lives and is not changed.
class RankOps {
 public:
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = OpView;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = OpView;
    iterator() = default;
    iterator(const Plan* plan, std::uint32_t g) : plan_(plan), g_(g) {}
    OpView operator*() const;
    OpView operator[](difference_type n) const { return *(*this + n); }
    iterator& operator++() { ++g_; return *this; }
    iterator operator++(int) { iterator t = *this; ++g_; return t; }
    iterator& operator--() { --g_; return *this; }
    iterator operator--(int) { iterator t = *this; --g_; return t; }
    iterator& operator+=(difference_type n) { g_ = static_cast<std::uint32_t>(g_ + n); return *this; }
    iterator& operator-=(difference_type n) { return *this += -n; }
    friend iterator operator+(iterator it, difference_type n) { return it += n; }
    friend iterator operator+(difference_type n, iterator it) { return it += n; }
    friend iterator operator-(iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const iterator& x, const iterator& y) {
      return static_cast<difference_type>(x.g_) - static_cast<difference_type>(y.g_);
    }
    friend bool operator==(const iterator& x, const iterator& y) { return x.g_ == y.g_; }
    friend auto operator<=>(const iterator& x, const iterator& y) { return x.g_ <=> y.g_; }

   private:
    const Plan* plan_ = nullptr;
    std::uint32_t g_ = 0;
  };
  RankOps(const Plan* plan, std::uint32_t first, std::uint32_t count) : plan_(plan), first_(first), n_(count) {}
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
  [[nodiscard]] OpView operator[](std::size_t j) const;
  [[nodiscard]] iterator begin() const { return {plan_, first_}; }
  [[nodiscard]] iterator end() const { return {plan_, first_ + n_}; }

 private:
  const Plan* plan_;
  std::uint32_t first_;
  std::uint32_t n_;
};

class Plan {
 public:
  std::string op;    // "bcast", "reduce", "gather", "allreduce", "s2p", ...
  std::string algo;  // "binomial", "postal", ...
  int p = 0;
  int root = -1;     // -1 when the operation has no root
  std::uint64_t bytes = 0;      // the operation's message size (per rank contribution)
  std::uint32_t elem_bytes = 1; // reduce granularity
  bool needs_commutative = false;  // the reduce order depends on arrival order
  Pacing pacing = Pacing::none;    // how Op::round is charged (see Pacing)
  std::uint32_t pacing_latency = 0;  // the integer L the rounds were built for (pacing != none)
  std::vector<std::uint64_t> user_bytes;     // per rank
  std::vector<std::uint64_t> scratch_bytes;  // per rank

  // Rank r's program, 0 <= r < rank_count().
  [[nodiscard]] RankOps ops(int r) const;
  // Rank programs stored (validate() checks that it equals p).
  [[nodiscard]] int rank_count() const noexcept { return static_cast<int>(first_.size()) - 1; }
  // Ops of all ranks; rank r's op j is number first_op(r) + j of them (first_op(rank_count())
  // is op_count()).
  [[nodiscard]] std::uint32_t op_count() const noexcept { return static_cast<std::uint32_t>(recs_.size()); }
  [[nodiscard]] std::uint32_t first_op(int r) const { return first_[static_cast<std::size_t>(r)]; }
  [[nodiscard]] OpView op_at(std::uint32_t global) const;
  // Single fields of op `global`, without building an OpView (hot loops over 10^7 ops).
  [[nodiscard]] OpCode code_at(std::uint32_t global) const { return recs_[global].code; }
  [[nodiscard]] int peer_at(std::uint32_t global) const { return recs_[global].peer; }
  [[nodiscard]] const Region& a_at(std::uint32_t global) const { return regions_[recs_[global].a]; }
  [[nodiscard]] std::span<const std::uint32_t> deps_at(std::uint32_t global) const {
    return {deps_.data() + dep_first_[global], dep_first_[global + 1] - dep_first_[global]};
  }
  [[nodiscard]] std::uint32_t round_at(std::uint32_t global) const { return rounds_.empty() ? 0 : rounds_[global]; }
  // The rank whose program holds op `global` (a binary search).
  [[nodiscard]] int rank_of(std::uint32_t global) const;

  // Replaces every rank's ops by `ranks`, field for field (deps, tags and rounds as given, so a
  // hand-made or corrupted plan stays as written). More than 2^32 − 1 ops or deps → InputError.
  void set_programs(std::vector<RankProgram> ranks);
  // The ops as programs (what set_programs() would take to rebuild this plan).
  [[nodiscard]] std::vector<RankProgram> programs() const;

  // Fills tags (per-pair sequence numbers). Builders call it last.
  void finalize();

  // Bytes held by the op storage (not counting user_bytes/scratch_bytes).
  [[nodiscard]] std::size_t storage_bytes() const noexcept;

 private:
  friend class PlanDraft;
  friend class RankOps;
  friend void derive_dependencies(Plan& plan);
  // 20 bytes per op: regions by number in regions_, deps in deps_[dep_first_[g], dep_first_[g + 1]).
  struct Rec {
    std::uint32_t a = 0, b = 0;
    std::int32_t peer = -1;
    std::uint32_t tag = 0;
    OpCode code = OpCode::send;
    bool src_first = false;
  };
  std::vector<std::uint32_t> first_{0};  // rank_count() + 1 entries
  std::vector<Rec> recs_;
  std::vector<std::uint32_t> dep_first_{0};  // op_count() + 1 entries
  std::vector<std::uint32_t> deps_;
  std::vector<Region> regions_;
  std::vector<std::uint32_t> rounds_;  // empty when no op has a round, else one per op
};

inline OpView RankOps::operator[](std::size_t j) const { return plan_->op_at(first_ + static_cast<std::uint32_t>(j)); }
inline OpView RankOps::iterator::operator*() const { return plan_->op_at(g_); }

// Builds a plan op by op, in any rank order; finish() derives the deps from the regions
// (derive_dependencies), numbers the messages (finalize) and stores the plan compactly.
// Builders set buffer sizes, needs_commutative and pacing through plan().
class PlanDraft {
 public:
  // user_bytes = `bytes` and scratch_bytes = 0 at every rank.
  PlanDraft(std::string op, std::string algo, int p, int root, std::uint64_t bytes, std::uint32_t elem_bytes);
  Plan& plan() noexcept { return plan_; }
  // Room for `ops` ops (a hint: more may be appended), so that a builder that knows its op count
  // grows no array by copying.
  void reserve(std::size_t ops);

  void send(int r, int peer, Region a, std::uint32_t round = 0) { push(r, OpCode::send, peer, a, {}, false, round); }
  void recv(int r, int peer, Region a, std::uint32_t round = 0) { push(r, OpCode::recv, peer, a, {}, false, round); }
  // acc = acc ⊕ in, or in ⊕ acc when in_first.
  void reduce(int r, Region acc, Region in, bool in_first) { push(r, OpCode::reduce, -1, acc, in, in_first, 0); }
  void copy(int r, Region dst, Region src) { push(r, OpCode::copy, -1, dst, src, false, 0); }
  // An op whose deps the builder computed itself (indices of earlier ops of rank r, as returned
  // here); returns the op's index in rank r's program. For plans finished with finish_as_given().
  std::uint32_t add(int r, const Op& op);

  // Derives the deps from the regions, numbers the messages, stores the plan.
  Plan finish();
  // Keeps the deps given to add() (send/recv/reduce/copy above give none), numbers the messages.
  Plan finish_as_given();

 private:
  void push(int r, OpCode code, int peer, Region a, Region b, bool src_first, std::uint32_t round);
  void pack();
  std::uint32_t intern(const Region& g);
  Plan plan_;
  std::vector<Plan::Rec> recs_;
  std::vector<std::int32_t> rank_;
  std::vector<std::uint32_t> rounds_;
  std::vector<std::uint32_t> count_;      // ops appended per rank
  bool deps_given_ = false;               // add() was used
  std::vector<std::uint32_t> dep_count_;  // per appended op, once add() was used
  std::vector<std::uint32_t> deps_;
  bool sorted_ = true;
  bool any_round_ = false;
  std::unordered_map<Region, std::uint32_t, RegionHash> ids_;
  Region last_region_[2];  // most builders repeat a region or two (a send's a and its empty b)
  std::uint32_t last_id_[2] = {~0U, ~0U};
};

// The first problem found, or nullopt when the plan is sound: every send has its matching
// receive with the same size, no rank sends to or waits on itself, regions lie inside their
// buffers, deps point backwards, reduce regions are whole elements of equal size, and the
// dependency graph across ranks cannot deadlock under the matching rule.
std::optional<std::string> validate(const Plan& plan);

// ---- Extensions ------------------------------------------------------------------------------

// Replaces every op's deps by those its regions require, in program order: op j depends on each
// earlier op i of the same rank whose bytes it reads after i wrote them, writes after i read
// them, or writes after i wrote them (send reads a; recv writes a; copy reads b, writes a;
// reduce reads a and b, writes a), transitively reduced. Ops with no such conflict get no edge,
// so receives into distinct regions may complete in any order. Builders call it before finalize().
void derive_dependencies(Plan& plan);

// The thread executor runs each rank's ops in program order over bounded per-pair rings
// (mailbox.hpp): a send waits while the ring lacks room. The first way program-order execution
// could block forever with rings of ring_bytes (rounded up as the mailboxes do), or nullopt.
// validate() already covers unbounded rings.
std::optional<std::string> validate_rings(const Plan& plan, std::uint64_t ring_bytes);

// A ring capacity (power of two, >= 4 KiB) with which validate_rings() passes whenever
// validate() does: the most bytes, framing included, that any pair ever carries in the plan.
std::uint64_t ring_bytes_needed(const Plan& plan);

// Total message bytes the plan moves (every send's payload) and the number of messages.
std::uint64_t total_message_bytes(const Plan& plan);
std::uint64_t message_count(const Plan& plan);

// The matching rule applied: for every op (by global number, Plan::first_op), the global number
// of the op it meets (a send's receive, a receive's send), or kUnmatched (local ops, and sends or
// receives without a partner). Peers outside 0..rank_count()−1 never match.
inline constexpr std::uint32_t kUnmatched = ~std::uint32_t{0};
std::vector<std::uint32_t> match_messages(const Plan& plan);

}  // namespace postbox
