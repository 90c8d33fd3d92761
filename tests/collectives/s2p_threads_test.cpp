// s-to-p and C³ plans on the thread executor, oversubscribed (up to 16 ranks on a 2-core box),
// through the plan registry as `postbox run` uses it. Kept to small meshes so that the suite
// also runs under ThreadSanitizer (label concurrency); the exhaustive algorithm × distribution
// × mesh matrix runs on the reference executor in s2p_test and c3_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "postbox/collectives/c3.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {
namespace {

std::byte pattern(int from, int to, std::uint64_t t) {
  return static_cast<std::byte>((from * 37 + to * 11 + static_cast<int>(t % 256) * 5 + 3) & 0xff);
}

// A block of `bytes` bytes at (rank, offset) whose byte t is pattern(from, to, t): filled
// before the run when `given` (else its complement is there), checked after it when `result`.
struct Block {
  int rank;
  std::uint64_t offset;
  int from, to;
  bool given, result;
};

// The buffer contract of s2p.hpp: every rank holds s·bytes, source k's message at k·bytes.
std::vector<Block> s2p_blocks(int p, const std::vector<int>& sources, std::uint64_t bytes) {
  std::vector<Block> out;
  for (int r = 0; r < p; ++r) {
    for (std::size_t k = 0; k < sources.size(); ++k) {
      out.push_back({r, k * bytes, sources[k], static_cast<int>(k), sources[k] == r, true});
    }
  }
  return out;
}

// The buffer contract of c3.hpp.
std::vector<Block> c3_blocks(const std::string& op, int p, int root, std::uint64_t L) {
  std::vector<Block> out;
  for (int j = 0; j < p; ++j) {
    const std::uint64_t at = static_cast<std::uint64_t>(j) * L;
    if (op == "one-to-one") {
      out.push_back({j, 0, j, one_to_one_destination(p, j), true, false});
      out.push_back({j, L, one_to_one_source(p, j), j, false, true});
    } else if (op == "one-to-all") {
      out.push_back({root, at, root, j, true, j == root});
      if (j != root) out.push_back({j, 0, root, j, false, true});
    } else if (op == "all-to-one") {
      if (j != root) out.push_back({j, 0, j, root, true, false});
      out.push_back({root, at, j, root, j == root, true});
    } else {
      for (int i = 0; i < p; ++i) {
        out.push_back({i, at, i, j, true, false});
        out.push_back({j, static_cast<std::uint64_t>(p) * L + static_cast<std::uint64_t>(i) * L, i, j, false, true});
      }
    }
  }
  return out;
}

// Builds the plan through the registry, runs it `runs` times on one oversubscribed team
// (refilling the inputs each time) and checks every result block after each run. Returns "" or
// the first wrong byte.
std::string run_on_threads(const PlanRequest& req, const std::vector<Block>& blocks, int runs) {
  auto plan = std::make_shared<const Plan>(build_plan(req));  // build_plan validates
  const std::uint64_t bytes = plan->bytes;
  TeamOptions opt;
  opt.pin = false;
  opt.mailbox.ring_bytes = std::max<std::uint64_t>(opt.mailbox.ring_bytes, ring_bytes_needed(*plan));
  Team team(plan->p, opt);
  PlanExecutor ex(plan);
  std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(plan->p));
  std::vector<std::span<std::byte>> users;
  for (int r = 0; r < plan->p; ++r) {
    bufs[static_cast<std::size_t>(r)].assign(plan->user_bytes[static_cast<std::size_t>(r)], std::byte{0xEE});
    users.emplace_back(bufs[static_cast<std::size_t>(r)]);
  }
  for (int run = 0; run < runs; ++run) {
    for (auto& b : bufs) std::fill(b.begin(), b.end(), std::byte{0xEE});
    for (const Block& b : blocks) {
      for (std::uint64_t t = 0; t < bytes; ++t) {
        const std::byte v = pattern(b.from, b.to, t);
        bufs[static_cast<std::size_t>(b.rank)][b.offset + t] = b.given ? v : ~v;
      }
    }
    ex.run(team, users, nullptr);
    for (const Block& b : blocks) {
      if (!b.result) continue;
      for (std::uint64_t t = 0; t < bytes; ++t) {
        if (bufs[static_cast<std::size_t>(b.rank)][b.offset + t] != pattern(b.from, b.to, t)) {
          return "run " + std::to_string(run) + ": rank " + std::to_string(b.rank) + " byte " + std::to_string(b.offset + t) +
                 " (block " + std::to_string(b.from) + "->" + std::to_string(b.to) + ") is wrong";
        }
      }
    }
  }
  return "";
}

std::string test_name(std::string n) {
  for (char& ch : n) {
    if (ch == '-' || ch == ':' || ch == '.') ch = '_';
  }
  return n;
}

// ---- s-to-p ----

class S2PThreads : public ::testing::TestWithParam<std::string> {};

TEST_P(S2PThreads, ExactResultOnEveryRank) {
  for (const char* mt : {"3x5", "4x4"}) {
    const Mesh m = parse_mesh(mt);
    for (const char* dist : {"cross", "diag-left", "random"}) {
      for (int s : {1, m.p() / 2, m.p()}) {
        PlanRequest req;
        req.op = "s2p";
        req.algo = GetParam();
        req.p = m.p();
        req.bytes = 24;
        req.mesh = m;
        req.sources = source_distribution(dist, m, s, 5);
        const auto blocks = s2p_blocks(m.p(), req.sources, 24);
        ASSERT_EQ(run_on_threads(req, blocks, 2), "") << GetParam() << " " << mt << " " << dist << " s=" << s;
      }
    }
  }
}

TEST_P(S2PThreads, ExplicitSourceListInItsOwnOrder) {
  PlanRequest req;
  req.op = "s2p";
  req.algo = GetParam();
  req.p = 12;
  req.bytes = 40;
  req.mesh = Mesh{3, 4};
  req.sources = {11, 0, 6, 5, 2};
  ASSERT_EQ(run_on_threads(req, s2p_blocks(12, {11, 0, 6, 5, 2}, 40), 2), "") << GetParam();
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, S2PThreads, ::testing::ValuesIn(s2p_algorithm_names()),
                         [](const auto& param_info) { return test_name(param_info.param); });

// ---- C³ ----

struct C3Case {
  std::string op, algo;
};

void PrintTo(const C3Case& c, std::ostream* os) { *os << c.op << " " << c.algo; }

std::vector<C3Case> c3_cases() {
  std::vector<C3Case> out;
  for (const auto& op : c3_ops()) {
    for (const auto& a : c3_algorithm_names(op)) out.push_back({op, a});
  }
  return out;
}

class C3Threads : public ::testing::TestWithParam<C3Case> {};

TEST_P(C3Threads, ExactResultOnEveryRank) {
  const auto& c = GetParam();
  for (const char* mt : {"2x3", "4x4"}) {
    const int p = parse_mesh(mt).p();
    if (c.algo == "logp-lev-bfly" && (p & (p - 1)) != 0) continue;
    for (int root : {0, p - 1}) {
      if ((c.op == "all-to-all" || c.op == "one-to-one") && root != 0) continue;
      PlanRequest req;
      req.op = c.op;
      req.algo = c.algo;
      req.p = p;
      req.root = root;
      req.bytes = 24;
      req.mesh = parse_mesh(mt);
      ASSERT_EQ(run_on_threads(req, c3_blocks(c.op, p, root, 24), 2), "") << c.op << " " << c.algo << " " << mt
                                                                           << " root " << root;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, C3Threads, ::testing::ValuesIn(c3_cases()),
                         [](const auto& param_info) { return test_name(param_info.param.op + "_" + param_info.param.algo); });

}  // namespace
}  // namespace postbox
