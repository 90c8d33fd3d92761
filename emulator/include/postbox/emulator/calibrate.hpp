// Bruck et al. §2.2: measuring λ with two experiments, run inside the emulator.
//   Experiment 1: P0 sends to P1..Pk in turn; Pk answers P0.          T = t0(k − 1 + 2λ)
//   Experiment 2: P0 sends to P1..Pk; Pk then sends to Pk−1, ..., P0.  T = 2t0(k − 1 + λ)
// T is the time observed at P0. Both are fitted over k by fit_bruck() (runtime/calibrate.hpp),
// the fit that the calibration of this machine uses too.
#pragma once

#include <cstdint>
#include <vector>

#include "postbox/runtime/plan.hpp"
#include "postbox/emulator/machine.hpp"

namespace postbox::sim {

struct LambdaFit {
  std::uint64_t bytes = 0;
  double t0_exp1_us = 0, lambda_exp1 = 0;
  double t0_exp2_us = 0, lambda_exp2 = 0;
  double max_residual_us = 0;  // largest |T − fit| over both experiments
};

// The experiments' plans over k + 1 ranks (P0 = rank 0, Pi = rank i). k < 1 → InputError.
Plan bruck_experiment_plan(int experiment, int k, std::uint64_t bytes);

// Runs both experiments for k = k_min..k_max on `machine` and fits them. k_min < 1 or
// k_max < k_min + 1, or on a mesh more than kMaxMeshPackets packets in all the experiments'
// messages (checked before any run) → InputError.
LambdaFit measure_lambda(const Machine& machine, std::uint64_t bytes, int k_min = 2, int k_max = 12);

}  // namespace postbox::sim
