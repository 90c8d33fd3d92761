// Calibration of this machine: the send latency s, the receive latency r (Cordsen §5) and the
// postal latency λ (Bruck §2.2), measured with the runtime's own signalling (Mailboxes
// notify/recv between two threads).
//
// Experiments (P0 is the measuring thread; "Pk" is the one other running thread; the ranks in
// between are mailbox ranks whose messages P0 drains afterwards, so only two threads ever run
// at once and two cores suffice):
//  * Cordsen's notification times: P0 notifies P1..Pj back to back; Pj stamps the time it
//    received (cross-core CLOCK_MONOTONIC) and returns the stamp. t_j = j·s + r; t_1 = s + r
//    and t_2 = 2s + r are the paper's "first and second notification" (s = 27, r = 88 µs on MANNA).
//  * Sender side: P0 times k back-to-back notifies alone; the slope over k is s.
//  * Bruck's experiment 1: P0 notifies P1..Pk, Pk answers P0:        T = t0(k − 1 + 2λ).
//  * Bruck's experiment 2: as 1, then Pk notifies Pk−1, ..., P0:     T = 2t0(k − 1 + λ).
// Each (experiment, k) takes the lower quartile of `trials` repetitions (interference only adds
// time, so on a shared machine the quartile survives where the median may not); each experiment is fitted by
// least squares over k = 1..k_max; the whole measurement is repeated `runs` times and every
// reported figure is the median over runs, with the spread (half the range) beside it.
//
// Reported s and r: s is the sender-side slope (least squares, the least noisy of the
// estimates), r = t_1 − s (first notification minus one send). λ = 1 + r/s (the two models in
// the same units; docs/postal-model.md, "One model"); Bruck's two λ are reported beside it as
// the cross-check.
//
// Where the library takes its figures (calibrated_latency()): POSTBOX_S_NS and POSTBOX_R_NS
// override (each its own figure); else the file save_calibration() wrote; else a quick
// measurement at first use (well under 20 ms on an idle machine), announced on stderr when
// POSTBOX_DEBUG=1. A malformed variable or file is an InputError naming it.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/runtime/check.hpp"

namespace postbox {

struct CalibrateOptions {
  // Largest k (receivers) of every experiment; k runs 1..k_max. At least 4: a send costs a few
  // ns, and the difference between one and two back-to-back sends is below the clock's
  // resolution, so s fitted over k = 1..2 came out 0.
  int k_max = 8;
  // Repetitions of each (experiment, k) per run; the run uses their lower quartile. At least 1.
  int trials = 200;
  // Independent runs; figures are medians over runs. At least 1.
  int runs = 5;
  // Wall-clock budget in ns (0: none). Once spent, no further run starts (at least one run
  // always completes); `runs` in the result says how many did.
  std::int64_t budget_ns = 0;

  // The first-use measurement: small, so it stays well under 20 ms.
  static CalibrateOptions quick() { return CalibrateOptions{6, 24, 3, 15'000'000}; }
};

// A least-squares line y = slope·x + intercept.
struct LineFit {
  double slope = 0;
  double intercept = 0;
  double max_residual = 0;  // largest |y − fit|
};
// Fewer than two points, or all x equal → InputError.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

// λ and t0 from the fit of T against k of Bruck's experiment 1 (T = t0(k − 1 + 2λ), so
// t0 = slope, λ = (intercept/slope + 1)/2) and experiment 2 (T = 2t0(k − 1 + λ), so
// t0 = slope/2, λ = 1 + intercept/slope).
struct LambdaEstimate {
  double t0_ns = 0;
  double lambda = 0;
};
LambdaEstimate lambda_from_exp1(const LineFit& fit);
LambdaEstimate lambda_from_exp2(const LineFit& fit);

// Both experiments' times T at the same k, each fitted by fit_line() and turned into t0 and λ:
// the one fit shared by calibrate() (this machine, ns) and sim::measure_lambda() (the emulator,
// µs; the fit does not care about the unit). Bad input as fit_line().
struct BruckLambdaFit {
  LineFit exp1, exp2;
  LambdaEstimate e1, e2;  // lambda_from_exp1(exp1), lambda_from_exp2(exp2)
  double max_residual = 0;  // the larger of the two fits' max_residual
};
BruckLambdaFit fit_bruck(const std::vector<double>& k, const std::vector<double>& t_exp1,
                         const std::vector<double>& t_exp2);

// Median and half the range of a sample. Empty → InputError.
struct Spread {
  double median = 0;
  double half_range = 0;
};
Spread median_spread(std::vector<double> values);

// The measured figures of one level (inside a process, or between processes).
struct LatencyFigures {
  // The figures the library uses.
  double s_ns = 0;
  double r_ns = 0;
  double lambda = 0;  // 1 + r/s
  // Bruck §2.2.
  double t0_ns = 0;  // experiment 1's t0 (the sender's time per message)
  double lambda_exp1 = 0;
  double lambda_exp2 = 0;
  int runs = 0;

  // Measurement details (0 when not measured, e.g. from the environment).
  double t0_exp2_ns = 0;
  double first_notification_ns = 0;   // Cordsen's s + r
  double second_notification_ns = 0;  // Cordsen's 2s + r
  double s_spread_ns = 0, r_spread_ns = 0;
  double lambda_exp1_spread = 0, lambda_exp2_spread = 0;
  // False when |λ1 − λ2| exceeds the sum of their spreads (Bruck's double check failed).
  bool lambdas_agree = true;
  int k_max = 0;
  int trials = 0;
  double elapsed_ms = 0;  // wall-clock time of the measurement
};

// Between processes (`postbox calibrate --mpi`, postbox::cluster::calibrate_mpi): the same
// experiments over MPI point-to-point between processes 0 and 1 of a job of `processes`.
struct InterCalibration : LatencyFigures {
  int processes = 0;
  int threads = 0;  // threads per process of the job (its `local-cluster` profile's cores_per_node)
};

struct Calibration : LatencyFigures {
  // Where the figures came from: "measured", "file", "env" or "env+file" / "env+measured".
  std::string source = "measured";
  // The figures between processes, when measured (the calibration JSON's optional "inter").
  std::optional<InterCalibration> inter;
};

// Runs the experiments on two threads (the caller and one it starts). Bad options → InputError.
Calibration calibrate(const CalibrateOptions& options = {});
// calibrate() up to `attempts` times while a measurement is too noisy (a runtime_error); the last
// one's error gains " (N attempts)". InputError is not retried. Attempt n runs with
// retry_options(options, n): more samples where fewer were too noisy.
Calibration calibrate_with_retries(const CalibrateOptions& options, int attempts);
// The options of attempt n (1-based): trials and budget_ns (when set) doubled n − 1 times (at
// most 8 doublings; trials at most 10^6); k_max and runs as given.
CalibrateOptions retry_options(const CalibrateOptions& options, int attempt);
// The retry rule of calibrate_with_retries() for any measurement: measure(retry_options(options,
// n)) for n = 1, 2, ... while it throws a runtime_error that is not an InputError (too noisy), at
// most `attempts` times; the last one's error gains " (N attempts)".
template <class Measure>
auto measure_with_retries(const CalibrateOptions& options, int attempts, Measure&& measure) {
  for (int attempt = 1;; ++attempt) {
    try {
      return measure(retry_options(options, attempt));
    } catch (const InputError&) {
      throw;
    } catch (const std::runtime_error& e) {
      if (attempt >= attempts) throw std::runtime_error(std::string(e.what()) + " (" + std::to_string(attempts) + " attempts)");
    }
  }
}
// Throws InputError for options calibrate() refuses.
void check_calibrate_options(const CalibrateOptions& options);

// The analysis behind calibrate(), shared with the measurement between processes: samples[e][k − 1]
// are one run's trials (ns) of experiment e (0 notification, 1 Bruck 1, 2 Bruck 2, 3 sender side)
// with k receivers; a run takes each lower quartile and fits s, r and both λ.
struct CalibrationRun {
  double s = 0, r = 0, t1 = 0, t2 = 0;
  LambdaEstimate e1, e2;
};
CalibrationRun analyse_run(const std::array<std::vector<std::vector<double>>, 4>& samples);
// The figures from the runs (medians and spreads; λ = 1 + r/s). Runs without a usable fit →
// std::runtime_error ("the machine is too noisy").
LatencyFigures combine_runs(const std::vector<CalibrationRun>& runs, const CalibrateOptions& options);

// One line for people: s, r, λ, both λ experiments, and whether they agree.
std::string describe(const Calibration& c);

// $XDG_CACHE_HOME/postbox/calibration.json, else $HOME/.cache/postbox/calibration.json;
// nullopt when neither variable gives an absolute directory.
std::optional<std::filesystem::path> calibration_cache_path();
// $XDG_CACHE_HOME/postbox/profiles (or $HOME/.cache/postbox/profiles): where `postbox calibrate
// --save` writes the `local` machine profile for the emulator.
std::optional<std::filesystem::path> calibration_profile_dir();

// Missing file → nullopt. Unreadable or malformed file, or a field missing, mistyped or out of
// range (s_ns <= 0, r_ns < 0, ...) → InputError naming the file and the field (inside the
// optional "inter" object: 'inter.s_ns', ...; "inter" also needs processes >= 2, threads >= 1).
std::optional<Calibration> load_calibration(const std::filesystem::path& file);
// The same checks on a file's text; `where` names it in every error. Counts (runs, k_max,
// trials) are integers, never truncated reals.
Calibration parse_calibration(std::string_view text, const std::string& where);
// The cache file; nullopt when there is none (or no cache directory).
std::optional<Calibration> load_calibration();
// Writes JSON (creating directories). Failure → InputError naming the file.
void save_calibration(const Calibration& c, const std::filesystem::path& file);
// The JSON object save_calibration() writes and `postbox calibrate --json` prints (2-space indent).
std::string calibration_json(const Calibration& c);
// To calibration_cache_path(); returns where it wrote. No cache directory → InputError.
std::filesystem::path save_calibration(const Calibration& c);

// The range of a latency read from a file or the environment: s from 0.001 ns, r from 0, both at
// most 10 ms. A smaller s made λ = 1 + r/s overflow a double (s_ns = 1e-320 gave "lambda": null);
// no machine of interest is slower.
inline constexpr double kMinSendNs = 1e-3;
inline constexpr double kMaxLatencyNs = 1e7;

// Parses a latency from the environment variable `name` given its text: a number of nanoseconds
// (parse.hpp's grammar), s in kMinSendNs..kMaxLatencyNs for POSTBOX_S_NS (allow_zero false), r
// in 0..kMaxLatencyNs for POSTBOX_R_NS. → InputError naming the variable and the text.
double parse_latency_ns(std::string_view name, std::string_view text, bool allow_zero);

// Resolves the figures as described at the top (environment, file, quick measurement), each
// call afresh. `measure` is used when a measurement is needed.
Calibration resolve_calibration(const CalibrateOptions& measure = CalibrateOptions::quick());

// The environment and file steps of resolve_calibration() only: never measures. nullopt when
// neither POSTBOX_S_NS/POSTBOX_R_NS nor a saved calibration gives both figures (one variable
// alone with no file: nullopt too). Source "env", "file" or "env+file".
std::optional<Calibration> saved_latency();

// resolve_calibration() once per process (thread-safe); later calls return the same figures.
// What barrier/ and collectives/ should use to build SendRecv{s_ns, r_ns}.
const Calibration& calibrated_latency();

}  // namespace postbox
