// Built against an install tree by tests/install_consumer.cmake: a machine read from its model
// string through postbox::frontend runs a broadcast in the emulator, as the same machine built
// by hand does; a malformed string is refused with an InputError.
#include <cstdio>

#include "postbox/collectives/plans.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/runtime/check.hpp"

int main() {
  postbox::PlanRequest request;
  request.op = "bcast";
  request.algo = "binomial";
  request.p = 8;
  const postbox::Plan plan = postbox::build_plan(request);
  const postbox::sim::Machine read = postbox::sim::load_machine("postal:2");
  postbox::sim::Machine by_hand;
  by_hand.kind = postbox::sim::ModelKind::postal;
  by_hand.lambda = 2;
  const auto a = postbox::sim::simulate(plan, read);
  const auto b = postbox::sim::simulate(plan, by_hand);
  if (a.time_ticks != b.time_ticks || a.time_us <= 0) {
    std::printf("postal:2 took %g, the machine built by hand %g\n", a.time_us, b.time_us);
    return 1;
  }
  try {
    (void)postbox::sim::load_machine("postal:x");
    std::printf("a malformed model string was accepted\n");
    return 1;
  } catch (const postbox::InputError&) {
  }
  std::printf("emulate: bcast binomial, p = 8 on postal:2: %g units\n", a.time_us);
  return 0;
}
