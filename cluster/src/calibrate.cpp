#include "postbox/cluster/calibrate.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "postbox/cluster/mpi_env.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::cluster {
namespace {

enum Tag : int { kLive = 1, kDummy = 2, kAnswer = 3, kBack = 4, kReady = 5, kPing = 6, kGo = 7 };
// The order of runtime/calibrate.cpp's schedule: notification, Bruck 1, Bruck 2, sender side.
enum class Exp { notification = 0, exp1 = 1, exp2 = 2, send_only = 3 };
constexpr std::array<Exp, 4> kExps{Exp::notification, Exp::exp1, Exp::exp2, Exp::send_only};

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void send0(int to, int tag, MPI_Comm comm) { MPI_Send(nullptr, 0, MPI_BYTE, to, tag, comm); }
void recv0(int from, int tag, MPI_Comm comm) { MPI_Recv(nullptr, 0, MPI_BYTE, from, tag, comm, MPI_STATUS_IGNORE); }

// Process 1's clock minus process 0's, from the fastest ping-pong (process 0's value).
double clock_offset(int me, MPI_Comm comm) {
  double best_rtt = std::numeric_limits<double>::infinity(), offset = 0;
  for (int i = 0; i < 32; ++i) {
    if (me == 0) {
      const std::int64_t t0 = now_ns();
      send0(1, kPing, comm);
      std::int64_t stamp = 0;
      MPI_Recv(&stamp, 1, MPI_INT64_T, 1, kPing, comm, MPI_STATUS_IGNORE);
      const std::int64_t t1 = now_ns();
      const auto rtt = static_cast<double>(t1 - t0);
      if (rtt < best_rtt) {
        best_rtt = rtt;
        offset = static_cast<double>(stamp) - (static_cast<double>(t0) + static_cast<double>(t1)) / 2;
      }
    } else {
      recv0(0, kPing, comm);
      const std::int64_t stamp = now_ns();
      MPI_Send(&stamp, 1, MPI_INT64_T, 0, kPing, comm);
    }
  }
  return offset;
}

// Process 0's side of one run: every (trial, k, experiment), timed.
void measurer(const CalibrateOptions& o, double offset, MPI_Comm comm,
              std::array<std::vector<std::vector<double>>, 4>& out) {
  for (int trial = 0; trial < o.trials; ++trial) {
    for (int k = 1; k <= o.k_max; ++k) {
      for (Exp e : kExps) {
        double t = 0;
        const std::int64_t start = now_ns();
        if (e == Exp::send_only) {
          for (int i = 0; i < k; ++i) send0(1, kDummy, comm);
          t = static_cast<double>(now_ns() - start);
        } else {
          for (int i = 1; i < k; ++i) send0(1, kDummy, comm);
          send0(1, kLive, comm);
          std::int64_t stamp = 0;
          MPI_Recv(&stamp, 1, MPI_INT64_T, 1, kAnswer, comm, MPI_STATUS_IGNORE);
          t = e == Exp::notification ? static_cast<double>(stamp) - offset - static_cast<double>(start)
                                     : static_cast<double>(now_ns() - start);
          if (e == Exp::exp2) {
            for (int i = 1; i < k; ++i) recv0(1, kBack, comm);
          }
        }
        recv0(1, kReady, comm);
        out[static_cast<std::size_t>(e)][static_cast<std::size_t>(k - 1)].push_back(t);
      }
    }
  }
}

// Process 1's side: Pk, answering, then draining what went to the receivers before it.
void responder(const CalibrateOptions& o, MPI_Comm comm) {
  for (int trial = 0; trial < o.trials; ++trial) {
    for (int k = 1; k <= o.k_max; ++k) {
      for (Exp e : kExps) {
        if (e == Exp::send_only) {
          for (int i = 0; i < k; ++i) recv0(0, kDummy, comm);
        } else {
          recv0(0, kLive, comm);
          const std::int64_t stamp = now_ns();
          // Bruck §2.2, experiment 2: Pk answers Pk−1, ..., P1, then P0.
          if (e == Exp::exp2) {
            for (int i = 1; i < k; ++i) send0(0, kBack, comm);
          }
          MPI_Send(&stamp, 1, MPI_INT64_T, 0, kAnswer, comm);
          for (int i = 1; i < k; ++i) recv0(0, kDummy, comm);
        }
        send0(0, kReady, comm);
      }
    }
  }
}

// Process 0's error (empty: none) thrown as std::runtime_error on every process of comm.
void throw_everywhere(std::string error, MPI_Comm comm) {
  int error_len = static_cast<int>(error.size());
  MPI_Bcast(&error_len, 1, MPI_INT, 0, comm);
  error.resize(static_cast<std::size_t>(error_len));
  MPI_Bcast(error.data(), error_len, MPI_CHAR, 0, comm);
  if (!error.empty()) throw std::runtime_error(error);
}

}  // namespace

InterCalibration calibrate_mpi(MPI_Comm comm, const CalibrateOptions& o, int threads) {
  int me = 0, size = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  if (size < 2) {
    throw InputError("calibrating between processes needs at least 2 processes (mpirun -np 2 or more), got " +
                     std::to_string(size));
  }
  if (threads < 1) throw InputError("calibrating between processes: threads per process must be at least 1");
  check_calibrate_options(o);
  const std::int64_t start = now_ns();
  std::vector<CalibrationRun> runs;
  if (me <= 1) {
    for (int run = 0; run < o.runs; ++run) {
      // Process 0 decides whether another run fits the budget and tells process 1.
      int go = 1;
      if (me == 0) {
        go = run == 0 || o.budget_ns == 0 || now_ns() - start <= o.budget_ns ? 1 : 0;
        MPI_Send(&go, 1, MPI_INT, 1, kGo, comm);
      } else {
        MPI_Recv(&go, 1, MPI_INT, 0, kGo, comm, MPI_STATUS_IGNORE);
      }
      if (go == 0) break;
      const double offset = clock_offset(me, comm);
      if (me == 0) {
        std::array<std::vector<std::vector<double>>, 4> samples;
        for (auto& v : samples) v.resize(static_cast<std::size_t>(o.k_max));
        // One untimed trial first warms the connection and the caches.
        CalibrateOptions warm = o;
        warm.trials = 1;
        std::array<std::vector<std::vector<double>>, 4> discard;
        for (auto& v : discard) v.resize(static_cast<std::size_t>(o.k_max));
        measurer(warm, offset, comm, discard);
        measurer(o, offset, comm, samples);
        runs.push_back(analyse_run(samples));
      } else {
        CalibrateOptions warm = o;
        warm.trials = 1;
        responder(warm, comm);
        responder(o, comm);
      }
    }
  }
  sleeping_barrier(comm);
  // Process 0's figures, or its error, to everyone.
  InterCalibration c;
  std::string error;
  if (me == 0) {
    try {
      static_cast<LatencyFigures&>(c) = combine_runs(runs, o);
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    c.elapsed_ms = static_cast<double>(now_ns() - start) / 1e6;
  }
  throw_everywhere(error, comm);
  std::array<double, 15> d{c.s_ns, c.r_ns, c.lambda, c.t0_ns, c.lambda_exp1, c.lambda_exp2, c.t0_exp2_ns,
                           c.first_notification_ns, c.second_notification_ns, c.s_spread_ns, c.r_spread_ns,
                           c.lambda_exp1_spread, c.lambda_exp2_spread, c.elapsed_ms, c.lambdas_agree ? 1.0 : 0.0};
  std::array<int, 3> n{c.runs, c.k_max, c.trials};
  MPI_Bcast(d.data(), static_cast<int>(d.size()), MPI_DOUBLE, 0, comm);
  MPI_Bcast(n.data(), static_cast<int>(n.size()), MPI_INT, 0, comm);
  c.s_ns = d[0], c.r_ns = d[1], c.lambda = d[2], c.t0_ns = d[3], c.lambda_exp1 = d[4], c.lambda_exp2 = d[5];
  c.t0_exp2_ns = d[6], c.first_notification_ns = d[7], c.second_notification_ns = d[8], c.s_spread_ns = d[9];
  c.r_spread_ns = d[10], c.lambda_exp1_spread = d[11], c.lambda_exp2_spread = d[12], c.elapsed_ms = d[13];
  c.lambdas_agree = d[14] != 0;
  c.runs = n[0], c.k_max = n[1], c.trials = n[2];
  c.processes = size;
  c.threads = threads;
  return c;
}

Calibration calibrate_two_levels(MPI_Comm comm, const CalibrateOptions& o, int threads, int attempts) {
  int me = 0;
  MPI_Comm_rank(comm, &me);
  check_calibrate_options(o);
  Calibration c;
  std::string error;
  if (me == 0) {
    try {
      c = calibrate_with_retries(o, attempts);
    } catch (const InputError&) {
      throw;
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
  }
  sleeping_barrier(comm);
  throw_everywhere(error, comm);
  // calibrate_mpi() throws the same error on every process, so all retry (with the same
  // doubled trials) or all give up.
  c.inter = measure_with_retries(o, attempts, [&](const CalibrateOptions& x) { return calibrate_mpi(comm, x, threads); });
  return c;
}

}  // namespace postbox::cluster
