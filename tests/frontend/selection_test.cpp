// selection.hpp: one plan selection for run, sim, sweep, plan and the explorer.
#include "postbox/frontend/selection.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "postbox/collectives/s2p.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

using Given = std::map<std::string, std::string>;

std::string error_of(const Given& g, const SelectionContext& c = {}) {
  try {
    (void)select_plan(g, c);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const Given kBcast{{"op", "bcast"}, {"algo", "binomial"}, {"p", "8"}, {"bytes", "64"}};

Given with(Given g, const std::string& k, const std::string& v) {
  g[k] = v;
  return g;
}

TEST(Selection, BasicRequest) {
  const PlanRequest r = select_plan(with(kBcast, "root", "3"));
  EXPECT_EQ(r.op, "bcast");
  EXPECT_EQ(r.algo, "binomial");
  EXPECT_EQ(r.p, 8);
  EXPECT_EQ(r.bytes, 64);
  EXPECT_EQ(r.root, 3);
  EXPECT_EQ(r.elem_bytes, 1u);
  EXPECT_FALSE(r.lambda);
  EXPECT_FALSE(r.mesh.has_value());
  EXPECT_TRUE(r.sources.empty());
}

TEST(Selection, IntegersAreDecimalEverywhere) {
  EXPECT_EQ(select_plan(with(kBcast, "p", "010")).p, 10);
  EXPECT_EQ(error_of(with(kBcast, "p", "0x10")), "--p must be an integer, got '0x10'");
  EXPECT_EQ(error_of(with(kBcast, "p", "4294967298")), "--p must be at most 2147483647, got 4294967298");
  EXPECT_EQ(error_of(with(kBcast, "bytes", "1073741825")), "--bytes must be at most 1073741824, got 1073741825");
}

TEST(Selection, RequiredAndEmpty) {
  Given g = kBcast;
  g.erase("op");
  EXPECT_EQ(error_of(g), "--op is required");
  EXPECT_EQ(error_of(with(kBcast, "algo", "")), "--algo must not be empty");
  EXPECT_EQ(error_of(with(kBcast, "lambda", "")), "--lambda must be a finite number such as 2, 1.8 or 9/5 (empty), got ''");
  EXPECT_EQ(error_of(with(with(with(kBcast, "op", "s2p"), "algo", "xor"), "dist", "")), "--dist must not be empty");
}

TEST(Selection, DefaultsApplyOnlyWhenNotGiven) {
  SelectionContext c;
  c.defaults = {{"op", "bcast"}, {"algo", "binomial"}, {"p", "2"}, {"bytes", "8"}};
  const PlanRequest r = select_plan({}, c);
  EXPECT_EQ(r.p, 2);
  EXPECT_EQ(r.bytes, 8);
  EXPECT_EQ(select_plan({{"p", "5"}}, c).p, 5);
}

TEST(Selection, UnknownOpAndAlgoUseTheRegistryMessage) {
  EXPECT_NE(error_of(with(kBcast, "op", "scan")).find("unknown op 'scan'"), std::string::npos);
  EXPECT_NE(error_of(with(kBcast, "algo", "ring")).find("unknown --algo 'ring' for --op bcast"), std::string::npos);
}

TEST(Selection, RootOnlyWhereTheOpHasOne) {
  EXPECT_EQ(error_of(with(kBcast, "root", "8")), "--root 8 is outside 0..7");
  EXPECT_EQ(error_of(with(kBcast, "root", "-1")), "--root -1 is outside 0..7");
  const Given ar{{"op", "allreduce"}, {"algo", "postal"}, {"p", "4"}, {"bytes", "8"}, {"root", "0"}};
  EXPECT_EQ(error_of(ar), "--root does not apply to --op allreduce (it has no root)");
  EXPECT_FALSE(op_has_root("s2p"));
  EXPECT_FALSE(op_has_root("all-to-all"));
  EXPECT_TRUE(op_has_root("one-to-all"));
}

TEST(Selection, ElemBytes) {
  const Given ar{{"op", "allreduce"}, {"algo", "postal"}, {"p", "4"}, {"bytes", "8"}};
  EXPECT_EQ(select_plan(ar).elem_bytes, 8u);
  EXPECT_EQ(select_plan(with(ar, "elem-bytes", "2")).elem_bytes, 2u);
  EXPECT_EQ(error_of(with(ar, "elem-bytes", "0")), "--elem-bytes must be 1, 2, 4 or 8, got 0");
  EXPECT_EQ(error_of(with(kBcast, "elem-bytes", "4")), "--elem-bytes applies to --op reduce and allreduce only");
}

TEST(Selection, LatencyModel) {
  EXPECT_EQ(*select_plan(with(kBcast, "lambda", "9/5")).lambda, Rational(9, 5));
  const PlanRequest sr = select_plan(with(with(kBcast, "s", "1"), "r", "3"));
  ASSERT_TRUE(sr.model);
  EXPECT_EQ(sr.model->r, Rational(3));
  EXPECT_EQ(error_of(with(kBcast, "lambda", "0.5")), "--lambda must be at least 1, got 0.5");
  EXPECT_NE(error_of(with(kBcast, "lambda", "nan")).find("--lambda must be a finite number"), std::string::npos);
  EXPECT_EQ(error_of(with(with(kBcast, "lambda", "2"), "s", "1")), "give either --lambda or --s and --r, not both");
  EXPECT_EQ(error_of(with(kBcast, "s", "1")), "--s needs --r");
  EXPECT_EQ(error_of(with(with(kBcast, "s", "0"), "r", "1")), "--s must be positive, got 0");
}

TEST(Selection, AlphaJoinsTheLambdaTree) {
  const Given lt = with(kBcast, "algo", "lambda");
  EXPECT_EQ(select_plan(with(lt, "alpha", "0.4")).algo, "lambda:0.4");
  EXPECT_EQ(error_of(with(kBcast, "alpha", "0.4")), "--alpha applies to --algo lambda only");
  EXPECT_EQ(error_of(with(with(lt, "algo", "lambda:0.5"), "alpha", "0.4")), "alpha given twice: in --algo lambda:0.5 and in --alpha");
  EXPECT_EQ(error_of(with(lt, "alpha", "1")), "--alpha must lie strictly between 0 and 1, got 1");
}

TEST(Selection, S2PSourcesAreResolvedOnce) {
  const Given s2p{{"op", "s2p"}, {"algo", "br-lin"}, {"p", "16"}, {"bytes", "8"}, {"mesh", "4x4"},
                  {"sources", "4"}, {"dist", "diag-right"}};
  const PlanRequest r = select_plan(s2p);
  ASSERT_TRUE(r.mesh.has_value());
  EXPECT_EQ(r.mesh->rows, 4);
  EXPECT_EQ(r.mesh->cols, 4);
  EXPECT_EQ(r.sources, source_distribution("diag-right", Mesh{4, 4}, 4));
  // The builder reads the same list the oracle will.
  EXPECT_EQ(s2p_request_sources(r, s2p_request_mesh(r)), source_distribution("diag-right", Mesh{4, 4}, 4));
  // Without --sources/--dist/--source-list: the one "equal" source, resolved here too.
  const PlanRequest one = select_plan({{"op", "s2p"}, {"algo", "br-lin"}, {"p", "16"}, {"bytes", "8"}});
  EXPECT_FALSE(one.mesh.has_value());
  EXPECT_EQ(one.sources, source_distribution("equal", Mesh{4, 4}, 1));
}

TEST(Selection, S2PSourceTextsAreCheckedNamingTheOption) {
  const Mesh m{4, 4};
  const std::optional<std::string> none;
  auto error = [&](const std::optional<std::string>& count, const std::optional<std::string>& dist,
                   const std::optional<std::string>& seed, const std::optional<std::string>& list) -> std::string {
    try {
      (void)s2p_sources(m, count, dist, seed, list);
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error(std::string("17"), none, none, none), "--sources 17 is outside 1..16 (p, from --p or --mesh)");
  EXPECT_EQ(error(none, std::string("row"), none, std::string("1")), "give either --dist or --source-list, not both");
  EXPECT_EQ(error(none, none, std::string("3"), std::string("1")), "--seed applies to --dist random only");
  EXPECT_EQ(error(none, none, none, std::string("1,16")), "--source-list '1,16' names source rank 16, outside 0..15");
  EXPECT_EQ(error(none, none, none, std::string("2,2")), "--source-list gives source 2 twice");
  EXPECT_EQ(error(std::string("3"), none, none, std::string("1,2")),
            "--sources 3 does not match the 2 sources of --source-list '1,2'");
  EXPECT_EQ(error(none, std::string("nowhere"), none, none).rfind("unknown distribution 'nowhere' (one of: row, ", 0), 0u);
  EXPECT_EQ(error(none, std::string("row"), std::string("3"), none), "--seed applies to --dist random only");
  EXPECT_EQ(error(none, none, none, std::string("1,,2")).find("--source-list"), 0u);
  EXPECT_EQ(s2p_sources(m, none, none, none, std::string("3,1,4")), (std::vector<int>{3, 1, 4}));
  EXPECT_EQ(s2p_sources(m, std::string("4"), std::string("random"), std::string("9"), none),
            source_distribution("random", m, 4, 9));
  EXPECT_EQ(parse_source_list("3,17,4"), (std::vector<int>{3, 17, 4}));
}

TEST(Selection, FieldErrorsOfTheLibraryAreWrittenAsOptions) {
  // The registry names the fields; the front ends (CLI and explorer) write them as options.
  EXPECT_EQ(error_of(with(kBcast, "algo", "ring")).rfind("unknown --algo 'ring' for --op bcast (known: ", 0), 0u);
  try {
    check_plan_known("bcast", "ring");
    ADD_FAILURE() << "check_plan_known accepted bcast/ring";
  } catch (const FieldError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("unknown algo 'ring' for op bcast (known: ", 0), 0u) << e.what();
    EXPECT_EQ(frontend::error_line(e).rfind("unknown --algo 'ring' for --op bcast (known: ", 0), 0u);
  }
}

// A plan too large for memory is refused by the selection itself, before the s2p source list
// (p bytes) is made: at p = 2^31 - 1 that list took 29 s before `run` refused p.
TEST(Selection, PlanMemoryIsCheckedFirst) {
  const Given s2p{{"op", "s2p"}, {"algo", "br-lin"}, {"p", "2147483647"}, {"bytes", "8"}, {"sources", "2"}};
  EXPECT_NE(error_of(s2p).find("over 2147483647 ranks"), std::string::npos) << error_of(s2p);
  EXPECT_NE(error_of(s2p).find("of memory, more than"), std::string::npos) << error_of(s2p);
}

TEST(Selection, S2PErrorsNameTheOption) {
  const Given s2p{{"op", "s2p"}, {"algo", "xor"}, {"p", "16"}, {"bytes", "8"}};
  EXPECT_EQ(error_of(with(s2p, "mesh", "3x5")), "--mesh 3x5 has 15 ranks, but --p is 16");
  EXPECT_EQ(error_of(with(s2p, "sources", "17")), "--sources 17 is outside 1..16 (p, from --p or --mesh)");
  EXPECT_EQ(error_of(with(s2p, "source-list", "1,5,9,5")), "--source-list gives source 5 twice");
  EXPECT_EQ(error_of(with(s2p, "source-list", "1,16")), "--source-list '1,16' names source rank 16, outside 0..15");
  EXPECT_NE(error_of(with(s2p, "source-list", "1,,2")).find("has an empty element"), std::string::npos);
  EXPECT_EQ(error_of(with(with(s2p, "dist", "row"), "seed", "3")), "--seed applies to --dist random only");
  EXPECT_EQ(error_of(with(with(s2p, "dist", "random"), "seed", "-1")), "--seed must not be negative, got -1");
  EXPECT_EQ(error_of(with(kBcast, "mesh", "2x4")),
            "--mesh does not apply to --op bcast (only s2p takes it; s2p and the C3 ops take --mesh)");
}

// A message above 1 GiB is refused by the selection, naming --bytes, before anything is built:
// gather over 5 ranks at 1 GiB per block forwards two blocks to the root (three for root 4,
// whose half is the larger), s2p's br-lin combines three of five sources; xor never combines.
TEST(Selection, MessagesAboveOneGiBNameBytes) {
  const Given gather{{"op", "gather"}, {"algo", "binomial"}, {"p", "5"}, {"bytes", "1073741824"}};
  EXPECT_EQ(error_of(gather),
            "--bytes 1073741824: gather/binomial would send a message of 2147483648 bytes (2 blocks of 1073741824 "
            "bytes); the largest message is 1 GiB (1073741824 bytes)");
  EXPECT_EQ(error_of(with(gather, "bytes", "536870912")), "(no error)");
  EXPECT_NE(error_of(with(with(gather, "bytes", "536870912"), "root", "4"))
                .find("--bytes 536870912: gather/binomial would send a message of 1610612736 bytes (3 blocks"),
            std::string::npos);
  const Given s2p{{"op", "s2p"}, {"algo", "br-lin"}, {"p", "5"}, {"sources", "5"}, {"bytes", "1073741824"}};
  EXPECT_EQ(error_of(s2p).rfind("--bytes 1073741824: s2p/br-lin would send a message of 3221225472 bytes", 0), 0U)
      << error_of(s2p);
  EXPECT_EQ(error_of(with(s2p, "algo", "xor")), "(no error)");
}

TEST(Selection, SharedOptionsAreTheCallersBusiness) {
  SelectionContext c;
  c.shared = {"mesh", "seed"};
  // sim: --mesh 16x16 is the machine's partition for a broadcast over 64 ranks.
  EXPECT_FALSE(select_plan(with(kBcast, "mesh", "16x16"), c).mesh.has_value());
  // s2p with a shared seed and no random distribution: the seed is the caller's (placement).
  const Given s2p{{"op", "s2p"}, {"algo", "xor"}, {"p", "16"}, {"bytes", "8"}, {"seed", "7"}, {"sources", "2"}};
  EXPECT_NO_THROW((void)select_plan(s2p, c));
  // ... but the rank mesh still has to hold the ranks.
  EXPECT_EQ(error_of(with(s2p, "mesh", "8x8"), c), "--mesh 8x8 has 64 ranks, but --p is 16");
}

TEST(EmulatedRun, MachineMeshAndLambda) {
  const EmulatedRun run = select_emulated_run({{"machine", "paragon"}, {"op", "s2p"}, {"algo", "br-xy-source"},
                                               {"p", "100"}, {"mesh", "10x10"}, {"sources", "5"},
                                               {"dist", "diag-right"}, {"bytes", "16384"}});
  EXPECT_EQ(run.machine.mesh.dims, (std::vector<int>{10, 10}));
  ASSERT_TRUE(run.request.mesh.has_value());
  EXPECT_EQ(run.request.mesh->rows, 10);
  EXPECT_EQ(run.request.mesh->cols, 10);
  EXPECT_TRUE(run.request.lambda.has_value());
  // Without --mesh, the ranks' near-square mesh becomes the machine's.
  const EmulatedRun c3 = select_emulated_run({{"machine", "delta"}, {"op", "all-to-all"}, {"algo", "2-lev-rc"}, {"p", "12"}});
  EXPECT_EQ(c3.machine.mesh.dims, (std::vector<int>{3, 4}));
  EXPECT_EQ(select_emulated_run({{"machine", "postal:2"}}).request.lambda, Rational(2));
}

TEST(EmulatedRun, MachineLambdaBelowOneIsNamed) {
  try {
    (void)select_emulated_run({{"machine", "logp:1:1:10:0"}, {"algo", "lambda"}, {"p", "8"}});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--algo lambda builds its shape for a postal latency lambda >= 1"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("machine 'logp:1:1:10:0' has lambda 0.3 at 8 bytes"), std::string::npos) << e.what();
  }
  // A shape that does not read λ builds (tests/emulator/emulated_run_test.cpp: every shape).
  EXPECT_EQ(select_emulated_run({{"machine", "logp:1:1:10:0"}, {"algo", "binomial"}, {"p", "8"}}).request.lambda, Rational(1));
}

}  // namespace
}  // namespace postbox
