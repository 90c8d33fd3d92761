#include "postbox/emulator/schedule.hpp"

#include <algorithm>
#include <map>
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
  if (labels.empty()) return "rank " + std::to_string(r) + " op " + std::to_string(j) + " (" + kind + ")";
  const std::string& label = labels[g];
  return "GOAL line " + std::to_string(lines[g]) + ": rank " + std::to_string(r) + " op " +
         (label.empty() ? "#" + std::to_string(j) : label) + " (" + kind + ")";
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
  s.partner = match_messages(plan);
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
        const std::uint32_t m = s.partner[g];
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

Schedule schedule_of_goal(const GoalSchedule& goal, std::string name) {
  const int p = goal.num_ranks;
  if (p < 1) throw InputError("GOAL: num_ranks must be at least 1");
  std::uint64_t total = 0;
  for (const GoalRank& gr : goal.ranks) total += gr.ops.size();
  if (total >= kUnmatched) throw InputError("GOAL: more than 2^32 - 2 operations");
  require_memory(total * 120 + static_cast<std::uint64_t>(p) * 120,
                           "the GOAL schedule of " + std::to_string(total) + " operations on " + std::to_string(p) + " ranks");
  std::vector<const GoalRank*> by_rank(static_cast<std::size_t>(p), nullptr);
  for (const GoalRank& gr : goal.ranks) by_rank[static_cast<std::size_t>(gr.rank)] = &gr;
  std::int64_t calc_scale = kTicksPerUnit;
  for (int k = 0; k < goal.time_unit_exp; ++k) calc_scale /= 10;

  Schedule s;
  s.op = "goal";
  s.algo = std::move(name);
  s.p = p;
  s.pacing = goal.pacing;
  s.pacing_latency = goal.pacing_latency;
  s.first.assign(static_cast<std::size_t>(p) + 1, 0);
  s.items.reserve(total);
  s.tags.reserve(total);
  s.labels.reserve(total);
  s.lines.reserve(total);
  std::vector<std::vector<std::uint32_t>> req, ireq;
  bool any_ideps = false, any_round = false;
  std::vector<std::uint32_t> deps_count, ideps_count;
  std::vector<std::uint32_t> flat_deps, flat_ideps;
  std::vector<std::uint32_t> rounds;
  std::uint64_t biggest = 0;
  for (int r = 0; r < p; ++r) {
    s.first[static_cast<std::size_t>(r)] = static_cast<std::uint32_t>(s.items.size());
    const GoalRank* gr = by_rank[static_cast<std::size_t>(r)];
    if (gr == nullptr) continue;
    std::map<std::string, std::uint32_t> index;
    for (std::size_t j = 0; j < gr->ops.size(); ++j)
      if (!gr->ops[j].label.empty()) index.emplace(gr->ops[j].label, static_cast<std::uint32_t>(j));
    req.assign(gr->ops.size(), {});
    ireq.assign(gr->ops.size(), {});
    for (const GoalDep& d : gr->deps) {
      const std::uint32_t a = index.at(d.op), b = index.at(d.on);
      (d.immediate ? ireq : req)[a].push_back(b);
      any_ideps = any_ideps || d.immediate;
    }
    for (std::size_t j = 0; j < gr->ops.size(); ++j) {
      const GoalOp& op = gr->ops[j];
      auto fail = [&](const std::string& what) {
        throw InputError("GOAL line " + std::to_string(op.line) + ": " + what);
      };
      Schedule::Item it;
      std::int32_t tag = 0;
      switch (op.kind) {
        case GoalOp::Kind::send:
          it.kind = Work::send;
          if (op.tag < 0) fail("a send needs a tag >= 0");
          if (op.tag > 0x7fffffff) fail("tags must be below 2^31");
          it.peer = static_cast<std::int32_t>(op.peer);
          tag = static_cast<std::int32_t>(op.tag);
          it.size = op.size;
          break;
        case GoalOp::Kind::recv:
          it.kind = Work::recv;
          if (op.tag > 0x7fffffff) fail("tags must be below 2^31");
          it.peer = static_cast<std::int32_t>(op.peer);
          tag = static_cast<std::int32_t>(op.tag);
          it.size = op.size;
          break;
        case GoalOp::Kind::calc:
          it.kind = Work::calc;
          if (op.size > static_cast<std::uint64_t>(kMaxTicks / calc_scale)) fail("calc " + std::to_string(op.size) + " is too long");
          it.size = op.size * static_cast<std::uint64_t>(calc_scale);
          break;
      }
      if (op.kind != GoalOp::Kind::calc) biggest = std::max(biggest, op.size);
      std::sort(req[j].begin(), req[j].end());
      req[j].erase(std::unique(req[j].begin(), req[j].end()), req[j].end());
      std::sort(ireq[j].begin(), ireq[j].end());
      ireq[j].erase(std::unique(ireq[j].begin(), ireq[j].end()), ireq[j].end());
      for (std::uint32_t d : req[j])
        if (d == j) fail("'" + op.label + "' requires itself");
      for (std::uint32_t d : ireq[j])
        if (d == j) fail("'" + op.label + "' irequires itself");
      s.items.push_back(it);
      s.tags.push_back(tag);
      s.labels.push_back(op.label);
      s.lines.push_back(op.line);
      deps_count.push_back(static_cast<std::uint32_t>(req[j].size()));
      flat_deps.insert(flat_deps.end(), req[j].begin(), req[j].end());
      ideps_count.push_back(static_cast<std::uint32_t>(ireq[j].size()));
      flat_ideps.insert(flat_ideps.end(), ireq[j].begin(), ireq[j].end());
      rounds.push_back(op.round);
      any_round = any_round || op.round != 0;
    }
  }
  s.first.back() = static_cast<std::uint32_t>(s.items.size());
  s.bytes = biggest;
  const std::size_t n = s.items.size();
  s.dep_first.assign(n + 1, 0);
  for (std::size_t g = 0; g < n; ++g) s.dep_first[g + 1] = s.dep_first[g] + deps_count[g];
  s.deps = std::move(flat_deps);
  if (any_ideps) {
    s.idep_first.assign(n + 1, 0);
    for (std::size_t g = 0; g < n; ++g) s.idep_first[g + 1] = s.idep_first[g] + ideps_count[g];
    s.ideps = std::move(flat_ideps);
  }
  if (any_round) s.round = std::move(rounds);
  return s;
}

}  // namespace postbox::sim
