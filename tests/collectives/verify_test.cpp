// verify.hpp: the oracles accept every built-in plan's result, and a corrupted plan or buffer
// fails naming the rank.
#include "postbox/collectives/verify.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "algo_table.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/team.hpp"

namespace postbox {
namespace {

struct Buffers {
  std::vector<std::vector<std::byte>> bufs;
  std::vector<std::span<std::byte>> spans;
};

// Fills by the oracle, runs the plan on a team, returns the buffers.
Buffers run(const std::shared_ptr<const Plan>& plan, const Oracle& oracle) {
  Buffers out;
  out.bufs.resize(static_cast<std::size_t>(plan->p));
  for (int r = 0; r < plan->p; ++r) {
    out.bufs[static_cast<std::size_t>(r)].resize(plan->user_bytes[static_cast<std::size_t>(r)]);
    out.spans.emplace_back(out.bufs[static_cast<std::size_t>(r)]);
    oracle.fill(r, out.spans.back());
  }
  TeamOptions opts;
  opts.pin = false;
  if (validate_rings(*plan, opts.mailbox.ring_bytes)) opts.mailbox.ring_bytes = ring_bytes_needed(*plan);
  Team team(plan->p, opts);
  PlanExecutor exec(plan);
  const ReduceFn sum = unsigned_sum(plan->elem_bytes);
  exec.run(team, out.spans, &sum);
  return out;
}

std::optional<Mismatch> first_mismatch(const Oracle& oracle, const Buffers& r) {
  for (int q = 0; q < oracle.p(); ++q)
    if (auto m = oracle.check(q, r.spans[static_cast<std::size_t>(q)])) return m;
  return std::nullopt;
}

PlanRequest select(std::map<std::string, std::string> given) { return select_plan(given); }

struct Row {
  std::map<std::string, std::string> given;
};

class EveryOp : public ::testing::TestWithParam<Row> {};

TEST_P(EveryOp, CorrectPlanPassesAndAFlippedByteNamesItsRank) {
  const PlanRequest req = select(GetParam().given);
  const Oracle oracle(req);
  const auto plan = cached_plan(req);
  ASSERT_FALSE(oracle.check_buffers(*plan)) << *oracle.check_buffers(*plan);
  Buffers r = run(plan, oracle);
  ASSERT_FALSE(first_mismatch(oracle, r)) << first_mismatch(oracle, r)->str();
  // Corrupt one result byte of the last rank that holds a result: the oracle names that rank.
  for (int q = plan->p - 1; q >= 0; --q) {
    auto& buf = r.bufs[static_cast<std::size_t>(q)];
    if (buf.empty()) continue;
    const std::size_t at = buf.size() - 1;
    buf[at] ^= std::byte{0x40};
    const auto m = oracle.check(q, r.spans[static_cast<std::size_t>(q)]);
    buf[at] ^= std::byte{0x40};
    if (!m) continue;  // a rank without a result there (reduce non-root, one-to-all's root ...)
    EXPECT_EQ(m->rank, q);
    EXPECT_EQ(m->byte, at);
    return;
  }
  FAIL() << "no rank holds a result byte";
}

std::vector<Row> rows() {
  std::vector<Row> out;
  for (const auto& a : testing_support::kAlgos) {
    const std::string op = a.op;
    std::map<std::string, std::string> g{{"op", op}, {"algo", a.algo}, {"p", "6"}, {"bytes", "24"}};
    if (op_has_root(op)) g["root"] = "4";
    out.push_back({g});
  }
  out.push_back({{{"op", "s2p"}, {"algo", "br-xy-source"}, {"p", "12"}, {"mesh", "3x4"}, {"sources", "5"}, {"dist", "cross"}, {"bytes", "16"}}});
  out.push_back({{{"op", "s2p"}, {"algo", "part-lin"}, {"p", "12"}, {"source-list", "11,0,6,5"}, {"bytes", "8"}}});
  out.push_back({{{"op", "one-to-all"}, {"algo", "2-lev-rec"}, {"p", "12"}, {"root", "5"}, {"bytes", "16"}}});
  out.push_back({{{"op", "all-to-one"}, {"algo", "3-lev-sq"}, {"p", "16"}, {"root", "15"}, {"bytes", "16"}}});
  out.push_back({{{"op", "all-to-all"}, {"algo", "2-lev-rc"}, {"p", "16"}, {"bytes", "8"}}});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Oracle, EveryOp, ::testing::ValuesIn(rows()), [](const auto& row) {
  std::string n = row.param.given.at("op") + "_" + row.param.given.at("algo");
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

// Rank 1 of a binomial broadcast over 4 forwards to rank 3 before it has received: a valid,
// deadlock-free plan that delivers the wrong bytes.
TEST(Oracle, CorruptedPlanFailsNamingTheRank) {
  const PlanRequest req = select({{"op", "bcast"}, {"algo", "binomial"}, {"p", "4"}, {"bytes", "8"}});
  Plan plan = build_plan(req);
  std::vector<RankProgram> programs = plan.programs();
  auto& ops = programs[1].ops;
  ASSERT_EQ(ops.size(), 2u);
  ASSERT_EQ(ops[0].code, OpCode::recv);
  std::swap(ops[0], ops[1]);
  ops[0].deps.clear();
  ops[1].deps = {0};
  plan.set_programs(std::move(programs));
  ASSERT_FALSE(validate(plan)) << *validate(plan);
  const Oracle oracle(req);
  const Buffers r = run(std::make_shared<const Plan>(plan), oracle);
  const auto m = first_mismatch(oracle, r);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rank, 3);
  EXPECT_EQ(m->str(), "rank 3 byte 0: expected 0x11, got 0xee");
}

// A gather whose root lands rank 1's block on its own block.
TEST(Oracle, MisplacedGatherBlockFailsAtTheRoot) {
  const PlanRequest req = select({{"op", "gather"}, {"algo", "binomial"}, {"p", "4"}, {"bytes", "8"}, {"root", "0"}});
  Plan plan = build_plan(req);
  std::vector<RankProgram> programs = plan.programs();
  std::vector<Op*> recvs;
  for (Op& o : programs[0].ops)
    if (o.code == OpCode::recv && o.a.bytes == 8) recvs.push_back(&o);
  ASSERT_GE(recvs.size(), 1u);
  ASSERT_EQ(recvs[0]->peer, 1);
  recvs[0]->a.offset = 0;
  plan.set_programs(std::move(programs));
  ASSERT_FALSE(validate(plan)) << *validate(plan);
  const Oracle oracle(req);
  const Buffers r = run(std::make_shared<const Plan>(plan), oracle);
  const auto m = first_mismatch(oracle, r);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rank, 0);
  EXPECT_EQ(m->byte, 0u);
}

// The s2p oracle takes the sources from the request, not from the plan: a plan built for other
// sources (a wrong source choice) fails.
TEST(Oracle, S2PWrongSourcesFail) {
  const PlanRequest asked = select({{"op", "s2p"}, {"algo", "br-lin"}, {"p", "9"}, {"source-list", "0,4"}, {"bytes", "4"}});
  const PlanRequest built = select({{"op", "s2p"}, {"algo", "br-lin"}, {"p", "9"}, {"source-list", "0,5"}, {"bytes", "4"}});
  const Oracle oracle(asked);
  const Buffers r = run(cached_plan(built), oracle);
  const auto m = first_mismatch(oracle, r);
  ASSERT_TRUE(m);
  EXPECT_NE(m->rank, 4) << "rank 4 holds its own message";
}

TEST(Oracle, BuffersComeFromTheDefinition) {
  const PlanRequest req = select({{"op", "gather"}, {"algo", "binomial"}, {"p", "5"}, {"bytes", "8"}, {"root", "2"}});
  const Oracle oracle(req);
  EXPECT_EQ(oracle.buffer_bytes(2), 40u);
  EXPECT_EQ(oracle.buffer_bytes(0), 8u);
  Plan plan = build_plan(req);
  EXPECT_FALSE(oracle.check_buffers(plan));
  plan.user_bytes[3] = 16;
  EXPECT_EQ(*oracle.check_buffers(plan), "rank 3: the plan's buffer is 16 bytes, the op defines 8");
  const Oracle a2a(select({{"op", "all-to-all"}, {"algo", "1-lev-dir"}, {"p", "4"}, {"bytes", "3"}}));
  EXPECT_EQ(a2a.buffer_bytes(1), 24u);  // 2·p·L
}

TEST(Oracle, UnknownOpAndSumWidths) {
  PlanRequest req;
  req.op = "scan";
  req.p = 2;
  EXPECT_THROW(Oracle{req}, InputError);
  EXPECT_THROW((void)unsigned_sum(3), InputError);
  const ReduceFn s2 = unsigned_sum(2);
  const std::uint16_t a[2] = {0xffff, 7}, b[2] = {2, 8};
  std::uint16_t out[2];
  s2.fn(reinterpret_cast<const std::byte*>(a), reinterpret_cast<const std::byte*>(b), reinterpret_cast<std::byte*>(out), 2,
        nullptr);
  EXPECT_EQ(out[0], 1);  // wraps
  EXPECT_EQ(out[1], 15);
}

}  // namespace
}  // namespace postbox
