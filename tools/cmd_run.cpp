// postbox run: one collective on threads (a cached plan on the thread executor), timed over
// --iters runs, optionally verified byte for byte on every rank against the library's oracle
// (collectives/verify.hpp); postbox run --list. The plan comes from the plan selection
// (collectives/selection.hpp) or, with --file, from a JSON export. Under mpirun the same plan
// runs on a cluster::Job of the processes x --threads ranks (docs/cluster.md).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "progress.hpp"
#include "cluster_cli.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/run.hpp"
#include "postbox/collectives/verify.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/limits.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/runtime/team.hpp"
#ifdef POSTBOX_HAVE_MPI
#include "postbox/cluster/job.hpp"
#endif

namespace postbox::cli {
namespace {

// Beyond this a run is a typo (and the mailboxes' pair table grows as p²).
constexpr int kMaxRunRanks = 4096;
constexpr std::int64_t kMaxIters = 1'000'000;

struct RunArgs {
  std::shared_ptr<TextOptions> sel;
  std::string iters = "10";
  std::string verify_every;
  std::string file;
  std::string threads;
  std::string ranks;
  CLI::Option* ranks_opt = nullptr;
  CLI::Option* verify_every_opt = nullptr;
  CLI::Option* file_opt = nullptr;
  CLI::Option* threads_opt = nullptr;
  bool verify = false;
  bool json = false;
  bool list = false;
};

void list_algorithms() {
  for (const auto& b : list_plan_builders()) std::cout << b.op << " " << b.algo << "  " << b.description << "\n";
}

// A plan read from a JSON export; the request (for the oracle) from its header, with the s2p and
// C³ options the user gave (the header does not hold sources or a mesh).
std::pair<std::shared_ptr<const Plan>, PlanRequest> plan_from_file(const RunArgs& args) {
  auto given = args.sel->given();
  for (const auto& [name, text] : given) {
    (void)text;
    if (name != "mesh" && name != "sources" && name != "dist" && name != "seed" && name != "source-list") {
      throw InputError("--" + name + " does not apply with --file (the plan names its op, p, bytes and root)");
    }
  }
  const std::string what = "--file '" + args.file + "'";
  auto plan = std::make_shared<const Plan>(plan_from_json_file(args.file, what));
  if (const auto problem = validate(*plan)) throw InputError(what + ": " + *problem);
  // The header names a registered plan (the oracle and the ring sizing are the op's): errors name
  // the file's fields, not the options the file replaces.
  if (plan->op.empty()) throw InputError(what + ": field \"op\" is empty");
  if (plan->algo.empty()) throw InputError(what + ": field \"algo\" is empty");
  try {
    check_plan_known(plan->op, plan->algo);
  } catch (const FieldError& e) {
    throw InputError(what + ": " + e.render([](const std::string& f) { return "\"" + f + "\""; }));
  } catch (const InputError& e) {
    throw InputError(what + ": field \"op\": " + e.what());
  }
  given["op"] = plan->op;
  given["algo"] = plan->algo;
  given["p"] = std::to_string(plan->p);
  given["bytes"] = std::to_string(plan->bytes);
  if (op_has_root(plan->op)) given["root"] = std::to_string(std::max(plan->root, 0));
  if (plan->op == "reduce" || plan->op == "allreduce") given["elem-bytes"] = std::to_string(plan->elem_bytes);
  try {
    return {plan, select_plan(given, kRunDefaults)};
  } catch (const InputError& e) {
    throw InputError(what + ": " + e.what());  // the header's values, checked as the options they stand for
  }
}

// The job's shape: P processes (1 without mpirun) × T threads. --threads T sets p = P·T, and an
// explicit --p must agree; without --threads, --p must be a multiple of P (T = p / P), else T = 1.
struct Shape {
  int processes = 1;
  int threads = 0;  // 0: no --threads and one process (p is --p's, as before)
};

Shape job_shape(const RunArgs& args, std::map<std::string, std::string>& given, int processes) {
  Shape shape{processes, 0};
  const auto p_given = given.find("p");
  if (args.threads_opt->count() > 0) {
    shape.threads = static_cast<int>(parse_int(args.threads, "--threads", 1, kMaxRunRanks));
    const std::int64_t p = static_cast<std::int64_t>(processes) * shape.threads;
    if (p_given != given.end() && parse_int(p_given->second, "--p", 1, std::int64_t{1} << 30) != p) {
      throw InputError("--p " + p_given->second + " disagrees with processes x --threads = " + std::to_string(processes) +
                       " x " + args.threads + " = " + std::to_string(p));
    }
    given["p"] = std::to_string(p);
  } else if (processes > 1) {
    if (p_given == given.end()) {
      shape.threads = 1;
      given["p"] = std::to_string(processes);
    } else {
      const std::int64_t p = parse_int(p_given->second, "--p", 1, std::int64_t{1} << 30);
      if (p % processes != 0) {
        throw InputError("--p " + p_given->second + " is not a multiple of the " + std::to_string(processes) +
                         " processes (give --threads T for p = processes x T)");
      }
      shape.threads = static_cast<int>(p / processes);
    }
  }
  return shape;
}

// What a run prints, on threads or across processes: the JSON (`shape`'s fields right after "p":
// "ranks" on threads, "processes" and "threads" across processes) or the text line (`after_p`
// and `after_iters` inserted there). ns: the timed runs made (a failed check stops them).
void report_run(const RunArgs& args, const Plan& plan, const nlohmann::ordered_json& shape, const std::string& after_p,
                const std::string& after_iters, int iters, std::vector<double> ns, int checked, std::optional<bool> verified) {
  std::sort(ns.begin(), ns.end());
  const bool timed = !ns.empty();
  const double median = timed ? ns[(ns.size() - 1) / 2] : 0;
  const double p90 =
      timed ? ns[std::min(ns.size() - 1, static_cast<std::size_t>(0.9 * static_cast<double>(ns.size() - 1) + 0.5))] : 0;
  if (args.json) {
    nlohmann::ordered_json j{{"op", plan.op}, {"algo", plan.algo}, {"p", plan.p}};
    for (const auto& [key, value] : shape.items()) j[key] = value;
    j["bytes"] = plan.bytes;
    j["iters"] = iters;
    j["timed_runs"] = ns.size();
    j["median_ns"] = timed ? nlohmann::ordered_json(median) : nlohmann::ordered_json(nullptr);
    j["p90_ns"] = timed ? nlohmann::ordered_json(p90) : nlohmann::ordered_json(nullptr);
    j["verified"] = verified ? nlohmann::ordered_json(*verified) : nlohmann::ordered_json(nullptr);
    j["verified_runs"] = checked;
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::printf("%s/%s p=%d%s bytes=%llu iters=%d%s: ", plan.op.c_str(), plan.algo.c_str(), plan.p, after_p.c_str(),
              static_cast<unsigned long long>(plan.bytes), iters, after_iters.c_str());
  if (ns.size() < static_cast<std::size_t>(iters)) std::printf("stopped after %zu timed runs, ", ns.size());
  if (timed) std::printf("median %.1f us, p90 %.1f us per team run", median / 1e3, p90 / 1e3);
  std::printf("%s\n", !verified ? "" : (*verified ? ", verified" : (timed ? ", VERIFY FAILED" : "VERIFY FAILED")));
}

#ifdef POSTBOX_HAVE_MPI
void run_across_processes(const RunArgs& args, const std::shared_ptr<const Plan>& plan, PlanRequest req,
                          const Shape& shape, int iters, int every);
#endif

void run_collective(const RunArgs& args) {
  if (args.list) {
#ifdef POSTBOX_HAVE_MPI
    if (mpi::process() != 0) return;
#endif
    list_algorithms();
    return;
  }
  const int iters = static_cast<int>(parse_int(args.iters, "--iters", 1, kMaxIters));
  int every = 1;
  if (args.verify_every_opt->count() > 0) {
    if (!args.verify) throw InputError("--verify-every applies with --verify");
    every = static_cast<int>(parse_int(args.verify_every, "--verify-every", 1, iters));
  }
  TeamOptions opts;
  // The CLI's default is auto (fibers once --p exceeds the allowed CPUs), unless --threads or
  // POSTBOX_RANKS says otherwise; the library's TeamOptions default stays threads.
  if (args.ranks_opt->count() > 0) {
    opts.ranks = parse_ranks_option(args.ranks);
  } else if (args.threads_opt->count() > 0) {
    opts.ranks = RanksMode::threads;  // --threads T asks for T threads
  } else {
    opts.ranks = default_ranks_mode(RanksMode::automatic);
  }
  const bool from_file = args.file_opt->count() > 0;
  int processes = 1;
#ifdef POSTBOX_HAVE_MPI
  processes = mpi::processes();
#endif
  auto given = args.sel->given();
  const Shape shape = job_shape(args, given, processes);
  if (from_file && args.threads_opt->count() > 0) throw InputError("--threads does not apply with --file (the plan names its p)");
  auto [plan, req] = from_file ? plan_from_file(args) : std::pair{std::shared_ptr<const Plan>(), select_plan(given, kRunDefaults)};
  if (from_file && req.p % processes != 0) {
    throw InputError("--file '" + args.file + "': the plan's p = " + std::to_string(req.p) + " is not a multiple of the " +
                     std::to_string(processes) + " processes");
  }
#ifndef POSTBOX_HAVE_MPI
  (void)shape;
#else
  if (mpi::active()) {
    if (args.ranks_opt->count() > 0 && opts.ranks != RanksMode::threads) {
      throw InputError("--ranks " + args.ranks + " does not apply under mpirun (the job's ranks are threads)");
    }
    Shape s = shape;
    s.threads = req.p / processes;
    run_across_processes(args, plan, req, s, iters, every);
    return;
  }
#endif
  if (req.p > kMaxRunRanks) {
    throw InputError("--p must be at most " + std::to_string(kMaxRunRanks) + " for run, got " + std::to_string(req.p));
  }
  const bool fibers = resolve_ranks_mode(opts.ranks, req.p) == RanksMode::fibers;
  // With fibers the kernel threads are the workers: at most the allowed CPUs.
  require_threads(static_cast<std::uint64_t>(fibers ? std::min(req.p, allowed_cpu_count()) : req.p),
                  "--p " + std::to_string(req.p));
  if (req.op == "barrier" && args.verify) {
    throw InputError("--verify does not apply to barrier: its messages carry no data (a run that returns has completed "
                     "every rank's arrival and wake-up)");
  }
  if (args.verify) require_oracle(req.op);
  if (dry_run()) return;
  if (!plan) plan = cached_plan(req);
  RunOptions ro;
  ro.iters = iters;
  ro.verify = args.verify;
  ro.verify_every = every;
  PlanRun run;
  {
    TerminalProgress progress(!args.json && stderr_is_terminal());
    ro.progress = [&](int done, int all) {
      progress.update("run", static_cast<std::size_t>(done), static_cast<std::size_t>(all));
    };
    run = run_plan(plan, req, opts, ro);
  }
  if (args.verify && run.buffer_mismatch) {
    std::fprintf(stderr, "postbox: verify failed: %s\n", run.buffer_mismatch->c_str());
    set_exit_code(1);
    return;
  }
  if (!run.wrap_note.empty()) note(run.wrap_note);
  if (!run.stats.failure.empty()) {
    std::fprintf(stderr, "postbox: verify failed: %s\n", run.stats.failure.c_str());
    set_exit_code(1);
  }
  report_run(args, *plan, {{"ranks", run.fibers ? "fibers" : "threads"}}, "",
             run.fibers ? " on fibers (" + std::to_string(run.workers) + " workers)" : "", iters, run.stats.ns,
             run.stats.checked, run.stats.verified);
}

#ifdef POSTBOX_HAVE_MPI
// `run` under mpirun: the same plan, run by a cluster::Job of P processes × T threads; every
// process checks its own ranks, process 0 prints (docs/cluster.md).
void run_across_processes(const RunArgs& args, const std::shared_ptr<const Plan>& given_plan, PlanRequest req,
                          const Shape& shape, int iters, int every) {
  require_threads(static_cast<std::uint64_t>(shape.threads), "--threads " + std::to_string(shape.threads));
  if (req.op == "barrier" && args.verify) {
    throw InputError("--verify does not apply to barrier: its messages carry no data (a run that returns has completed "
                     "every rank's arrival and wake-up)");
  }
  if (args.verify) require_oracle(req.op);
  if (dry_run()) return;
  // hier: the tree across processes from the inter figures, inside each from the intra ones.
  if (!given_plan) cluster::use_job_hier_levels(req, shape.processes, shape.threads);
  std::optional<Oracle> oracle;
  if (args.verify || Oracle::knows(req.op)) oracle.emplace(req);
  std::shared_ptr<const Plan> plan = given_plan ? given_plan : cached_plan(req);
  bool oracle_fits = oracle && !oracle->check_buffers(*plan);
  if (args.verify && !oracle_fits) {
    throw InputError("verify: " + oracle->check_buffers(*plan).value_or(""));
  }
  if (!oracle_fits) oracle.reset();  // a hand-made plan with other buffers: zeros
  // Every process must run the same plan the same way: the agreement compares the plan itself.
  char fp[128];
  std::snprintf(fp, sizeof fp, "%016llx|T%d|i%d|e%d|v%d|j%d",
                static_cast<unsigned long long>(cluster::plan_fingerprint(*plan)), shape.threads, iters, every,
                args.verify ? 1 : 0, args.json ? 1 : 0);
  mpi::agree(fp);

  TeamOptions opts;
  opts.mailbox.ring_bytes = 64 * 1024;  // the job raises it where the plan needs more
  cluster::Job job(MPI_COMM_WORLD, shape.threads, opts);
  std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(shape.threads));
  std::vector<std::span<std::byte>> users;
  for (int t = 0; t < shape.threads; ++t) {
    bufs[static_cast<std::size_t>(t)].resize(plan->user_bytes[static_cast<std::size_t>(job.rank_of(t))]);
    users.emplace_back(bufs[static_cast<std::size_t>(t)]);
  }
  const ReduceFn sum = unsigned_sum(plan->elem_bytes);
  RunOptions ro;
  ro.iters = iters;
  ro.verify = args.verify;
  ro.verify_every = every;
  const RunStats stats = timed_runs(
      ro,
      [&] {
        if (oracle)
          for (int t = 0; t < shape.threads; ++t) oracle->fill(job.rank_of(t), users[static_cast<std::size_t>(t)]);
      },
      [&] {
        job.barrier();
        const auto t0 = std::chrono::steady_clock::now();
        job.run(plan, users, &sum);
        const auto t1 = std::chrono::steady_clock::now();
        // A run's time: from the barrier to the last process's last rank.
        return job.max_over_processes(std::chrono::duration<double, std::nano>(t1 - t0).count());
      },
      [&]() -> std::optional<std::string> {
        const auto bad = job.check(*oracle, users);
        if (!bad) return std::nullopt;
        return bad->str();
      });
  if (!stats.failure.empty()) {
    if (job.process() == 0) std::fprintf(stderr, "postbox: verify failed: %s\n", stats.failure.c_str());
    set_exit_code(1);
  }
  if (job.process() != 0) return;
  report_run(args, *plan, {{"processes", job.processes()}, {"threads", job.threads()}},
             " (" + std::to_string(job.processes()) + " processes x " + std::to_string(job.threads()) + " threads)", "",
             iters, stats.ns, stats.checked, stats.verified);
}
#endif

}  // namespace

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run one collective on threads (a plan on the thread executor): time it over --iters runs, "
             "optionally verify every rank's result byte for byte. Under mpirun: one job of the processes x --threads "
             "ranks, the plan run across them (docs/cluster.md).\n"
             "What a time includes: one whole run of the team: waking the parked ranks, the plan, and the last "
             "rank's return to the caller. That hand-off costs microseconds, so a barrier or a small message reads "
             "several times higher here than inside a loop of one team run (postbox bench barrier measures that "
             "way). On a terminal, a run that takes over 2 s shows its progress on stderr (erased at the end).\n"
             "Limits, checked before anything runs: --p at most 4096 and what the system can start as threads; the "
             "mailbox rings (64 KiB per pair that talks often, more if the plan needs it, 256 MiB in all; the "
             "other pairs' messages wait in a queue per receiver), buffers and threads within the memory available.\nExit status: 0 done (and verified); 1 verification failed; 2 bad input.");
  args->sel = std::make_shared<TextOptions>(cmd, plan_selection_options(), kRunDefaults.defaults);
  cmd->add_option("--iters", args->iters, "Timed runs, 1 to 1000000 (after one untimed warm-up run)")->capture_default_str();
  cmd->add_flag("--verify", args->verify,
                "Fill every rank's input per the op's definition (collectives/verify.hpp) and check every rank's result "
                "byte for byte after the warm-up and every timed run (reduce/allreduce: unsigned sums of --elem-bytes); "
                "exit 1 naming the first wrong rank and byte");
  args->verify_every_opt = cmd->add_option("--verify-every", args->verify_every,
                                           "With --verify: check every K-th timed run (and the warm-up and the last), K "
                                           "from 1 (the default) to --iters")
                               ->type_name("K");
  args->file_opt = cmd->add_option("--file", args->file,
                                   "Run the plan in FILE (a plan export --format json, perhaps edited) instead of the "
                                   "selection; --verify checks it against its op's definition (s2p: give the sources "
                                   "with --dist/--sources/--source-list and --mesh)")
                       ->type_name("FILE");
  args->threads_opt = cmd->add_option("--threads", args->threads,
                                      "Threads per process, 1 to 4096: under mpirun with P processes the job has p = P x "
                                      "T ranks (rank = process x T + thread; an explicit --p must agree), without mpirun "
                                      "p = T")
                          ->type_name("T");
  args->ranks_opt = cmd->add_option("--ranks", args->ranks,
                                    "How ranks run: threads (one kernel thread each), fibers (Boost.Context fibers on "
                                    "one worker thread per allowed CPU), auto (fibers when --p exceeds the allowed "
                                    "CPUs). Default: threads with --threads, else POSTBOX_RANKS, else auto. Not under mpirun (there the ranks "
                                    "are threads)")
                        ->type_name("MODE");
  cmd->add_flag("--json", args->json,
                R"(Print {"op","algo","p","ranks","bytes","iters","timed_runs","median_ns","p90_ns","verified","verified_runs"}; )"
                R"(under mpirun also "processes" and "threads" after "p")");
  cmd->add_flag("--list", args->list, "List every registered op and algorithm, one per line, and exit");
  cmd->callback([args] { run_collective(*args); });
}

}  // namespace postbox::cli
