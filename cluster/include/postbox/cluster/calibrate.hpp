// The figures between processes (two-level latency, measured): the experiments of
// runtime/calibrate.hpp (Cordsen's notification times, the sender-side slope, Bruck's
// experiments 1 and 2) run over MPI point-to-point between processes 0 and 1 of a communicator,
// analysed by the same functions (analyse_run, combine_runs). docs/cluster.md, "Two-level
// calibration".
//
// Transport: P0 is process 0, Pk is process 1; the k − 1 receivers before Pk are messages to
// process 1 under another tag, which it drains after answering, so every message crosses between
// the processes (the cost the leaders' tree pays) while only two processes run. After each
// experiment process 1 says it is ready, so no experiment times the previous one's drain.
// Cordsen's notification time is stamped on process 1's clock and moved onto process 0's with the
// offset of the fastest of 32 ping-pongs per run (NTP's rule; 0 within one node, where
// CLOCK_MONOTONIC is shared). Messages are empty except the 8-byte stamps.
#pragma once

#include <mpi.h>

#include "postbox/runtime/calibrate.hpp"

namespace postbox::cluster {

// Collective over comm: processes 0 and 1 measure, the others wait without spinning. Every
// process returns the figures (broadcast from process 0), with processes = comm's size and
// threads = `threads`. Fewer than 2 processes, threads < 1 or bad options → InputError (on every
// process); a measurement too noisy to fit → std::runtime_error, as calibrate().
InterCalibration calibrate_mpi(MPI_Comm comm, const CalibrateOptions& options = {}, int threads = 1);

// Both levels: process 0 measures inside itself (calibrate(), up to `attempts` times while a
// measurement is too noisy) while the others wait without spinning, then calibrate_mpi() (also up
// to `attempts` times while too noisy, by the same rule: measure_with_retries(); every process
// sees the same outcome of each). Process
// 0 returns both (inter set, source "measured"); the others the inter figures only (their own
// level's figures left 0). Collective; errors as calibrate_mpi(), on every process.
Calibration calibrate_two_levels(MPI_Comm comm, const CalibrateOptions& options, int threads, int attempts = 5);

}  // namespace postbox::cluster
