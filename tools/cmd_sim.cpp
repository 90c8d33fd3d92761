// postbox sim: run one collective plan on an emulated machine (docs/emulator.md).
#include <charconv>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string_view>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "cli.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/goal_parse.hpp"
#include "postbox/runtime/sim/schedule.hpp"
#include "postbox/runtime/sim/calibrate.hpp"
#include "sim_common.hpp"

namespace postbox::cli {

double round_lambda(double x) { return std::round(x * 1000.0) / 1000.0; }

sim::Machine resolve_machine(const SimSpec& spec) {
  sim::Machine m = sim::load_machine(spec.machine);
  if (!spec.mesh.empty()) {
    if (m.kind != sim::ModelKind::mesh) throw InputError("--mesh needs a mesh machine, '" + spec.machine + "' is not one");
    m.mesh.dims = sim::parse_dims(spec.mesh, "--mesh");
  }
  if (!spec.placement.empty()) {
    if (m.kind != sim::ModelKind::mesh) throw InputError("--placement needs a mesh machine");
    m.placement = sim::parse_placement(spec.placement, spec.seed);
  } else {
    m.placement.seed = spec.seed;
  }
  if (m.kind == sim::ModelKind::mesh && m.mesh.nodes() < spec.p)
    throw InputError("mesh " + spec.mesh + " has " + std::to_string(m.mesh.nodes()) + " nodes, fewer than --p " +
                     std::to_string(spec.p));
  return m;
}

double plan_lambda(const SimSpec& spec, const sim::Machine& m) {
  if (spec.lambda) return *spec.lambda;
  const auto b = static_cast<std::uint64_t>(spec.bytes);
  if (m.kind != sim::ModelKind::mesh) return sim::nominal_lambda(m, b);
  // Bruck §2.6: λ is measured for the message size, then the tree is chosen for it.
  sim::Machine row = m;
  row.placement = sim::Placement{};
  const int k_max = static_cast<int>(std::min<std::int64_t>(12, row.mesh.nodes() - 1));
  if (k_max < 3) return 2.0;
  return std::max(1.0, sim::measure_lambda(row, b, 2, k_max).lambda_exp1);
}

Plan make_sim_plan(const SimSpec& spec, const sim::Machine& m) {
  PlanRequest req;
  req.op = spec.op;
  req.algo = spec.algo;
  if (spec.alpha) {
    if (!(*spec.alpha > 0 && *spec.alpha < 1)) throw InputError("--alpha must lie in (0, 1)");
    if (spec.algo != "lambda") throw InputError("--alpha applies to --algo lambda only");
    char buf[32];
    std::snprintf(buf, sizeof buf, "lambda:%.4f", *spec.alpha);
    req.algo = buf;
  }
  req.p = spec.p;
  req.bytes = spec.bytes;
  req.root = 0;
  req.lambda = sim_plan_lambda(spec, m);
  return build_plan(req);
}

Rational sim_plan_lambda(const SimSpec& spec, const sim::Machine& m) {
  const double lambda = round_lambda(plan_lambda(spec, m));
  if (lambda < 1) throw InputError("--lambda must be at least 1");
  return Rational(static_cast<std::int64_t>(std::llround(lambda * 1000)), 1000);
}

namespace {

struct SimArgs {
  SimSpec spec;
  std::string p_text = "2";
  bool json = false;
  std::string trace;
  std::string goal;
  CLI::App* cmd = nullptr;
};

// A double as nlohmann::json writes it (shortest round trip, integral values with ".0").
void put_double(std::string& out, double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string_view text(buf, static_cast<std::size_t>(end - buf));
  out += text;
  if (text.find_first_of(".eEn") == std::string_view::npos) out += ".0";
}

void run_sim(const SimArgs& a) {
  SimSpec spec = a.spec;
  const auto t_start = std::chrono::steady_clock::now();
  sim::Schedule schedule;
  sim::Machine m;
  if (!a.goal.empty()) {
    for (const char* opt : {"--op", "--algo", "--p", "--bytes", "--alpha", "--lambda"})
      if (a.cmd->count(opt) > 0) throw InputError(std::string("--goal takes the schedule from its file; drop ") + opt);
    std::ifstream in(a.goal, std::ios::binary);
    if (!in) throw InputError("cannot read --goal file '" + a.goal + "'");
    std::ostringstream text;
    text << in.rdbuf();
    schedule = sim::schedule_of_goal(parse_goal(text.str()), std::filesystem::path(a.goal).filename().string());
    spec.p = schedule.p;
    m = resolve_machine(spec);
  } else {
    spec.p = parse_positive("p", a.p_text);
    if (spec.bytes < 0) throw InputError("--bytes must not be negative");
    m = resolve_machine(spec);
    schedule = sim::schedule_of(make_sim_plan(spec, m));  // the plan is not needed past here
  }
  sim::SimOptions opt;
  opt.trace = !a.trace.empty();
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
  }
  if (a.json) {
    nlohmann::json j;
    j["machine"] = spec.machine;
    j["op"] = schedule.op;
    j["algo"] = schedule.algo;
    j["p"] = schedule.p;
    j["bytes"] = a.goal.empty() ? spec.bytes : static_cast<std::int64_t>(schedule.bytes);
    j["time_us"] = r.time_us;
    j["time_ticks"] = r.time_ticks;  // exact: 10^-6 of the model's unit (docs/emulator.md)
    j["messages"] = r.messages;
    j["events"] = r.events;
    j["events_per_s"] = eps;  // the only field that depends on the host's speed
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
  std::printf("machine %s, %s/%s, p = %d, %lld bytes\n", spec.machine.c_str(), schedule.op.c_str(), schedule.algo.c_str(),
              schedule.p, static_cast<long long>(a.goal.empty() ? spec.bytes : static_cast<std::int64_t>(schedule.bytes)));
  std::printf("time     %.3f %s\n", r.time_us, m.kind == sim::ModelKind::postal ? "(units of one send)" : "us");
  std::printf("messages %llu, packets %llu, events %llu (%.3g events/s)\n",
              static_cast<unsigned long long>(r.messages), static_cast<unsigned long long>(r.packets),
              static_cast<unsigned long long>(r.events), eps);
  std::printf("wall     %.2f s building the schedule, %.2f s simulating\n", build_s, wall);
}

}  // namespace

void register_sim(CLI::App& app) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sub = app.add_subcommand(
      "sim",
      "Run a collective on an emulated machine in virtual time (deterministic discrete-event simulation).\n"
      "MACHINE is postal:L[:C], sr:S:R[:C], logp:L:o:g:G[:C] (microseconds; G and C per byte, C the CPU\n"
      "time of reduce and copy, default 0), a profile name (delta, paragon, t3d, manna, local) or a profile\n"
      "file. The schedule is a plan (--op/--algo/--p/--bytes) or a GOAL file (--goal). See docs/emulator.md.");
  args->cmd = sub;
  sub->add_option("--machine", args->spec.machine, "Machine: model string, profile name or profile file")->required();
  sub->add_option("--op", args->spec.op, "Operation: bcast, reduce, gather, allreduce, ...")->capture_default_str();
  sub->add_option("--algo", args->spec.algo, "Algorithm of the plan registry (docs/plans.md), e.g. binomial, lambda, greedy, fibo, flat")
      ->capture_default_str();
  sub->add_option("--p", args->p_text, "Number of ranks")->capture_default_str();
  sub->add_option("--bytes", args->spec.bytes, "Message size in bytes")->capture_default_str();
  sub->add_option("--alpha", args->spec.alpha, "Split fraction α of the lambda tree (Bruck §2.4), in (0, 1)");
  sub->add_option("--lambda", args->spec.lambda,
                  "λ the plan is built for (default: the model's λ; on a mesh, Bruck's experiment 1 at this size)");
  sub->add_option("--mesh", args->spec.mesh, "Mesh (sub)partition RxC or AxBxC, replacing the profile's dims");
  sub->add_option("--placement", args->spec.placement, "Rank placement: row-major, snake, random, list:N,N,...");
  sub->add_option("--seed", args->spec.seed, "Seed of the random placement")->capture_default_str();
  sub->add_option("--goal", args->goal,
                  "Run a schedule in LogGOPSim's GOAL language instead of a plan (calc values in the machine's unit)");
  sub->add_flag("--json", args->json,
                "Print JSON: machine, op, algo, p, bytes, time_us, time_ticks, messages, events, events_per_s, per_rank_us");
  sub->add_option("--trace", args->trace, "Write a Chrome trace-event JSON file (open in Perfetto)");
  sub->callback([args] { run_sim(*args); });
}

}  // namespace postbox::cli
