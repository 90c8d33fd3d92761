#include "postbox/runtime/calibrate.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/file.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/runtime/mailbox.hpp"

namespace postbox {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

double median_of(std::vector<double>& v) {
  PB_CHECK(!v.empty(), "median of nothing");
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  const double hi = *mid;
  if (v.size() % 2 == 1) return hi;
  const double lo = *std::max_element(v.begin(), mid);
  return (lo + hi) / 2;
}

// The lower quartile: interference (preemption, another process on the core) only ever adds
// time, so on a shared machine the median of the trials can already be disturbed while the
// lower quartile still describes the undisturbed signalling.
double lower_quartile(std::vector<double>& v) {
  PB_CHECK(!v.empty(), "quartile of nothing");
  const auto q = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 4);
  std::nth_element(v.begin(), q, v.end());
  return *q;
}

// Duration of one Clock::now() call: the median gap between consecutive reads. Every timed
// interval below spans one such call beyond the work, so it is subtracted.
double clock_overhead_ns() {
  std::vector<double> gaps;
  gaps.reserve(64);
  for (int i = 0; i < 64; ++i) {
    const auto a = now_ns();
    const auto b = now_ns();
    gaps.push_back(static_cast<double>(b - a));
  }
  return median_of(gaps);
}

bool debug_enabled() {
  const char* v = std::getenv("POSTBOX_DEBUG");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

// The four experiments of one schedule slot, in the order both threads follow.
enum class Exp { notification, exp1, exp2, send_only };
constexpr std::array<Exp, 4> kExps{Exp::notification, Exp::exp1, Exp::exp2, Exp::send_only};

// Mailbox ranks: 0 = P0 (the caller), 1..k_max = receivers nobody runs (P0 drains them),
// k_max + 1 = the running receiver, whichever k the experiment has. So each rank's receiving
// side stays with one thread for the whole measurement (the Mailboxes requirement).
struct Ranks {
  int k_max;
  [[nodiscard]] int live() const { return k_max + 1; }
  [[nodiscard]] int size() const { return k_max + 2; }
};

// Per run, per experiment, per k: the trials' times in ns.
struct RunSamples {
  // [exp][k-1][trial]
  std::array<std::vector<std::vector<double>>, 4> t;
};

// The running receiver's side of the schedule.
void responder(Mailboxes& mb, Ranks ranks, int trials) {
  const int live = ranks.live();
  for (int trial = 0; trial < trials; ++trial) {
    for (int k = 1; k <= ranks.k_max; ++k) {
      for (Exp e : kExps) {
        switch (e) {
          case Exp::notification: {
            std::array<std::byte, 8> none{};
            (void)mb.recv(live, 0, none);
            const std::int64_t stamp = now_ns();
            std::array<std::byte, sizeof stamp> msg{};
            std::memcpy(msg.data(), &stamp, sizeof stamp);
            mb.send(live, 0, msg);
            break;
          }
          case Exp::exp1: {
            std::array<std::byte, 1> none{};
            (void)mb.recv(live, 0, none);
            mb.notify(live, 0);
            break;
          }
          case Exp::exp2: {
            std::array<std::byte, 1> none{};
            (void)mb.recv(live, 0, none);
            // Pk answers Pk−1, ..., P1, then P0 (Bruck §2.2).
            for (int i = k - 1; i >= 1; --i) mb.notify(live, i);
            mb.notify(live, 0);
            break;
          }
          case Exp::send_only:
            break;
        }
      }
    }
  }
}

// P0's side: the same schedule, timing each experiment.
void measurer(Mailboxes& mb, Ranks ranks, int trials, double clock_ns, RunSamples& out) {
  const int live = ranks.live();
  std::array<std::byte, 8> buf{};
  auto send_to_receivers = [&](int k) {
    for (int i = 1; i < k; ++i) mb.notify(0, i);
    mb.notify(0, live);
  };
  auto drain = [&](int from, int upto) {
    for (int i = 1; i <= upto; ++i) (void)mb.recv(i, from, buf);
  };
  for (int trial = 0; trial < trials; ++trial) {
    for (int k = 1; k <= ranks.k_max; ++k) {
      for (Exp e : kExps) {
        double t = 0;
        switch (e) {
          case Exp::notification: {
            const auto start = now_ns();
            send_to_receivers(k);
            (void)mb.recv(0, live, buf);
            std::int64_t stamp = 0;
            std::memcpy(&stamp, buf.data(), sizeof stamp);
            t = static_cast<double>(stamp - start) - clock_ns;
            drain(0, k - 1);
            break;
          }
          case Exp::exp1: {
            const auto start = now_ns();
            send_to_receivers(k);
            (void)mb.recv(0, live, buf);
            t = static_cast<double>(now_ns() - start) - clock_ns;
            drain(0, k - 1);
            break;
          }
          case Exp::exp2: {
            const auto start = now_ns();
            send_to_receivers(k);
            (void)mb.recv(0, live, buf);
            t = static_cast<double>(now_ns() - start) - clock_ns;
            drain(0, k - 1);
            drain(live, k - 1);
            break;
          }
          case Exp::send_only: {
            const auto start = now_ns();
            for (int i = 1; i <= k; ++i) mb.notify(0, i);
            t = static_cast<double>(now_ns() - start) - clock_ns;
            drain(0, k);
            break;
          }
        }
        out.t[static_cast<std::size_t>(e)][static_cast<std::size_t>(k - 1)].push_back(t);
      }
    }
  }
}

CalibrationRun one_run(const CalibrateOptions& o, double clock_ns) {
  const Ranks ranks{o.k_max};
  MailboxOptions mo;
  mo.ring_bytes = 4096;
  // Long spin: a waiter that yields or blocks would time the scheduler, not the signalling.
  // Still bounded, so an oversubscribed box makes progress.
  mo.wait = WaitPolicy{500'000, 5'000'000};
  Mailboxes mb(ranks.size(), mo);
  RunSamples samples;
  for (auto& per_exp : samples.t) {
    per_exp.resize(static_cast<std::size_t>(o.k_max));
    for (auto& v : per_exp) v.reserve(static_cast<std::size_t>(o.trials));
  }
  // One untimed trial first creates every ring and warms the caches.
  {
    RunSamples warm;
    for (auto& per_exp : warm.t) per_exp.resize(static_cast<std::size_t>(o.k_max));
    std::thread b([&] { responder(mb, ranks, 1); });
    measurer(mb, ranks, 1, clock_ns, warm);
    b.join();
  }
  std::thread b([&] { responder(mb, ranks, o.trials); });
  measurer(mb, ranks, o.trials, clock_ns, samples);
  b.join();

  return analyse_run(samples.t);
}

bool finite(double x) { return std::isfinite(x); }

std::optional<std::filesystem::path> cache_root() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x == '/') return std::filesystem::path(x) / "postbox";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h == '/')
    return std::filesystem::path(h) / ".cache" / "postbox";
  return std::nullopt;
}

nlohmann::json to_json(const LatencyFigures& c) {
  nlohmann::json j;
  j["s_ns"] = c.s_ns;
  j["r_ns"] = c.r_ns;
  j["lambda"] = c.lambda;
  j["t0_ns"] = c.t0_ns;
  j["lambda_exp1"] = c.lambda_exp1;
  j["lambda_exp2"] = c.lambda_exp2;
  j["runs"] = c.runs;
  j["t0_exp2_ns"] = c.t0_exp2_ns;
  j["first_notification_ns"] = c.first_notification_ns;
  j["second_notification_ns"] = c.second_notification_ns;
  j["s_spread_ns"] = c.s_spread_ns;
  j["r_spread_ns"] = c.r_spread_ns;
  j["lambda_exp1_spread"] = c.lambda_exp1_spread;
  j["lambda_exp2_spread"] = c.lambda_exp2_spread;
  j["lambdas_agree"] = c.lambdas_agree;
  j["k_max"] = c.k_max;
  j["trials"] = c.trials;
  j["elapsed_ms"] = c.elapsed_ms;
  return j;
}

nlohmann::json to_json(const Calibration& c) {
  nlohmann::json j = to_json(static_cast<const LatencyFigures&>(c));
  if (c.inter) {
    nlohmann::json i = to_json(static_cast<const LatencyFigures&>(*c.inter));
    i["processes"] = c.inter->processes;
    i["threads"] = c.inter->threads;
    j["inter"] = std::move(i);
  }
  return j;
}

// The figures of one JSON object; `prefix` names the object's fields in messages ("" or "inter.").
LatencyFigures figures_from_json(const nlohmann::json& j, const std::string& where, const std::string& prefix) {
  auto number = [&](const char* field, bool required, double fallback) -> double {
    if (!j.contains(field)) {
      if (required) throw InputError(where + ": field '" + prefix + field + "' is missing");
      return fallback;
    }
    const auto& v = j.at(field);
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw InputError(where + ": field '" + prefix + field + "' must be a finite number");
    return v.get<double>();
  };
  LatencyFigures c;
  c.s_ns = number("s_ns", true, 0);
  c.r_ns = number("r_ns", true, 0);
  c.lambda = number("lambda", true, 0);
  c.t0_ns = number("t0_ns", true, 0);
  c.lambda_exp1 = number("lambda_exp1", true, 0);
  c.lambda_exp2 = number("lambda_exp2", true, 0);
  if (!j.contains("runs")) throw InputError(where + ": field '" + prefix + "runs' is missing");
  if (!j.at("runs").is_number_integer() || j.at("runs").get<long long>() < 0 || j.at("runs").get<long long>() > 1'000'000)
    throw InputError(where + ": field '" + prefix + "runs' must be a non-negative integer");
  c.runs = j.at("runs").get<int>();
  if (c.s_ns <= 0) throw InputError(where + ": field '" + prefix + "s_ns' must be positive");
  if (c.r_ns < 0) throw InputError(where + ": field '" + prefix + "r_ns' must not be negative");
  const auto in_range = [&](const char* field, double v, double lo) {
    if (v < lo || v > kMaxLatencyNs) {
      char text[40];
      std::snprintf(text, sizeof text, "%.6g", v);
      throw InputError(where + ": field '" + prefix + field + "' must be between " + (lo > 0 ? "0.001" : "0") +
                       " and 1e7 ns (10 ms), got " + text);
    }
  };
  in_range("s_ns", c.s_ns, kMinSendNs);
  in_range("r_ns", c.r_ns, 0);
  if (c.lambda < 1) throw InputError(where + ": field '" + prefix + "lambda' must be at least 1");
  c.t0_exp2_ns = number("t0_exp2_ns", false, 0);
  c.first_notification_ns = number("first_notification_ns", false, 0);
  c.second_notification_ns = number("second_notification_ns", false, 0);
  c.s_spread_ns = number("s_spread_ns", false, 0);
  c.r_spread_ns = number("r_spread_ns", false, 0);
  c.lambda_exp1_spread = number("lambda_exp1_spread", false, 0);
  c.lambda_exp2_spread = number("lambda_exp2_spread", false, 0);
  // Counts: integers in range, never truncated reals (k_max 1.5 was read as 1; 1e300 undefined).
  const auto count = [&](const char* field, std::int64_t hi) -> int {
    if (!j.contains(field)) return 0;
    const auto& v = j.at(field);
    const bool ok = (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)) ||
                    (v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= hi);
    if (!ok) throw InputError(where + ": field '" + prefix + field + "' must be an integer from 0 to " + std::to_string(hi));
    return static_cast<int>(v.get<std::int64_t>());
  };
  c.k_max = count("k_max", 1'000'000);
  c.trials = count("trials", 1'000'000'000);
  c.elapsed_ms = number("elapsed_ms", false, 0);
  if (j.contains("lambdas_agree")) {
    if (!j.at("lambdas_agree").is_boolean())
      throw InputError(where + ": field '" + prefix + "lambdas_agree' must be true or false");
    c.lambdas_agree = j.at("lambdas_agree").get<bool>();
  }
  return c;
}

}  // namespace

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw InputError("fit_line: x and y differ in length");
  if (x.size() < 2) throw InputError("fit_line: at least two points are needed");
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (sxx == 0) throw InputError("fit_line: all x are equal");
  LineFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  for (std::size_t i = 0; i < x.size(); ++i)
    f.max_residual = std::max(f.max_residual, std::abs(y[i] - (f.slope * x[i] + f.intercept)));
  return f;
}

LambdaEstimate lambda_from_exp1(const LineFit& fit) {
  // T = t0·k + t0(2λ − 1).
  return LambdaEstimate{fit.slope, (fit.intercept / fit.slope + 1) / 2};
}

LambdaEstimate lambda_from_exp2(const LineFit& fit) {
  // T = 2t0·k + 2t0(λ − 1).
  return LambdaEstimate{fit.slope / 2, 1 + fit.intercept / fit.slope};
}

BruckLambdaFit fit_bruck(const std::vector<double>& k, const std::vector<double>& t_exp1,
                         const std::vector<double>& t_exp2) {
  BruckLambdaFit f;
  f.exp1 = fit_line(k, t_exp1);
  f.exp2 = fit_line(k, t_exp2);
  f.e1 = lambda_from_exp1(f.exp1);
  f.e2 = lambda_from_exp2(f.exp2);
  f.max_residual = std::max(f.exp1.max_residual, f.exp2.max_residual);
  return f;
}

Spread median_spread(std::vector<double> values) {
  if (values.empty()) throw InputError("median of an empty sample");
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double half = (*hi - *lo) / 2;
  return Spread{median_of(values), half};
}

void check_calibrate_options(const CalibrateOptions& o) {
  if (o.k_max < 4) throw InputError("calibrate: k_max must be at least 4");
  if (o.k_max > 64) throw InputError("calibrate: k_max must be at most 64");
  if (o.trials < 1) throw InputError("calibrate: trials must be at least 1");
  if (o.runs < 1) throw InputError("calibrate: runs must be at least 1");
  if (o.budget_ns < 0) throw InputError("calibrate: the time budget must not be negative");
}

CalibrationRun analyse_run(const std::array<std::vector<std::vector<double>>, 4>& samples) {
  std::vector<double> ks;
  std::array<std::vector<double>, 4> med;
  const std::size_t k_max = samples[0].size();
  for (std::size_t k = 1; k <= k_max; ++k) {
    ks.push_back(static_cast<double>(k));
    for (std::size_t e = 0; e < 4; ++e) {
      std::vector<double> trials = samples[e][k - 1];
      med[e].push_back(lower_quartile(trials));
    }
  }
  CalibrationRun res;
  const auto& notif = med[static_cast<std::size_t>(Exp::notification)];
  res.t1 = notif[0];
  res.t2 = notif[1];
  res.s = fit_line(ks, med[static_cast<std::size_t>(Exp::send_only)]).slope;
  res.r = res.t1 - res.s;
  const BruckLambdaFit bruck =
      fit_bruck(ks, med[static_cast<std::size_t>(Exp::exp1)], med[static_cast<std::size_t>(Exp::exp2)]);
  res.e1 = bruck.e1;
  res.e2 = bruck.e2;
  return res;
}

LatencyFigures combine_runs(const std::vector<CalibrationRun>& runs, const CalibrateOptions& o) {
  std::vector<double> s, r, t1, t2, l1, l2, t01, t02;
  for (const CalibrationRun& rr : runs) {
    s.push_back(rr.s);
    r.push_back(rr.r);
    t1.push_back(rr.t1);
    t2.push_back(rr.t2);
    // A run whose fitted t0 is not positive (a descheduled thread flattened the line) says
    // nothing about λ: it is left out of that experiment's median.
    if (rr.e1.t0_ns > 0 && finite(rr.e1.lambda)) {
      l1.push_back(rr.e1.lambda);
      t01.push_back(rr.e1.t0_ns);
    }
    if (rr.e2.t0_ns > 0 && finite(rr.e2.lambda)) {
      l2.push_back(rr.e2.lambda);
      t02.push_back(rr.e2.t0_ns);
    }
  }
  if (l1.empty() || l2.empty())
    throw std::runtime_error("calibration failed: Bruck's experiments gave no positive t0 (the machine is too noisy; try again)");
  LatencyFigures c;
  c.runs = static_cast<int>(s.size());
  c.k_max = o.k_max;
  c.trials = o.trials;
  const Spread ss = median_spread(s), rs = median_spread(r), l1s = median_spread(l1), l2s = median_spread(l2);
  c.s_ns = ss.median;
  c.s_spread_ns = ss.half_range;
  c.r_ns = rs.median;
  c.r_spread_ns = rs.half_range;
  c.lambda_exp1 = l1s.median;
  c.lambda_exp1_spread = l1s.half_range;
  c.lambda_exp2 = l2s.median;
  c.lambda_exp2_spread = l2s.half_range;
  c.t0_ns = median_spread(t01).median;
  c.t0_exp2_ns = median_spread(t02).median;
  c.first_notification_ns = median_spread(t1).median;
  c.second_notification_ns = median_spread(t2).median;
  c.lambdas_agree = std::abs(c.lambda_exp1 - c.lambda_exp2) <= c.lambda_exp1_spread + c.lambda_exp2_spread;
  if (!(c.s_ns > 0) || !finite(c.s_ns) || !(c.r_ns >= 0) || !finite(c.r_ns))
    throw std::runtime_error("calibration failed: measured s = " + std::to_string(c.s_ns) +
                             " ns, r = " + std::to_string(c.r_ns) + " ns (the machine is too noisy; try again)");
  c.lambda = 1 + c.r_ns / c.s_ns;
  return c;
}

Calibration calibrate(const CalibrateOptions& o) {
  check_calibrate_options(o);
  const auto start = now_ns();
  const double clock_ns = clock_overhead_ns();
  std::vector<CalibrationRun> runs;
  for (int run = 0; run < o.runs; ++run) {
    if (run > 0 && o.budget_ns > 0 && now_ns() - start > o.budget_ns) break;
    runs.push_back(one_run(o, clock_ns));
  }
  Calibration c;
  static_cast<LatencyFigures&>(c) = combine_runs(runs, o);
  c.source = "measured";
  c.elapsed_ms = static_cast<double>(now_ns() - start) / 1e6;
  return c;
}

CalibrateOptions retry_options(const CalibrateOptions& o, int attempt) {
  CalibrateOptions next = o;
  const int doublings = std::min(attempt - 1, 8);
  next.trials = static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(o.trials) << doublings, 1'000'000));
  if (o.budget_ns > 0) next.budget_ns = o.budget_ns << doublings;
  return next;
}

Calibration calibrate_with_retries(const CalibrateOptions& o, int attempts) {
  return measure_with_retries(o, attempts, [](const CalibrateOptions& x) { return calibrate(x); });
}

std::string describe(const Calibration& c) {
  char line[512];
  std::snprintf(line, sizeof line,
                "s = %.1f ns, r = %.1f ns, lambda = 1 + r/s = %.2f; Bruck: lambda_exp1 = %.2f (±%.2f), "
                "lambda_exp2 = %.2f (±%.2f), t0 = %.1f ns%s [%s, %d run%s]",
                c.s_ns, c.r_ns, c.lambda, c.lambda_exp1, c.lambda_exp1_spread, c.lambda_exp2, c.lambda_exp2_spread,
                c.t0_ns, c.lambdas_agree ? "" : "; the two lambdas DISAGREE beyond their spread", c.source.c_str(),
                c.runs, c.runs == 1 ? "" : "s");
  return line;
}

std::optional<std::filesystem::path> calibration_cache_path() {
  auto root = cache_root();
  if (!root) return std::nullopt;
  return *root / "calibration.json";
}

std::optional<std::filesystem::path> calibration_profile_dir() {
  auto root = cache_root();
  if (!root) return std::nullopt;
  return *root / "profiles";
}

std::optional<Calibration> load_calibration(const std::filesystem::path& file) {
  // No file is no calibration (the caller measures instead); anything else at the path must
  // be a readable regular file.
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  const std::string where = "calibration file " + file.string();
  return parse_calibration(read_regular_file(file, where), where);
}

Calibration parse_calibration(std::string_view text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + " is not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object()) throw InputError(where + " must hold a JSON object");
  Calibration c;
  static_cast<LatencyFigures&>(c) = figures_from_json(j, where, "");
  c.source = "file";
  if (j.contains("inter")) {
    const auto& i = j.at("inter");
    if (!i.is_object()) throw InputError(where + ": field 'inter' must be a JSON object");
    InterCalibration inter;
    static_cast<LatencyFigures&>(inter) = figures_from_json(i, where, "inter.");
    const auto count = [&](const char* field, int least) {
      if (!i.contains(field)) throw InputError(where + ": field 'inter." + field + "' is missing");
      const auto& v = i.at(field);
      if (!v.is_number_integer() || v.get<long long>() < least || v.get<long long>() > 1'000'000)
        throw InputError(where + ": field 'inter." + field + "' must be an integer of at least " + std::to_string(least));
      return v.get<int>();
    };
    inter.processes = count("processes", 2);
    inter.threads = count("threads", 1);
    c.inter = inter;
  }
  return c;
}

std::optional<Calibration> load_calibration() {
  const auto path = calibration_cache_path();
  if (!path) return std::nullopt;
  return load_calibration(*path);
}

void save_calibration(const Calibration& c, const std::filesystem::path& file) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) throw InputError("cannot create directory " + file.parent_path().string() + ": " + ec.message());
  // Written whole to a temporary beside it, then renamed, so a reader never sees half a file.
  const auto tmp = std::filesystem::path(file.string() + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream out(tmp);
    if (!out) throw InputError("cannot write calibration file " + file.string());
    out << calibration_json(c) << '\n';
    if (!out) throw InputError("cannot write calibration file " + file.string());
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) throw InputError("cannot write calibration file " + file.string() + ": " + ec.message());
}

std::filesystem::path save_calibration(const Calibration& c) {
  const auto path = calibration_cache_path();
  if (!path) throw InputError("no cache directory: set XDG_CACHE_HOME or HOME to an absolute path");
  save_calibration(c, *path);
  return *path;
}

double parse_latency_ns(std::string_view name, std::string_view text, bool allow_zero) {
  const std::string s(text);
  const std::string what = std::string(name) + " must be a " + (allow_zero ? "non-negative" : "positive") +
                           " number of nanoseconds, got '" + s + "'";
  double v = 0;
  try {
    v = parse_real(s, name);  // parse.hpp's grammar: no '+', no spaces, finite
  } catch (const InputError&) {
    throw InputError(what);
  }
  if (allow_zero ? v < 0 : v <= 0) throw InputError(what);
  if (!allow_zero && v < kMinSendNs) throw InputError(std::string(name) + " must be at least 0.001 ns, got '" + s + "'");
  if (v > kMaxLatencyNs) throw InputError(std::string(name) + " must be at most 1e7 ns (10 ms), got '" + s + "'");
  return v;
}

namespace {

// The environment and file steps of resolve_calibration(); `measure` runs when both are missing
// (nullopt: nothing is measured and the result is nullopt).
std::optional<Calibration> resolve(const CalibrateOptions* measure) {
  std::optional<double> s_env, r_env;
  if (const char* v = std::getenv("POSTBOX_S_NS"); v != nullptr) s_env = parse_latency_ns("POSTBOX_S_NS", v, false);
  if (const char* v = std::getenv("POSTBOX_R_NS"); v != nullptr) r_env = parse_latency_ns("POSTBOX_R_NS", v, true);
  const bool debug = debug_enabled();
  Calibration c;
  if (s_env && r_env) {
    c.source = "env";
    c.s_ns = *s_env;
    c.r_ns = *r_env;
    c.t0_ns = *s_env;
    c.runs = 0;
  } else if (auto file = load_calibration()) {
    c = *file;
    c.source = "file";
  } else if (measure == nullptr) {
    return std::nullopt;
  } else {
    try {
      c = calibrate(*measure);
      c.source = "measured";
      if (debug)
        std::fprintf(stderr, "postbox: debug: no calibration saved; measured at first use in %.1f ms: %s\n",
                     c.elapsed_ms, describe(c).c_str());
    } catch (const std::runtime_error& e) {
      if (dynamic_cast<const InputError*>(&e) != nullptr) throw;
      // An unusable measurement (a badly overloaded machine): the barrier's uncalibrated default.
      c = Calibration{};
      c.s_ns = 1;
      c.r_ns = 1;
      c.t0_ns = 1;
      c.source = "assumed";
      if (debug) std::fprintf(stderr, "postbox: debug: %s; assuming s = r\n", e.what());
    }
  }
  if (s_env || r_env) {
    if (!(s_env && r_env)) c.source = "env+" + c.source;
    if (s_env) c.s_ns = *s_env;
    if (r_env) c.r_ns = *r_env;
  }
  c.lambda = 1 + c.r_ns / c.s_ns;
  if (c.runs == 0) c.lambda_exp1 = c.lambda_exp2 = c.lambda;
  if (debug && c.source != "measured")
    std::fprintf(stderr, "postbox: debug: calibration from %s: %s\n", c.source.c_str(), describe(c).c_str());
  return c;
}

}  // namespace

Calibration resolve_calibration(const CalibrateOptions& measure) { return *resolve(&measure); }

std::optional<Calibration> saved_latency() { return resolve(nullptr); }

const Calibration& calibrated_latency() {
  static const Calibration c = resolve_calibration();
  return c;
}

std::string calibration_json(const Calibration& c) { return to_json(c).dump(2); }

}  // namespace postbox
