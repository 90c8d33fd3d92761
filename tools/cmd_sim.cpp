// postbox sim: run one collective plan on an emulated machine (docs/emulator.md).
#include <linux/magic.h>
#include <sys/statfs.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <string_view>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <iostream>
#include <string>
#include <system_error>

#include "cli.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/frontend/trace_writer.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/file.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/noise_parse.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/frontend/network_file.hpp"
#include "postbox/emulator/flow_network.hpp"
#include "postbox/emulator/mapped_storage.hpp"
#include "postbox/emulator/schedule.hpp"
#include "postbox/emulator/calibrate.hpp"
#include "postbox/emulator/simulator.hpp"
#include "progress.hpp"
#include "sim_common.hpp"

namespace postbox::cli {

const std::map<std::string, std::string>& emulated_run_defaults() {
  static const std::map<std::string, std::string> d{{"op", "bcast"}, {"algo", "binomial"}, {"p", "2"}, {"bytes", "8"}};
  return d;
}

namespace {

struct SimArgs {
  std::shared_ptr<TextOptions> options;
  bool json = false;
  bool qstat = false;
  std::string trace;
  std::string goal;
  std::string noise;
  std::string noise_trace;
  bool noise_cosched = false;
  std::string network_file;
  bool save_mem = false;
  std::string save_mem_dir = "/var/tmp";
  bool options_given_save_mem_dir = false;
};

// A text file named by an option, whole; messages name the option and the path as typed
// ("--noise-trace 'x': no such file"), as --file's do.
std::string read_text_file(const std::string& path, const std::string& option) {
  return read_regular_file(path, option + " '" + path + "'");
}

// The run's noise, if --noise or --noise-trace asks for one; --seed seeds it (as it seeds the
// placement and s2p's random distribution).
std::optional<sim::Noise> noise_of(const SimArgs& a, const std::map<std::string, std::string>& given) {
  if (!a.noise.empty() && !a.noise_trace.empty()) throw InputError("give either --noise or --noise-trace, not both");
  if (a.noise.empty() && a.noise_trace.empty()) {
    if (a.noise_cosched) throw InputError("--noise-cosched needs --noise or --noise-trace");
    return std::nullopt;
  }
  const auto seed = given.find("seed");
  const std::uint64_t s = seed != given.end() ? parse_uint(seed->second, "--seed") : 1;
  if (!a.noise.empty()) return sim::parse_noise_spec(a.noise, s, a.noise_cosched);
  return sim::parse_noise_trace(read_text_file(a.noise_trace, "--noise-trace"), a.noise_trace, s, a.noise_cosched);
}

// --network-file: the logp machine's network, with at least p hosts.
void attach_network(sim::Machine& m, const std::string& path, const std::string& machine, int p) {
  if (path.empty()) return;
  if (m.kind != sim::ModelKind::loggp)
    throw InputError("--network-file needs a logp machine (logp:L:o:g:G...), '" + machine + "' is not one");
  m.network = sim::read_network_file(path);
  if (m.network->hosts() < p)
    throw InputError("network file '" + path + "' has " + std::to_string(m.network->hosts()) +
                     " hosts (nodes named H...), fewer than p = " + std::to_string(p));
}

// A double as nlohmann::json writes it (shortest round trip, integral values with ".0").
void put_double(std::string& out, double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  out += text;
  if (text.find_first_of(".eEn") == std::string_view::npos) out += ".0";
}

void run_sim(const SimArgs& a) {
  const auto t_start = std::chrono::steady_clock::now();
  const auto given = a.options->given();
  const std::string machine = given.count("machine") != 0 ? given.at("machine") : std::string();
  if (!a.save_mem && a.options_given_save_mem_dir) throw InputError("--save-mem-dir needs --save-mem");
  // Made before the schedule is read or built, so that its arrays, and the run's, are allocated
  // inside the scope (file-backed).
  std::optional<sim::MappedStorage> mapped;
  if (a.save_mem) {
    mapped.emplace(a.save_mem_dir);
    struct statfs fs {};
    if (::statfs(a.save_mem_dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC)
      std::fprintf(stderr, "postbox: note: --save-mem-dir '%s' is a tmpfs, whose files are memory too\n",
                   a.save_mem_dir.c_str());
  }
  sim::Schedule schedule;
  sim::Machine m;
  const std::optional<sim::Noise> noise = noise_of(a, given);
  if (!a.goal.empty()) {
    // The same refusals read_goal_file makes, worded with the option as every other file's are.
    check_regular_file(a.goal, "--goal '" + a.goal + "'");
    GoalRead goal;
    try {
      goal = read_goal_file(a.goal, std::filesystem::path(a.goal).filename().string());
    } catch (const GoalSyntaxError& e) {
      throw InputError("--goal '" + a.goal + "': " + frontend::error_line(e));  // the file, then the line in it
    }
    schedule = std::move(goal.schedule);
    std::optional<Mesh> ranks_mesh;
    if (goal.mesh_rows > 0) ranks_mesh = Mesh{goal.mesh_rows, goal.mesh_cols};
    m = select_schedule_machine(given, schedule.p, ranks_mesh);
    attach_network(m, a.network_file, machine, schedule.p);
    if (dry_run()) return;
  } else {
    EmulatedRun run = select_emulated_run(given);
    m = std::move(run.machine);
    attach_network(m, a.network_file, machine, run.request.p);
    if (dry_run()) return;
    schedule = sim::schedule_of(build_plan(run.request));  // the plan is not needed past here
  }
  sim::SimOptions opt;
  opt.trace = !a.trace.empty();
  opt.queue_stats = a.qstat;
  if (noise) opt.noise = &*noise;
  // On a terminal, a run past 2 s shows how many of the schedule's operations are done.
  TerminalProgress progress(stderr_is_terminal());
  opt.progress = [&progress](std::uint64_t done, std::uint64_t total) {
    progress.update("sim: operations", static_cast<std::size_t>(done), static_cast<std::size_t>(total));
  };
  const auto t_sim = std::chrono::steady_clock::now();
  const sim::SimResult r = sim::simulate(schedule, m, opt);
  const auto t_end = std::chrono::steady_clock::now();
  const double build_s = std::chrono::duration<double>(t_sim - t_start).count();
  const double wall = std::chrono::duration<double>(t_end - t_sim).count();
  const double eps = wall > 0 ? static_cast<double>(r.events) / wall : 0.0;
  if (!a.trace.empty()) {
    std::ofstream out(a.trace, std::ios::binary);
    if (!out) throw InputError("cannot write --trace file '" + a.trace + "'");
    sim::write_chrome_trace(out, r, schedule, m);
    out.close();
    if (!out) throw InputError("cannot write --trace file '" + a.trace + "': " + std::strerror(errno));
  }
  if (a.json) {
    nlohmann::json j = frontend::sim_result_json(r, machine, schedule.op, schedule.algo, schedule.p, schedule.bytes);
    j["events_per_s"] = eps;  // the only field that depends on the host's speed
    if (noise) {
      nlohmann::json n;
      n["source"] = a.noise.empty() ? "trace:" + a.noise_trace : a.noise;
      n["cosched"] = noise->cosched();
      n["seed"] = noise->seed();
      n["period_us"] = sim::to_units(noise->period());
      n["detours_per_period"] = noise->detours().size();
      n["detour_us_per_period"] = sim::to_units(noise->busy_per_period());
      n["detour_us"] = r.noise_us;  // what the detours added to the ranks' operations, all ranks
      j["noise"] = n;
    }
    if (m.network) {
      j["network_file"] = a.network_file;
      j["max_link_flows"] = r.max_link_flows;
      j["slowed_flows"] = r.slowed_flows;
    }
    j["per_rank_us"] = nullptr;
    // per_rank_us is written here, not through nlohmann::json: 10^7 ranks would take GiBs there.
    const std::string head = j.dump(2);
    const std::string key = "\"per_rank_us\": null";
    const std::size_t at = head.find(key);
    std::string body;
    body.reserve(r.per_rank_us.size() * 12 + 16);
    body += "\"per_rank_us\": [";
    for (std::size_t i = 0; i < r.per_rank_us.size(); ++i) {
      body += i == 0 ? "\n    " : ",\n    ";
      put_double(body, r.per_rank_us[i]);
    }
    body += r.per_rank_us.empty() ? "]" : "\n  ]";
    std::cout << head.substr(0, at) << body << head.substr(at + key.size()) << '\n';
    return;
  }
  std::printf("machine %s, %s/%s, p = %d, %llu bytes\n", machine.c_str(), schedule.op.c_str(), schedule.algo.c_str(),
              schedule.p, static_cast<unsigned long long>(schedule.bytes));
  std::printf("time     %.3f %s\n", r.time_us, m.kind == sim::ModelKind::postal ? "(units of one send)" : "us");
  std::printf("messages %llu, packets %llu, events %llu (%.3g events/s)", static_cast<unsigned long long>(r.messages),
              static_cast<unsigned long long>(r.packets), static_cast<unsigned long long>(r.events), eps);
  if (sim::has_rendezvous(m)) std::printf(", rendezvous %llu", static_cast<unsigned long long>(r.rendezvous));
  if (r.inline_steps > 0) std::printf(", mesh steps inline %llu", static_cast<unsigned long long>(r.inline_steps));
  if (m.kind == sim::ModelKind::mesh)
    std::printf(", channel waits %llu (ties %llu)", static_cast<unsigned long long>(r.channel_waits),
                static_cast<unsigned long long>(r.channel_ties));
  std::printf("\n");
  if (noise)
    std::printf("noise    %s, %s (seed %llu): detours added %.3f to the ranks' operations in all\n",
                a.noise.empty() ? ("trace " + a.noise_trace).c_str() : a.noise.c_str(),
                noise->cosched() ? "co-scheduled" : "a random offset per rank", static_cast<unsigned long long>(noise->seed()),
                r.noise_us);
  if (m.network)
    std::printf("network  %s: %d hosts, %zu nodes, %zu links; most flows on one link %u, flows slowed %llu\n",
                a.network_file.c_str(), m.network->hosts(), m.network->node_names.size(), m.network->links.size(),
                r.max_link_flows, static_cast<unsigned long long>(r.slowed_flows));
  if (a.qstat) {
    std::uint32_t posted = 0, unexpected = 0;
    int posted_at = 0, unexpected_at = 0;
    for (std::size_t i = 0; i < r.queues.size(); ++i) {
      if (r.queues[i].max_posted > posted) posted = r.queues[i].max_posted, posted_at = static_cast<int>(i);
      if (r.queues[i].max_unexpected > unexpected) unexpected = r.queues[i].max_unexpected, unexpected_at = static_cast<int>(i);
    }
    std::printf("queues   longest posted-receive queue %u (rank %d), longest unexpected-message queue %u (rank %d)\n", posted,
                posted_at, unexpected, unexpected_at);
  }
  if (mapped)
    std::printf("save-mem at most %.1f MiB of the schedule and the run's state in files under %s\n",
                static_cast<double>(mapped->peak_bytes()) / 1048576.0, a.save_mem_dir.c_str());
  std::printf("wall     %.2f s building the schedule, %.2f s simulating\n", build_s, wall);
}

}  // namespace

void register_sim(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sub = app.add_subcommand(
      "sim",
      "Run a collective on an emulated machine in virtual time (deterministic discrete-event simulation).\n"
      "MACHINE is postal:L[:C], sr:S:R[:C], logp:L:o:g:G[:C][:O=X][:S=N] (microseconds; G and C per byte,\n"
      "C the CPU time of reduce and copy, default 0; LogGOPS: O the CPU time per byte of a send and of an\n"
      "accept, default 0, and a message of more than S=N bytes goes by rendezvous, its send completing when\n"
      "the receiver matches it, default never), cluster:NODESxCORES[:PROFILE] (rank r on node r / CORES), a\n"
      "profile name (delta, paragon, t3d, manna, cluster-example, local) or a profile file. The schedule\n"
      "is a plan (--op/--algo/--p/--bytes) or a GOAL file (--goal). See docs/emulator.md.\n"
      "On a terminal, a run that takes over 2 s shows on stderr how many of the schedule's operations are\n"
      "done (erased at the end).");
  args->options = std::make_shared<TextOptions>(sub, emulated_run_options(), emulated_run_defaults());
  sub->add_option("--goal", args->goal,
                  "Run a schedule in LogGOPSim's GOAL language instead of a plan (calc values in the machine's unit; "
                  "with --machine, --mesh, --placement, --seed, the --noise options and --network-file only)");
  sub->add_flag("--json", args->json,
                "Print JSON: machine, op, algo, p, bytes, time_us, time_ticks, messages, rendezvous (messages sent by\n"
                "rendezvous: more than the machine's S bytes), events, inline_steps, packets,\n"
                "channel_waits (mesh: times a packet got a channel after the tick it asked), channel_ties (wormhole:\n"
                "of those, the ones where the holder before it asked at the same tick), events_per_s, "
                "per_rank_us; with noise, \"noise\": source, cosched, seed, period_us, detours_per_period,\n"
                "detour_us_per_period, detour_us (the CPU time the detours added to the ranks' operations, all ranks);\n"
                "with --network-file, network_file, max_link_flows and slowed_flows");
  sub->add_flag("--qstat", args->qstat,
                "Matching-queue statistics, as LogGOPSim's --qstat samples them: per rank the longest and mean\n"
                "posted-receive queue a message found when accepted, and unexpected-message queue a receive found\n"
                "when posted (--json: \"queues\" with max_posted, mean_posted, max_unexpected, mean_unexpected, one\n"
                "entry per rank; text: the longest of each)");
  sub->add_option("--trace", args->trace,
                  "Write a Chrome trace-event JSON file (open in Perfetto); with noise, each detour that stretched an\n"
                  "operation is a \"noise\" span inside it");
  sub->add_option("--noise", args->noise,
                  "OS noise (docs/emulator.md, \"Noise\"), in the machine's unit (us but for postal):\n"
                  "periodic:PERIOD:DETOUR (a DETOUR at the start of every PERIOD), exp:MEAN_GAP:MEAN_DETOUR\n"
                  "(exponential gaps and detours), pareto:MEAN_GAP:MIN_DETOUR:ALPHA (exponential gaps, Pareto\n"
                  "detours, ALPHA > 1); the random ones are 65536 detours drawn from --seed, then repeated. A rank's\n"
                  "send and receive overheads, reduce, copy and calc run only outside its detours; each rank sees\n"
                  "the noise from its own offset, drawn from --seed (default 1), unless --noise-cosched")
      ->type_name("SPEC");
  sub->add_option("--noise-trace", args->noise_trace,
                  "OS noise from a file in LogGOPSim's format: a line per detour, START DURATION in nanoseconds\n"
                  "(10^-3 of the machine's unit), '#' comment lines; the last line's start is the trace's length,\n"
                  "after which it repeats")
      ->type_name("FILE");
  sub->add_flag("--noise-cosched", args->noise_cosched,
                "Co-scheduled noise: every rank sees the noise from offset 0 (default: a random offset per rank)");
  sub->add_option("--network-file", args->network_file,
                  "logp machines: the network as LogGOPSim's --network-file gives it, a DOT digraph (nodes named H...\n"
                  "are the hosts, rank i the i-th; edges are links, their comment the destinations routed through\n"
                  "them, \"*\" all). Each message's bytes after the first cross its route as a flow from the send's\n"
                  "start, (b-1)*G alone, at 1/k of full speed while k flows share the busiest link of the route; the\n"
                  "message arrives o + L after its flow ends. The receiver is not charged G again: its gap is g,\n"
                  "its CPU o + O per byte. Not with the noise options. See docs/emulator.md, \"Network from a DOT file\"")
      ->type_name("FILE");
  sub->add_flag("--save-mem", args->save_mem,
                "Schedules larger than memory, as LogGOPSim's --save-mem: the schedule's arrays and the run's\n"
                "state per op and per rank (each array of 1 MiB or more) live in files under --save-mem-dir,\n"
                "unlinked at once, which the kernel writes back and drops under memory pressure instead of\n"
                "the process being killed; slower when memory is short. A built plan's own building is not\n"
                "covered (a GOAL file is read mapped). Results are the same");
  sub->add_option("--save-mem-dir", args->save_mem_dir,
                  "Where --save-mem puts its files: a directory on a disk, not a tmpfs (default /var/tmp)")
      ->type_name("DIR");
  sub->callback([args, sub] {
    args->options_given_save_mem_dir = sub->count("--save-mem-dir") > 0;
    run_sim(*args);
  });
}

}  // namespace postbox::cli
