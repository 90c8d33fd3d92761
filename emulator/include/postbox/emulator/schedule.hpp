// The emulator's input: per rank, a program of sends, receives and local work with the
// dependencies between them, in flat arrays (Array: file-backed inside a MappedStorage scope). Two sources:
//  * a Plan (schedule_of): its messages are matched before the run by the plan's rule (the
//    k-th send a → b meets the k-th receive from a at b), so no queue is searched;
//  * a GOAL schedule (GoalScheduleBuilder, fed one rank block at a time by the reader in
//    frontend/goal_parse.hpp), LogGOPSim's language: receives may name any source or any tag,
//    and are matched while the run goes, as LogGOPSim does (docs/emulator.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "postbox/emulator/mapped_storage.hpp"
#include "postbox/runtime/goal.hpp"
#include "postbox/runtime/plan.hpp"

namespace postbox::sim {

enum class Work : std::uint8_t { send, recv, reduce, copy, calc };

struct Schedule {
  std::string op;    // for traces and messages: the plan's op and algo, or "goal" and the file name
  std::string algo;
  int p = 0;
  std::uint64_t bytes = 0;  // the message size the schedule is built for (pacing's t0)
  static constexpr std::uint32_t kNoPartner = 0xffffffffU;
  static constexpr std::uint64_t kMaxSize = (std::uint64_t{1} << 56) - 1;  // an item's size: 56 bits
  struct Item {  // 16 bytes
    std::uint64_t size : 56 = 0;  // bytes (send, recv, reduce, copy) or ticks (calc), at most kMaxSize
    Work kind : 8 = Work::send;
    std::int32_t peer = -1;  // send: destination; recv: source, -1 = any; else -1
    // A plan's matching (matched): a send's or receive's partner, the global number of the op it
    // meets; GOAL receives match while the run goes, and every op has kNoPartner.
    std::uint32_t partner = kNoPartner;
  };
  Array<std::uint32_t> first{0};  // p + 1: rank r's ops are items[first[r], first[r + 1])
  Array<Item> items;
  // requires: op g starts after ops deps[dep_first[g], dep_first[g + 1]) of its rank completed
  // (rank-local numbers). irequires (GOAL): ... after ops ideps[...] started; empty if none.
  Array<std::uint32_t> dep_first{0}, deps;
  Array<std::uint32_t> idep_first, ideps;
  Array<std::uint32_t> round;  // Plan::pacing rounds: empty, or one per op
  Pacing pacing = Pacing::none;
  std::uint32_t pacing_latency = 0;
  bool matched = false;  // a plan's: every send and receive has its Item::partner
  Array<std::int32_t> tags;   // GOAL: per op its tag (-1 = any, recv); empty for plans
  Array<std::int32_t> lines;  // GOAL: per op its line; empty for plans
  // GOAL labels, only for messages: an op's label is l<j> (j its number in its rank, what
  // plan export writes) unless the op is listed here, sorted by op, with the offset of its
  // NUL-terminated label in label_pool or kNoLabel. A file as exported costs nothing here.
  static constexpr std::uint32_t kNoLabel = 0xffffffffU;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> labels;
  std::string label_pool;

  [[nodiscard]] std::uint32_t ops() const noexcept { return static_cast<std::uint32_t>(items.size()); }
  // "rank 3 op 5 (send)", or for GOAL "GOAL line 12: rank 3 op l5 (send)".
  [[nodiscard]] std::string where(std::uint32_t g) const;
  [[nodiscard]] int rank_of(std::uint32_t g) const;
  // GOAL: op g's label, "" if it has none.
  [[nodiscard]] std::string label(std::uint32_t g) const;
};

static_assert(sizeof(Schedule::Item) == 16, "docs/emulator.md gives this size");

const char* to_string(Work w) noexcept;

// The plan's schedule. A message whose receive is missing or of another size, a peer outside
// 0..p−1 or the rank itself, a dep that does not point backwards, or rank programs that do
// not number p → InputError.
Schedule schedule_of(const Plan& plan);

// A GOAL schedule's, built one rank block at a time as the reader goes (blocks in any rank
// order; a rank without a block gets an empty program), so no text model of the whole file is
// held. finish() checks the ops in rank order and throws the first bad one's InputError
// ("GOAL line N: ..."): a send with tag -1, a tag of 2^31 or more, a calc too long once in
// ticks, an op that requires itself. Calc values become ticks through the time unit, which a
// directive may give after the blocks, hence at finish(). A dependency cycle is found when the
// run stalls (simulate).
class GoalScheduleBuilder {
 public:
  // ops_hint: the ops expected, reserved up front (pages never written cost no memory).
  GoalScheduleBuilder(int num_ranks, std::string name, std::uint64_t ops_hint = 0);
  void add(const GoalRankView& block);
  Schedule finish(int time_unit_exp, Pacing pacing, std::uint32_t pacing_latency) &&;

 private:
  void put_label(std::string_view label, std::uint32_t j);
  void reorder();
  Schedule s_;
  int last_rank_ = -1;  // blocks come in rank order until one does not; then blocks_ holds
  std::vector<std::pair<int, std::uint32_t>> blocks_;  // (rank, first op) of each, file order
  std::vector<std::uint32_t> count_, cursor_;  // scratch: one rank's dependency lists
  std::vector<std::uint32_t> scratch_;
  std::vector<std::uint32_t> icount_, icursor_, iscratch_;
};

}  // namespace postbox::sim
