// postbox calibrate: measure s, r and λ. On this machine (runtime/calibrate.hpp: Cordsen's
// notification times, Bruck's two experiments) or, with --machine, inside the emulator
// (cmd_calibrate_sim.cpp).
#include <iostream>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/runtime/topology.hpp"
#ifdef POSTBOX_HAVE_MPI
#include "postbox/cluster/calibrate.hpp"
#include "postbox/cluster/mpi_env.hpp"
#endif

namespace postbox::cli {

int calibrate_emulated(const std::string& machine, const std::string& sizes, bool json, bool csv,
                       const std::string& plot);

namespace {
struct CalibrateArgs {
  std::string machine;
  std::string sizes = "16,64,128,256,512,1024,2048,4096,8192,16384,65536";
  bool json = false;
  bool csv = false;
  std::string plot;
  bool save = false;
  bool quick = false;
  std::string runs = std::to_string(CalibrateOptions{}.runs);
  std::string trials = std::to_string(CalibrateOptions{}.trials);
  std::string k_max = std::to_string(CalibrateOptions{}.k_max);
  bool mpi = false;
  std::string threads;  // --mpi: threads per process (empty: this process's CPUs / processes on the node)
};

// runs · trials · (1 + ... + k_max): the experiments' sends, bounded so a measurement takes
// minutes, not hours.
constexpr std::int64_t kMaxCalibrationWork = 20'000'000;
// A noisy machine (another process on the cores) can leave no usable fit; the quick
// measurement is cheap, so it is retried before giving up with exit 1.
constexpr int kAttempts = 5;

void print_figures(const LatencyFigures& c) {
  std::printf("  Cordsen §5: first notification (s + r)  %8.1f ns\n", c.first_notification_ns);
  std::printf("              second notification (2s + r) %7.1f ns\n", c.second_notification_ns);
  std::printf("              s (sender side, k sends)   %8.1f ns ± %.1f\n", c.s_ns, c.s_spread_ns);
  std::printf("              r = (s + r) - s            %8.1f ns ± %.1f\n", c.r_ns, c.r_spread_ns);
  std::printf("              lambda = 1 + r/s           %8.2f\n", c.lambda);
  std::printf("  Bruck §2.2: experiment 1  t0 = %6.1f ns  lambda = %6.2f ± %.2f\n", c.t0_ns, c.lambda_exp1,
              c.lambda_exp1_spread);
  std::printf("              experiment 2  t0 = %6.1f ns  lambda = %6.2f ± %.2f\n", c.t0_exp2_ns, c.lambda_exp2,
              c.lambda_exp2_spread);
  if (!c.lambdas_agree)
    std::printf("  note: the two experiments' lambda disagree beyond their spread (a loaded machine, or the\n"
                "        postal model does not describe this box well at this message size)\n");
}

// Writes what --save writes: the calibration JSON and the emulator's profiles (local, and
// local-cluster when the figures between processes were measured).
void save_all(const Calibration& c) {
  const auto file = save_calibration(c);
  const auto dir = calibration_profile_dir();
  PB_CHECK(dir.has_value(), "a cache path exists but no profile directory");
  std::error_code ec;
  std::filesystem::create_directories(*dir, ec);
  std::string wrote = file.string() + " (the library's calibration) and " + (*dir / "local.toml").string();
  const auto write = [&](const std::filesystem::path& path, const std::string& text) {
    std::ofstream out(path);
    if (!out || !(out << text)) throw InputError("cannot write " + path.string());
  };
  write(*dir / "local.toml", frontend::local_profile_toml(c));
  if (c.inter) {
    write(*dir / "local-cluster.toml", frontend::local_cluster_profile_toml(c));
    wrote += " and " + (*dir / "local-cluster.toml").string() + " (the emulator's profiles: --machine local, local-cluster)";
  } else {
    wrote += " (the emulator's profile: --machine local)";
  }
  // On stderr, so --json --save still prints only JSON on stdout.
  std::fprintf(stderr, "postbox: wrote %s\n", wrote.c_str());
}

CalibrateOptions parse_options(const CalibrateArgs& a) {
  CalibrateOptions o;
  if (a.quick) {
    o = CalibrateOptions::quick();
  } else {
    o.runs = static_cast<int>(parse_int(a.runs, "--runs", 1, 1000));
    o.trials = static_cast<int>(parse_int(a.trials, "--trials", 1, 100000));
    o.k_max = static_cast<int>(parse_int(a.k_max, "--k-max", 4, 64));
    const std::int64_t work = std::int64_t{o.runs} * o.trials * o.k_max * (o.k_max + 1) / 2;
    if (work > kMaxCalibrationWork) {
      throw InputError("--runs " + a.runs + " x --trials " + a.trials + " x (1 + ... + --k-max " + a.k_max + ") is " +
                       std::to_string(work) + " sends, more than " + std::to_string(kMaxCalibrationWork));
    }
  }
  return o;
}

// --mpi: both levels, under mpirun; process 0 prints and saves.
void calibrate_mpi_here(const CalibrateArgs& a) {
  const CalibrateOptions o = parse_options(a);
#ifdef POSTBOX_HAVE_MPI
  int threads = 0;
  if (!a.threads.empty()) threads = static_cast<int>(parse_int(a.threads, "--threads", 1, 4096));
  if (!cluster::launched_by_mpi()) throw InputError("--mpi: run under mpirun (mpirun -np 2 postbox calibrate --mpi)");
  if (dry_run()) return;
  cluster::MpiEnvironment env;
  if (env.size() < 2) throw InputError("--mpi: needs at least 2 processes (mpirun -np 2 or more), got 1");
  if (threads == 0) {
    // This process's CPUs shared among the node's processes.
    threads = std::max(1, allowed_cpu_count() / cluster::processes_on_node(MPI_COMM_WORLD));
  }
  Calibration c;
  try {
    c = cluster::calibrate_two_levels(MPI_COMM_WORLD, o, threads, kAttempts);
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error& e) {
    if (env.rank() == 0) {
      std::fprintf(stderr, "postbox: error: %s%s\n", e.what(),
                   allowed_cpu_count() < 2 ? "; process 0 may run on 1 CPU (mpirun binds each process to a core): pass "
                                             "--bind-to none"
                                           : "");
    }
    set_exit_code(1);
    return;
  }
  if (env.rank() != 0) return;
  if (allowed_cpu_count() < 2) {
    std::fprintf(stderr, "postbox: note: process 0 may run on 1 CPU (mpirun binds each process to a core; pass "
                         "--bind-to none): its two measuring threads share it, so the figures inside a process time "
                         "the scheduler\n");
  }
  if (a.json) {
    std::cout << calibration_json(c) << '\n';
  } else {
    std::printf("Inside process 0: postbox mailboxes (notify/recv) between two threads, k = 1..%d, %d trials per k,\n"
                "median of %d runs (± half the range over runs), %.0f ms:\n",
                c.k_max, c.trials, c.runs, c.elapsed_ms);
    print_figures(c);
    std::printf("Between processes 0 and 1 of %d: MPI point-to-point, k = 1..%d, %d trials per k, median of %d runs, %.0f ms:\n",
                c.inter->processes, c.inter->k_max, c.inter->trials, c.inter->runs, c.inter->elapsed_ms);
    print_figures(*c.inter);
    std::printf("inter/intra: s %.1fx, r %.1fx\n", c.inter->s_ns / c.s_ns, c.r_ns > 0 ? c.inter->r_ns / c.r_ns : 0.0);
  }
  if (a.save) save_all(c);
#else
  (void)o;
  throw InputError("--mpi: this postbox was built without MPI (install libopenmpi-dev and rebuild)");
#endif
}

void calibrate_here(const CalibrateArgs& a) {
  if (a.mpi) {
    calibrate_mpi_here(a);
    return;
  }
  const CalibrateOptions o = parse_options(a);
  if (dry_run()) return;
  Calibration c;
  try {
    c = calibrate_with_retries(o, kAttempts);
  } catch (const InputError&) {
    throw;
  } catch (const std::runtime_error& e) {
    // An unusable measurement (an overloaded machine): not bad input, so exit 1.
    std::fprintf(stderr, "postbox: error: %s\n", e.what());
    set_exit_code(1);
    return;
  }
  if (a.json) {
    std::cout << calibration_json(c) << '\n';
  } else {
    std::printf("Measured with postbox mailboxes (notify/recv) between two threads, k = 1..%d, %d trials per k,\n"
                "median of %d runs (± half the range over runs), %.0f ms:\n",
                c.k_max, c.trials, c.runs, c.elapsed_ms);
    print_figures(c);
  }
  if (a.save) {
    // The figures between processes come only from an mpirun: a later run without --mpi keeps them.
    try {
      if (const auto old = load_calibration(); old && old->inter) c.inter = old->inter;
    } catch (const InputError&) {
    }
    save_all(c);
  }
}
}  // namespace

void register_calibrate(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Measure the send latency s, the receive latency r and the postal latency lambda.\n"
      "Without --machine, on this machine with postbox's own mailboxes between two threads (works on\n"
      "2 cores): Cordsen's first and second notification times (s + r, 2s + r), sender-side timing of\n"
      "k back-to-back sends (s), and Bruck's experiment 1 (P0 sends to P1..Pk, Pk answers P0) and 2\n"
      "(Pk answers Pk-1..P0), least squares over k = 1..K; medians over runs. With --machine, Bruck's\n"
      "two experiments run inside the emulator for each message size.\n"
      "Exit status: 0 measured; 1 the machine was too noisy for a usable fit in 5 attempts, each\n"
      "with twice the trials of the one before (another process on the cores: try again); 2 bad input.");
  auto* machine_opt =
      sub->add_option("--machine", args->machine, "Emulated machine: model string, profile name or profile file");
  auto* sizes = sub->add_option("--sizes", args->sizes, "Message sizes in bytes, comma-separated, each 0 to 1073741824 "
                                                        "(with --machine)")
                    ->capture_default_str();
  sub->add_flag("--json", args->json,
                "Print JSON: {s_ns, r_ns, lambda, t0_ns, lambda_exp1, lambda_exp2, runs, ...} on this machine");
  auto* csv = sub->add_flag("--csv", args->csv, "Print CSV (with --machine)");
  auto* plot = sub->add_option("--plot", args->plot, "Write an SVG plot of lambda against message size (with --machine)");
  auto* save = sub->add_flag("--save", args->save,
                             "Write the result to $XDG_CACHE_HOME/postbox/calibration.json (else ~/.cache/postbox/...),\n"
                             "where the library looks first, and the emulator's 'local' profile to\n"
                             "$XDG_CACHE_HOME/postbox/profiles/local.toml (without --machine)");
  auto* mpi = sub->add_flag("--mpi", args->mpi,
                            "Under mpirun (at least 2 processes): also measure between processes 0 and 1 over MPI\n"
                            "point-to-point with the same experiments; the JSON gains an \"inter\" object and --save\n"
                            "also writes the emulator's 'local-cluster' profile (docs/cluster.md)");
  auto* threads = sub->add_option("--threads", args->threads,
                                  "With --mpi: threads per process of the jobs to model, 1 to 4096 (the local-cluster\n"
                                  "profile's cores_per_node; default: this process's CPUs / processes on its node)");
  auto* quick = sub->add_flag("--quick", args->quick,
                              "The small measurement the library makes at first use (3 runs, k = 1..6, 24 trials)");
  auto* runs = sub->add_option("--runs", args->runs, "Independent runs, 1 to 1000; figures are medians over them")
                   ->capture_default_str();
  auto* trials = sub->add_option("--trials", args->trials, "Repetitions of each experiment and k per run, 1 to 100000")
                     ->capture_default_str();
  auto* kmax = sub->add_option("--k-max", args->k_max,
                               "Largest k (receivers) of each experiment, 4 to 64; runs x trials x (1 + ... + k-max) "
                               "must be at most 20000000")
                   ->capture_default_str();
  sub->callback([=] {
    if (machine_opt->count() > 0) {
      for (auto* o : {save, quick, runs, trials, kmax, mpi, threads})
        if (o->count() > 0) throw InputError(o->get_name() + " applies only without --machine");
      set_exit_code(calibrate_emulated(args->machine, args->sizes, args->json, args->csv, args->plot));
      return;
    }
    for (auto* o : {sizes, csv, plot})
      if (o->count() > 0) throw InputError(o->get_name() + " applies only with --machine");
    if (threads->count() > 0 && !args->mpi) throw InputError("--threads applies only with --mpi");
    if (args->quick)
      for (auto* o : {runs, trials, kmax})
        if (o->count() > 0) throw InputError(o->get_name() + " does not apply to --quick");
    calibrate_here(*args);
  });
}

}  // namespace postbox::cli
