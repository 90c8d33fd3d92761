#include "postbox/emulator/schedule.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/limits.hpp"
#include "postbox/runtime/ticks.hpp"

namespace postbox::sim {

const char* to_string(Work w) noexcept {
  switch (w) {
    case Work::send: return "send";
    case Work::recv: return "recv";
    case Work::reduce: return "reduce";
    case Work::copy: return "copy";
    case Work::calc: return "calc";
  }
  return "?";
}

int Schedule::rank_of(std::uint32_t g) const {
  return static_cast<int>(std::upper_bound(first.begin(), first.end(), g) - first.begin()) - 1;
}

std::string Schedule::where(std::uint32_t g) const {
  const int r = rank_of(g);
  const std::uint32_t j = g - first[static_cast<std::size_t>(r)];
  const std::string kind = to_string(items[g].kind);
  if (lines.empty()) return "rank " + std::to_string(r) + " op " + std::to_string(j) + " (" + kind + ")";
  const std::string label = this->label(g);
  return "GOAL line " + std::to_string(lines[g]) + ": rank " + std::to_string(r) + " op " +
         (label.empty() ? "#" + std::to_string(j) : label) + " (" + kind + ")";
}

std::string Schedule::label(std::uint32_t g) const {
  const auto at = std::lower_bound(labels.begin(), labels.end(), std::pair<std::uint32_t, std::uint32_t>{g, 0});
  if (at != labels.end() && at->first == g) return at->second == kNoLabel ? std::string() : std::string(label_pool.c_str() + at->second);
  return "l" + std::to_string(g - first[static_cast<std::size_t>(rank_of(g))]);
}

Schedule schedule_of(const Plan& plan) {
  if (plan.p < 1 || plan.rank_count() != plan.p)
    throw InputError("plan: p = " + std::to_string(plan.p) + " but it has " + std::to_string(plan.rank_count()) +
                     " rank programs");
  const std::uint32_t n = plan.op_count();
  require_memory(static_cast<std::uint64_t>(n) * 36 + static_cast<std::uint64_t>(plan.p) * 8,
                           "the schedule of " + std::to_string(n) + " ops");
  Schedule s;
  s.op = plan.op;
  s.algo = plan.algo;
  s.p = plan.p;
  s.bytes = plan.bytes;
  s.pacing = plan.pacing;
  s.pacing_latency = plan.pacing_latency;
  const std::vector<std::uint32_t> partner = match_messages(plan);
  s.matched = true;
  s.first.resize(static_cast<std::size_t>(plan.p) + 1);
  s.items.resize(n);
  s.dep_first.assign(static_cast<std::size_t>(n) + 1, 0);
  bool rounds = false;
  for (std::uint32_t g = 0; g < n && !rounds; ++g) rounds = plan.round_at(g) != 0;
  if (rounds) s.round.resize(n);
  for (int r = 0; r < plan.p; ++r) {
    const std::uint32_t base = plan.first_op(r);
    s.first[static_cast<std::size_t>(r)] = base;
    const std::uint32_t end = plan.first_op(r + 1);
    for (std::uint32_t g = base; g < end; ++g) {
      const OpCode code = plan.code_at(g);
      const int peer = plan.peer_at(g);
      const std::uint64_t bytes = plan.a_at(g).bytes;
      auto where = [&] { return "plan: rank " + std::to_string(r) + " op " + std::to_string(g - base); };
      Schedule::Item& it = s.items[g];
      if (bytes > Schedule::kMaxSize)
        throw InputError(where() + " moves " + std::to_string(bytes) + " bytes, more than 2^56 - 1");
      it.size = bytes;
      it.peer = -1;
      switch (code) {
        case OpCode::send: it.kind = Work::send; break;
        case OpCode::recv: it.kind = Work::recv; break;
        case OpCode::reduce: it.kind = Work::reduce; break;
        case OpCode::copy: it.kind = Work::copy; break;
      }
      if (code == OpCode::send || code == OpCode::recv) {
        if (peer < 0 || peer >= plan.p || peer == r) throw InputError(where() + " has peer " + std::to_string(peer));
        it.peer = peer;
        const std::uint32_t m = partner[g];
        it.partner = m;
        if (m == kUnmatched) {
          throw InputError(where() + " (" + to_string(code) + (code == OpCode::send ? " to " : " from ") +
                           std::to_string(peer) + ") has no matching " + (code == OpCode::send ? "receive" : "send"));
        }
        if (code == OpCode::send && plan.a_at(m).bytes != bytes) {
          throw InputError(where() + " sends " + std::to_string(bytes) + " bytes to " + std::to_string(peer) +
                           " into a " + std::to_string(plan.a_at(m).bytes) + "-byte receive");
        }
      }
      const auto deps = plan.deps_at(g);
      for (std::uint32_t d : deps) {
        if (d >= g - base) throw InputError(where() + " depends on op " + std::to_string(d) + ", not an earlier op");
      }
      s.dep_first[g + 1] = static_cast<std::uint32_t>(deps.size());
      if (rounds) s.round[g] = plan.round_at(g);
    }
  }
  s.first.back() = n;
  for (std::uint32_t g = 0; g < n; ++g) s.dep_first[g + 1] += s.dep_first[g];
  s.deps.resize(s.dep_first.back());
  for (std::uint32_t g = 0; g < n; ++g) {
    const auto deps = plan.deps_at(g);
    std::copy(deps.begin(), deps.end(), s.deps.begin() + s.dep_first[g]);
  }
  return s;
}

GoalScheduleBuilder::GoalScheduleBuilder(int num_ranks, std::string name, std::uint64_t ops_hint) {
  if (num_ranks < 1) throw InputError("GOAL: num_ranks must be at least 1");
  require_memory(static_cast<std::uint64_t>(num_ranks) * 8, "the GOAL schedule of " + std::to_string(num_ranks) + " ranks");
  s_.op = "goal";
  s_.algo = std::move(name);
  s_.p = num_ranks;
  s_.first.assign(static_cast<std::size_t>(num_ranks) + 1, 0);
  const std::size_t hint = static_cast<std::size_t>(std::min<std::uint64_t>(ops_hint, kUnmatched));
  s_.items.reserve(hint);
  s_.tags.reserve(hint);
  s_.lines.reserve(hint);
  s_.dep_first.reserve(hint + 1);
  s_.deps.reserve(hint);
}

namespace {

// A tag of 2^31 or more, refused at finish() (tags are 32-bit in the run).
constexpr std::int32_t kTagTooBig = std::numeric_limits<std::int32_t>::min();

// Appends each op's dependencies of one kind, sorted and without repeats, to list, and their
// ends to first; count, cursor and scratch are reused from block to block.
void append_deps(std::span<const GoalDepView> deps, bool immediate, std::size_t ops, Array<std::uint32_t>& first,
                 Array<std::uint32_t>& list, std::vector<std::uint32_t>& count, std::vector<std::uint32_t>& scratch) {
  count.assign(ops + 1, 0);
  std::size_t k = 0;
  for (const GoalDepView& d : deps)
    if (d.immediate == immediate) ++count[d.op + 1], ++k;
  if (k == 0) {
    first.insert(first.end(), ops, static_cast<std::uint32_t>(list.size()));
    return;
  }
  for (std::size_t j = 0; j < ops; ++j) count[j + 1] += count[j];
  scratch.resize(k);
  for (const GoalDepView& d : deps)
    if (d.immediate == immediate) scratch[count[d.op]++] = d.on;  // count[j] ends at op j's end
  std::uint32_t begin = 0;
  for (std::size_t j = 0; j < ops; ++j) {
    const auto b = scratch.begin() + begin, e = scratch.begin() + count[j];
    std::sort(b, e);
    list.insert(list.end(), b, std::unique(b, e));
    first.push_back(static_cast<std::uint32_t>(list.size()));
    begin = count[j];
  }
}

}  // namespace

void GoalScheduleBuilder::put_label(std::string_view label, std::uint32_t j) {
  char buf[12] = {'l'};
  const auto [end, ec] = std::to_chars(buf + 1, buf + sizeof buf, j);
  if (label == std::string_view(buf, static_cast<std::size_t>(end - buf))) return;
  const auto g = static_cast<std::uint32_t>(s_.items.size());
  if (label.empty()) {
    s_.labels.emplace_back(g, Schedule::kNoLabel);
    return;
  }
  if (s_.label_pool.size() + label.size() >= Schedule::kNoLabel) throw InputError("GOAL: labels of more than 4 GiB");
  s_.labels.emplace_back(g, static_cast<std::uint32_t>(s_.label_pool.size()));
  s_.label_pool.append(label);
  s_.label_pool.push_back('\0');
}

void GoalScheduleBuilder::add(const GoalRankView& block) {
  const std::size_t base = s_.items.size();
  const std::size_t m = block.ops.size();
  if (m >= kUnmatched - base) throw InputError("GOAL: more than 2^32 - 2 operations");
  if (blocks_.empty() && block.rank > last_rank_) {
    for (int r = last_rank_ + 1; r <= block.rank; ++r) s_.first[static_cast<std::size_t>(r)] = static_cast<std::uint32_t>(base);
    last_rank_ = block.rank;
  } else {
    if (blocks_.empty())
      for (int r = 0; r <= last_rank_; ++r) blocks_.emplace_back(r, s_.first[static_cast<std::size_t>(r)]);
    blocks_.emplace_back(block.rank, static_cast<std::uint32_t>(base));
  }
  bool rounds = !s_.round.empty();
  for (const GoalOpView& op : block.ops) rounds = rounds || op.round != 0;
  if (rounds && s_.round.empty()) s_.round.assign(base, 0);
  for (std::size_t j = 0; j < m; ++j) {
    const GoalOpView& op = block.ops[j];
    Schedule::Item it;
    std::int32_t tag = 0;
    it.size = std::min(op.size, Schedule::kMaxSize);  // kMaxSize: refused at finish(), in rank order
    if (op.kind == GoalOp::Kind::calc) {
      it.kind = Work::calc;  // its size becomes ticks at finish()
    } else {
      it.kind = op.kind == GoalOp::Kind::send ? Work::send : Work::recv;
      it.peer = static_cast<std::int32_t>(op.peer);
      tag = op.tag > 0x7fffffff ? kTagTooBig : static_cast<std::int32_t>(op.tag);
    }
    put_label(op.label, static_cast<std::uint32_t>(j));
    s_.items.push_back(it);
    s_.tags.push_back(tag);
    s_.lines.push_back(op.line);
    if (rounds) s_.round.push_back(op.round);
  }
  append_deps(block.deps, false, m, s_.dep_first, s_.deps, count_, scratch_);
  bool immediate = !s_.idep_first.empty();
  for (const GoalDepView& d : block.deps) immediate = immediate || d.immediate;
  if (immediate) {
    if (s_.idep_first.empty()) s_.idep_first.assign(base + 1, 0);
    append_deps(block.deps, true, m, s_.idep_first, s_.ideps, icount_, iscratch_);
  }
}

// Blocks given out of rank order: every per-op array put in rank order.
void GoalScheduleBuilder::reorder() {
  const auto n = static_cast<std::uint32_t>(s_.items.size());
  struct Block {
    int rank;
    std::uint32_t begin, end, to;
  };
  std::vector<Block> b(blocks_.size());
  for (std::size_t i = 0; i < blocks_.size(); ++i)
    b[i] = {blocks_[i].first, blocks_[i].second, i + 1 < blocks_.size() ? blocks_[i + 1].second : n, 0};
  std::sort(b.begin(), b.end(), [](const Block& x, const Block& y) { return x.rank < y.rank; });
  std::uint32_t at = 0;
  for (Block& x : b) x.to = at, at += x.end - x.begin;
  auto move = [&](auto& v) {
    if (v.empty()) return;
    std::remove_reference_t<decltype(v)> out;
    out.reserve(v.size());
    for (const Block& x : b) out.insert(out.end(), v.begin() + x.begin, v.begin() + x.end);
    v = std::move(out);
  };
  auto move_lists = [&](Array<std::uint32_t>& first, Array<std::uint32_t>& list) {
    if (first.empty()) return;
    Array<std::uint32_t> f{0}, l;
    f.reserve(first.size());
    l.reserve(list.size());
    for (const Block& x : b)
      for (std::uint32_t g = x.begin; g < x.end; ++g) {
        l.insert(l.end(), list.begin() + first[g], list.begin() + first[g + 1]);
        f.push_back(static_cast<std::uint32_t>(l.size()));
      }
    first = std::move(f);
    list = std::move(l);
  };
  move(s_.items);
  move(s_.tags);
  move(s_.lines);
  move(s_.round);
  move_lists(s_.dep_first, s_.deps);
  move_lists(s_.idep_first, s_.ideps);
  std::vector<Block> by_begin = b;
  std::sort(by_begin.begin(), by_begin.end(), [](const Block& x, const Block& y) { return x.begin < y.begin; });
  std::size_t k = 0;
  for (auto& [g, off] : s_.labels) {  // sorted by the old numbers
    while (by_begin[k].end <= g) ++k;
    g = g - by_begin[k].begin + by_begin[k].to;
  }
  std::sort(s_.labels.begin(), s_.labels.end());
  std::size_t i = 0;
  for (int r = 0; r < s_.p; ++r) {
    while (i < b.size() && b[i].rank < r) ++i;
    s_.first[static_cast<std::size_t>(r)] = i < b.size() ? b[i].to : n;
  }
}

Schedule GoalScheduleBuilder::finish(int time_unit_exp, Pacing pacing, std::uint32_t pacing_latency) && {
  const auto n = static_cast<std::uint32_t>(s_.items.size());
  if (blocks_.empty()) {
    for (int r = last_rank_ + 1; r <= s_.p; ++r) s_.first[static_cast<std::size_t>(r)] = n;
  } else {
    reorder();
  }
  s_.first.back() = n;
  s_.pacing = pacing;
  s_.pacing_latency = pacing_latency;
  std::int64_t calc_scale = kTicksPerUnit;
  for (int k = 0; k < time_unit_exp; ++k) calc_scale /= 10;
  // Below kMaxSize (a size of that or more is refused), and at most kMaxTicks once scaled.
  const auto longest = std::min(static_cast<std::uint64_t>(kMaxTicks), Schedule::kMaxSize - 1) /
                       static_cast<std::uint64_t>(calc_scale);
  std::uint64_t biggest = 0;
  int r = 0;
  for (std::uint32_t g = 0; g < n; ++g) {
    while (s_.first[static_cast<std::size_t>(r) + 1] <= g) ++r;
    const std::uint32_t j = g - s_.first[static_cast<std::size_t>(r)];
    auto fail = [&](const std::string& what) {
      throw InputError("GOAL line " + std::to_string(s_.lines[g]) + ": " + what);
    };
    Schedule::Item& it = s_.items[g];
    if (it.kind == Work::calc) {
      if (it.size == Schedule::kMaxSize) fail("calc of 2^56 - 1 or more is too long");
      if (it.size > longest) fail("calc " + std::to_string(it.size) + " is too long");
      it.size *= static_cast<std::uint64_t>(calc_scale);
    } else {
      if (s_.tags[g] == kTagTooBig) fail("tags must be below 2^31");
      if (it.size == Schedule::kMaxSize) fail("a size of 2^56 - 1 bytes or more is too large");
      if (it.kind == Work::send && s_.tags[g] < 0) fail("a send needs a tag >= 0");
      biggest = std::max(biggest, it.size);
    }
    for (std::uint32_t i = s_.dep_first[g]; i < s_.dep_first[g + 1]; ++i)
      if (s_.deps[i] == j) fail("'" + s_.label(g) + "' requires itself");
    if (!s_.idep_first.empty())
      for (std::uint32_t i = s_.idep_first[g]; i < s_.idep_first[g + 1]; ++i)
        if (s_.ideps[i] == j) fail("'" + s_.label(g) + "' irequires itself");
  }
  s_.bytes = biggest;
  return std::move(s_);
}

}  // namespace postbox::sim
