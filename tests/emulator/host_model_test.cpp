// host_model.hpp and machine.hpp's normalisation: the engine charges one vocabulary of host
// costs, so a cost model is its registration alone, and the built-in models are the
// vocabulary's instances the header's table says.
#include "postbox/emulator/host_model.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../collectives/algo_table.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::sim {
namespace {

Plan plan_of(const char* op, const char* algo, int p, std::int64_t bytes) {
  PlanRequest r;
  r.op = op;
  r.algo = algo;
  r.p = p;
  r.bytes = bytes;
  r.lambda = Rational(2);
  return build_plan(r);
}

std::string error_of(const char* spec) {
  try {
    (void)load_machine(spec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The toy model of this test: a send keeps the sender busy D and the message arrives 2D after
// the send starts; receiving is free. It is the postal model with λ = 2 in units of D, so every
// emulated time is D times postal:2's, exactly, if the engine charges nothing but HostCosts.
void register_toy() {
  register_host_model(HostModel{"toy", {"D"}, "sender busy D, message usable 2D after the send starts",
                                [](const std::vector<double>& f) {
                                  HostCosts c;
                                  c.send_overhead.base = c.send_gap.base = f[0];
                                  c.recv_gap.base = f[0];
                                  c.wire = 2 * f[0];
                                  return c;
                                }});
}

TEST(HostModel, AToyModelIsItsRegistrationAlone) {
  register_toy();
  const Machine toy = load_machine("toy:3");
  EXPECT_EQ(toy.kind, ModelKind::host);
  EXPECT_EQ(model_name(toy), "toy");
  EXPECT_EQ(toy.figures, std::vector<double>{3});
  EXPECT_DOUBLE_EQ(nominal_lambda(toy, 8), 2.0);
  const Machine postal = load_machine("postal:2");
  for (const auto& a : testing_support::kAlgos) {
    for (int p : {2, 7, 16}) {
      const Plan plan = plan_of(a.op, a.algo, p, 8);
      SCOPED_TRACE(std::string(a.op) + "/" + a.algo + " p=" + std::to_string(p));
      EXPECT_EQ(simulate(plan, toy).time_ticks, 3 * simulate(plan, postal).time_ticks);
    }
  }
  // The profile form: kind = "toy" and one field per figure, nothing else.
  const Machine from_profile = parse_profile("name = \"toy3\"\n[model]\nkind = \"toy\"\nD = 3\n", "toy3.toml");
  EXPECT_EQ(from_profile.host, toy.host);
  EXPECT_EQ(from_profile.kind, ModelKind::host);
}

TEST(HostModel, ItsFiguresAreCheckedLikeEveryMachineNumber) {
  register_toy();
  EXPECT_EQ(error_of("toy"), "machine 'toy:D[:C]' takes 1 or 2 numbers, got 'toy'");
  EXPECT_EQ(error_of("toy:1:2:3"), "machine 'toy:D[:C]' takes 1 or 2 numbers, got 'toy:1:2:3'");
  EXPECT_NE(error_of("toy:-1").find("must not be negative"), std::string::npos) << error_of("toy:-1");
  EXPECT_NE(error_of("toy:nan").find("toy:nan"), std::string::npos) << error_of("toy:nan");
  EXPECT_EQ(load_machine("toy:3:0.5").copy_us_per_byte, 0.5);
  EXPECT_THROW((void)parse_profile("name = \"t\"\n[model]\nkind = \"toy\"\nD = 3\nE = 1\n", "t.toml"), InputError);
  EXPECT_THROW((void)parse_profile("name = \"t\"\n[model]\nkind = \"toy\"\n", "t.toml"), InputError);
  // Costs a model computes out of range are refused when the machine is made, not mid-run.
  register_host_model(HostModel{"toy-huge", {"D"}, "sender busy D·10^9", [](const std::vector<double>& f) {
                                  HostCosts c;
                                  c.send_overhead.base = f[0] * 1e9;
                                  return c;
                                }});
  EXPECT_NE(error_of("toy-huge:10").find("host costs must be finite numbers in 0..1e9"), std::string::npos)
      << error_of("toy-huge:10");
  EXPECT_EQ(error_of("toy-huge:0"), "(no error)");
}

TEST(HostModel, RegistryNamesAndRefusals) {
  register_toy();
  const auto names = host_model_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "toy"), names.end());
  EXPECT_FALSE(find_host_model("no-such-model").has_value());
  EXPECT_DEATH(register_host_model(HostModel{"postal", {}, "", [](const std::vector<double>&) { return HostCosts{}; }}),
               "built-in machine kind");
  EXPECT_DEATH(register_host_model(HostModel{"Toy", {}, "", [](const std::vector<double>&) { return HostCosts{}; }}),
               "lower-case word");
}

// The header's table, model by model.
TEST(HostModel, TheBuiltInModelsNormaliseAsDocumented) {
  const HostCosts postal = normalised_host_costs(load_machine("postal:2.5"));
  EXPECT_EQ(postal.send_overhead, (Linear{1, 0, 0}));
  EXPECT_EQ(postal.send_gap, (Linear{1, 0, 0}));
  EXPECT_EQ(postal.wire, 2.5);
  EXPECT_EQ(postal.recv_overhead, (Linear{0, 0, 0}));
  EXPECT_EQ(postal.recv_gap, (Linear{1, 0, 0}));
  EXPECT_FALSE(postal.first_byte_free);
  const HostCosts sr = normalised_host_costs(load_machine("sr:2:5"));
  EXPECT_EQ(sr.send_overhead, (Linear{2, 0, 0}));
  EXPECT_EQ(sr.send_gap, (Linear{2, 0, 0}));
  EXPECT_EQ(sr.wire, 2);
  EXPECT_EQ(sr.recv_overhead, (Linear{5, 0, 0}));
  EXPECT_EQ(sr.recv_gap, (Linear{0, 0, 0}));
  const HostCosts logp = normalised_host_costs(load_machine("logp:5:1:2:0.25"));
  EXPECT_EQ(logp.send_overhead, (Linear{1, 0, 0}));
  EXPECT_EQ(logp.send_gap, (Linear{2, 0.25, 0}));
  EXPECT_EQ(logp.wire, 6);
  EXPECT_EQ(logp.recv_overhead, (Linear{1, 0.25, 0}));
  EXPECT_EQ(logp.recv_gap, (Linear{2, 0.25, 0}));
  EXPECT_TRUE(logp.first_byte_free);
  EXPECT_EQ(cost_at(logp, logp.recv_overhead, 9), 1 + 0.25 * 8);  // (b − 1)·G
  EXPECT_EQ(cost_at(logp, logp.recv_overhead, 0), 1);
  EXPECT_EQ(logp.eager_limit, kAlwaysEager);  // no S: every message eager
  // LogGOPS: O per byte on the send's CPU, max(O, G) per byte on the accepting CPU, S the eager limit.
  const HostCosts loggops = normalised_host_costs(load_machine("logp:5:1:2:0.25:O=0.5:S=64"));
  EXPECT_EQ(loggops.send_overhead, (Linear{1, 0.5, 0}));
  EXPECT_EQ(loggops.send_gap, (Linear{2, 0.25, 0}));
  EXPECT_EQ(loggops.wire, 6);
  EXPECT_EQ(loggops.recv_overhead, (Linear{1, 0.5, 0}));
  EXPECT_EQ(loggops.recv_gap, (Linear{2, 0.25, 0}));
  EXPECT_EQ(loggops.eager_limit, 64U);
  EXPECT_EQ(normalised_host_costs(load_machine("logp:5:1:2:0.25:O=0.125")).recv_overhead, (Linear{1, 0.25, 0}));
  EXPECT_FALSE(has_rendezvous(load_machine("logp:5:1:2:0.25:O=0.5")));
  EXPECT_TRUE(has_rendezvous(load_machine("logp:5:1:2:0.25:S=0")));
  const Machine delta = load_machine("delta");
  const HostCosts mesh = normalised_host_costs(delta);
  const Cost& so = delta.send_mode == SendMode::blocking ? delta.send_overhead : delta.isend_overhead;
  EXPECT_EQ(mesh.send_overhead, (Linear{so.base_us, so.per_byte_us, so.per_packet_us}));
  EXPECT_EQ(mesh.recv_overhead, (Linear{delta.recv_overhead.base_us, delta.recv_overhead.per_byte_us,
                                        delta.recv_overhead.per_packet_us}));
  EXPECT_EQ(mesh.wire, 0);
  EXPECT_EQ(mesh.send_gap, Linear{});
  EXPECT_DEATH((void)normalised_host_costs(load_machine("cluster:2x2")), "its levels have the host costs");
}

// A registered copy of each built-in model (its figures mapped by normalised_host_costs) gives
// the built-in model's times exactly: the engine reads HostCosts, never the model's kind.
TEST(HostModel, ARegisteredCopyOfABuiltInModelEmulatesIdentically) {
  struct Copy {
    const char* name;
    std::vector<std::string> figures;
    const char* builtin;
    const char* copy;
  };
  const std::vector<Copy> copies{{"postal-copy", {"L"}, "postal:2.5", "postal-copy:2.5"},
                                 {"sr-copy", {"S", "R"}, "sr:2:5", "sr-copy:2:5"},
                                 {"logp-copy", {"L", "o", "g", "G"}, "logp:5:1:2:0.25", "logp-copy:5:1:2:0.25"}};
  for (const Copy& c : copies) {
    const std::string kind = std::string(c.builtin).substr(0, std::string(c.builtin).find(':'));
    register_host_model(HostModel{c.name, c.figures, "a copy of " + kind, [kind](const std::vector<double>& f) {
                                    std::string spec = kind;
                                    for (const double x : f) spec += ":" + std::to_string(x);
                                    return normalised_host_costs(load_machine(spec));
                                  }});
    const Machine builtin = load_machine(c.builtin);
    const Machine copy = load_machine(c.copy);
    EXPECT_EQ(copy.host, normalised_host_costs(builtin)) << c.name;
    for (const auto& a : testing_support::kAlgos) {
      for (std::int64_t bytes : {0, 8, 1000}) {
        const Plan plan = plan_of(a.op, a.algo, 9, bytes);
        SCOPED_TRACE(std::string(c.name) + " " + a.op + "/" + a.algo + " bytes=" + std::to_string(bytes));
        const SimResult x = simulate(plan, builtin);
        const SimResult y = simulate(plan, copy);
        EXPECT_EQ(x.time_ticks, y.time_ticks);
        EXPECT_EQ(x.per_rank_ticks, y.per_rank_ticks);
      }
    }
  }
}

}  // namespace
}  // namespace postbox::sim
