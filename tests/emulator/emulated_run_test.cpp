// An emulated run on a machine whose λ is below 1 (selection.hpp, select_emulated_run and
// shape_reads_lambda): the shapes that do not read λ build and run, the ones that do are refused
// with the reason; and the classification is exact for every registered plan.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "algos.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

// λ at 8 bytes: (2o + L + 7G) / max(o, g + 7G) = 2.56 / 4.56.
constexpr const char* kSlowSends = "logp:1.5:0.25:4:0.08";

// Every registered plan family with a parameter, as concrete algorithms (hier also with a
// λ-reading inner shape).
std::vector<std::string> concrete(const std::string& op, const std::string& listed) {
  if (op == "bcast" && listed == "hier") return {"hier", "hier:binomial,flat", "hier:fibo"};
  return test::concrete_algos(listed);
}

std::map<std::string, std::string> selection(const std::string& op, const std::string& algo, int p) {
  std::map<std::string, std::string> given{{"op", op}, {"algo", algo}, {"p", std::to_string(p)}};
  given["bytes"] = op == "barrier" ? "0" : "8";
  if (op == "s2p") given["sources"] = std::to_string((p + 1) / 2);
  return given;
}

TEST(EmulatedRun, TheMachineHasLambdaBelowOne) {
  EXPECT_LT(sim::nominal_lambda(sim::load_machine(kSlowSends), 8), 1.0);
}

// Each shape either builds and runs on the machine, or is refused naming --algo, the reason and
// the remedy; given --lambda it builds.
TEST(EmulatedRun, ShapesThatDoNotReadLambdaBuildBelowOne) {
  std::set<std::string> built, refused;
  for (const PlanBuilderInfo& b : list_plan_builders()) {
    for (const std::string& algo : concrete(b.op, b.algo)) {
      auto given = selection(b.op, algo, 8);
      given["machine"] = kSlowSends;
      SCOPED_TRACE(b.op + "/" + algo);
      if (!shape_reads_lambda(b.op, algo)) {
        const EmulatedRun run = select_emulated_run(given);
        EXPECT_EQ(run.request.lambda, Rational(1));
        const sim::SimResult r = sim::simulate(build_plan(run.request), run.machine);
        EXPECT_GT(r.time_ticks, 0);
        built.insert(b.op + "/" + algo);
        continue;
      }
      try {
        (void)select_emulated_run(given);
        ADD_FAILURE() << "built";
      } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("--algo " + algo + " builds its shape for a postal latency lambda >= 1"), std::string::npos) << what;
        const std::string bytes = given["bytes"];
        char lambda[32];
        std::snprintf(lambda, sizeof lambda, "%.6g", sim::nominal_lambda(sim::load_machine(kSlowSends), std::stoull(bytes)));
        EXPECT_NE(what.find(std::string("has lambda ") + lambda + " at " + bytes + " bytes"), std::string::npos) << what;
        EXPECT_NE(what.find("give --lambda L, L >= 1"), std::string::npos) << what;
      }
      refused.insert(b.op + "/" + algo);
      given["lambda"] = "2";
      EXPECT_NO_THROW((void)build_plan(select_emulated_run(given).request));
    }
  }
  for (const char* shape : {"bcast/flat", "bcast/binary", "bcast/kary:3", "bcast/binomial", "bcast/hier", "reduce/binomial",
                            "gather/binomial", "allreduce/recursive-doubling", "allreduce/reduce-bcast", "barrier/dissemination"})
    EXPECT_TRUE(built.contains(shape)) << shape;
  for (const char* shape : {"bcast/lambda", "bcast/greedy", "bcast/fibo", "bcast/hier:fibo", "allreduce/postal",
                            "allreduce/postal-delay-recv", "allreduce/postal-delay-send", "barrier/combine", "barrier/fibo"})
    EXPECT_TRUE(refused.contains(shape)) << shape;
}

// shape_reads_lambda() is exact for every registered plan: a shape it calls λ-free gives the same
// plan at every λ of the grid (and every p); every other shape gives two different plans
// somewhere in it.
TEST(EmulatedRun, TheLambdaClassificationIsExact) {
  const std::vector<Rational> lambdas{Rational(1), Rational(3, 2), Rational(2), Rational(5, 2), Rational(7, 2), Rational(10)};
  for (const PlanBuilderInfo& b : list_plan_builders()) {
    for (const std::string& algo : concrete(b.op, b.algo)) {
      SCOPED_TRACE(b.op + "/" + algo);
      bool differs = false;
      int compared = 0;
      for (const int p : {7, 16, 33}) {
        PlanRequest req;
        try {
          req = select_plan(selection(b.op, algo, p));
        } catch (const InputError&) {
          continue;  // not a p this op allows
        }
        std::set<std::string> plans;
        try {
          for (const Rational& lambda : lambdas) {
            req.lambda = lambda;
            plans.insert(plan_to_json(build_plan(req)));
          }
        } catch (const InputError&) {
          continue;  // not a p this algorithm allows (logp-lev-bfly: powers of two)
        }
        ++compared;
        differs = differs || plans.size() > 1;
      }
      EXPECT_GT(compared, 0);
      EXPECT_EQ(differs, shape_reads_lambda(b.op, algo));
    }
  }
  EXPECT_TRUE(shape_reads_lambda("an-op-registered-elsewhere", "x"));  // assumed to read λ
}

}  // namespace
}  // namespace postbox
