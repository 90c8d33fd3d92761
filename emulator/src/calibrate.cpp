#include "postbox/emulator/calibrate.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/emulator/simulator.hpp"

namespace postbox::sim {
namespace {

Op make(OpCode code, int peer, std::uint64_t bytes, std::vector<std::uint32_t> deps = {}) {
  Op op;
  op.code = code;
  op.peer = peer;
  op.a = Region{Buffer::user, 0, bytes};
  op.deps = std::move(deps);
  return op;
}

}  // namespace

Plan bruck_experiment_plan(int experiment, int k, std::uint64_t bytes) {
  if (k < 1) throw InputError("Bruck experiment: k must be at least 1");
  if (experiment != 1 && experiment != 2) throw InputError("Bruck experiment must be 1 or 2");
  Plan plan;
  plan.op = experiment == 1 ? "bruck-exp1" : "bruck-exp2";
  plan.algo = "bruck-lambda";
  plan.p = k + 1;
  plan.root = 0;
  plan.bytes = bytes;
  plan.user_bytes.assign(static_cast<std::size_t>(k + 1), bytes);
  plan.scratch_bytes.assign(static_cast<std::size_t>(k + 1), 0);
  std::vector<RankProgram> ranks(static_cast<std::size_t>(k + 1));
  auto& p0 = ranks[0].ops;
  for (int i = 1; i <= k; ++i) {
    std::vector<std::uint32_t> deps;
    if (i > 1) deps.push_back(static_cast<std::uint32_t>(i - 2));
    p0.push_back(make(OpCode::send, i, bytes, deps));
  }
  p0.push_back(make(OpCode::recv, k, bytes, {static_cast<std::uint32_t>(k - 1)}));
  auto& pk = ranks[static_cast<std::size_t>(k)].ops;
  pk.push_back(make(OpCode::recv, 0, bytes));
  if (experiment == 1) {
    pk.push_back(make(OpCode::send, 0, bytes, {0}));
    for (int i = 1; i < k; ++i) ranks[static_cast<std::size_t>(i)].ops.push_back(make(OpCode::recv, 0, bytes));
  } else {
    for (int i = k - 1; i >= 0; --i)
      pk.push_back(make(OpCode::send, i, bytes, {static_cast<std::uint32_t>(pk.size() - 1)}));
    for (int i = 1; i < k; ++i) {
      ranks[static_cast<std::size_t>(i)].ops.push_back(make(OpCode::recv, 0, bytes));
      ranks[static_cast<std::size_t>(i)].ops.push_back(make(OpCode::recv, k, bytes, {0}));
    }
  }
  plan.set_programs(std::move(ranks));
  plan.finalize();
  return plan;
}

LambdaFit measure_lambda(const Machine& machine, std::uint64_t bytes, int k_min, int k_max) {
  if (k_min < 1 || k_max < k_min + 1) throw InputError("measure_lambda needs 1 <= k_min < k_max");
  if (machine.kind == ModelKind::mesh) {
    // Bounded before any run: experiments 1 and 2 for k send 3k + 1 messages in all.
    const std::uint64_t pb = machine.mesh.packet_bytes;
    const std::uint64_t per_message = pb == 0 ? 1 : std::max<std::uint64_t>(1, bytes / pb + (bytes % pb != 0));
    std::uint64_t messages = 0;
    for (int k = k_min; k <= k_max; ++k) messages += 3 * static_cast<std::uint64_t>(k) + 1;
    if (per_message > kMaxMeshPackets / messages)
      throw InputError("the experiments send " + std::to_string(messages) + " messages of " + std::to_string(per_message) +
                       " packets, more than " + std::to_string(kMaxMeshPackets) + " packets in all (minutes of emulation)");
  }
  LambdaFit out;
  out.bytes = bytes;
  std::vector<double> ks, t1, t2;
  for (int k = k_min; k <= k_max; ++k) {
    ks.push_back(k);
    t1.push_back(simulate(bruck_experiment_plan(1, k, bytes), machine).per_rank_us[0]);
    t2.push_back(simulate(bruck_experiment_plan(2, k, bytes), machine).per_rank_us[0]);
  }
  const BruckLambdaFit f = fit_bruck(ks, t1, t2);
  out.t0_exp1_us = f.e1.t0_ns;  // fit_bruck's "ns" is whatever unit T has: µs here
  out.lambda_exp1 = f.e1.lambda;
  out.t0_exp2_us = f.e2.t0_ns;
  out.lambda_exp2 = f.e2.lambda;
  out.max_residual_us = f.max_residual;
  return out;
}

}  // namespace postbox::sim
