// Pieces shared by `postbox sim`, `postbox sweep` and `postbox calibrate --machine`
// (defined in cmd_sim.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "postbox/collectives/rational.hpp"
#include "postbox/runtime/plan.hpp"
#include "postbox/runtime/sim/machine.hpp"
#include "postbox/runtime/sim/simulator.hpp"

namespace postbox::cli {

struct SimSpec {
  std::string machine;  // --machine
  std::string op = "bcast";
  std::string algo = "binomial";
  int p = 2;
  std::int64_t bytes = 8;
  std::optional<double> alpha;   // lambda tree split; joins the algo as "lambda:ALPHA"
  std::optional<double> lambda;  // the λ the plan is built for
  std::string mesh;              // RxC override of the profile's mesh
  std::string placement;         // override of the profile's placement
  std::uint64_t seed = 1;
};

// The machine with --mesh/--placement/--seed applied (InputError on bad values).
sim::Machine resolve_machine(const SimSpec& spec);

// The λ the plan is built for: --lambda, else the model's λ at this message size, else (mesh)
// Bruck's experiment 1 run on the machine at this size.
double plan_lambda(const SimSpec& spec, const sim::Machine& m);

// plan_lambda rounded to 1/1000, the PlanRequest::lambda of sim and of plan export --machine.
Rational sim_plan_lambda(const SimSpec& spec, const sim::Machine& m);

// Builds the plan through the collectives registry.
Plan make_sim_plan(const SimSpec& spec, const sim::Machine& m);

// Rational close to x (denominator 1000), for PlanRequest::lambda.
double round_lambda(double x);

}  // namespace postbox::cli
