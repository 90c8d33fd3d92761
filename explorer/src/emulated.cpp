// /api/sim and /api/trace: the Emulated runs view (`postbox sim`, docs/emulator.md).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "params.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/frontend/trace_writer.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/explorer/api.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/emulator/simulator.hpp"

namespace postbox::explorer {
namespace {

std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:,/=+") ==
                        std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

SimRequest parse_sim_request(const Query& query) {
  const internal::Params prm(query, "sim",
                             {"machine", "op", "algo", "p", "bytes", "alpha", "lambda", "mesh", "placement", "seed"});
  SimRequest r;
  r.machine = prm.required("machine", "--machine is required");
  // A path would let a page read files through the server; names and model strings cover the view.
  if (r.machine.find('/') != std::string::npos || r.machine.find(".toml") != std::string::npos) {
    throw InputError("--machine: the explorer takes a profile name or a model string, not a file ('" + r.machine + "')");
  }
  r.op = prm.text("op", r.op);
  r.algo = prm.text("algo", r.algo);
  r.p = static_cast<int>(internal::positive("p", prm.text("p", "2"), kMaxSimRanks));
  if (r.op == "all-to-all" && r.p > kMaxSimAllToAllRanks) {
    throw InputError("--p must be at most " + std::to_string(kMaxSimAllToAllRanks) +
                     " for all-to-all in the explorer, got " + std::to_string(r.p));
  }
  if (const std::string* b = prm.find("bytes")) {
    r.bytes = parse_int(*b, "--bytes", 0);
    if (r.bytes > kMaxSimBytes) {
      throw InputError("--bytes must be at most " + std::to_string(kMaxSimBytes) + " in the explorer, got " + *b);
    }
  }
  if (const std::string* a = prm.find("alpha")) r.alpha = internal::model_figure("alpha", *a);
  if (const std::string* l = prm.find("lambda")) r.lambda = internal::model_figure("lambda", *l);
  r.mesh = prm.text("mesh");
  if (!r.mesh.empty()) {
    std::int64_t nodes = 1;
    for (int d : sim::parse_dims(r.mesh, "--mesh")) {
      nodes *= d;  // each d <= 2^24 and nodes <= kMaxMeshNodes before it: no overflow
      if (nodes > kMaxMeshNodes) {
        throw InputError("--mesh " + r.mesh + " has more than " + std::to_string(kMaxMeshNodes) + " nodes, the explorer's limit");
      }
    }
  }
  r.placement = prm.text("placement");
  if (const std::string* s = prm.find("seed")) {
    const std::int64_t v = internal::integer("seed", *s);
    if (v < 0) throw InputError("--seed must be an unsigned integer, got '" + *s + "'");
    r.seed = static_cast<std::uint64_t>(v);
  }
  return r;
}

std::string sim_command_line(const SimRequest& r) {
  std::string c = "postbox sim --machine " + shell_word(r.machine) + " --op " + shell_word(r.op) + " --algo " +
                  shell_word(r.algo) + " --p " + std::to_string(r.p) + " --bytes " + std::to_string(r.bytes);
  if (r.alpha) c += " --alpha " + r.alpha->decimal_str(12);
  if (r.lambda) c += " --lambda " + r.lambda->decimal_str(12);
  if (!r.mesh.empty()) c += " --mesh " + shell_word(r.mesh);
  if (!r.placement.empty()) c += " --placement " + shell_word(r.placement);
  if (r.seed != 1) c += " --seed " + std::to_string(r.seed);
  return c;
}

namespace {

// The traced run, once the plan is known to be small enough to answer at once.
sim::SimResult traced_run(const SimRequest& request, const SimSetup& setup) {
  // Packets as the mesh model cuts messages (docs/emulator.md: ⌈b / packet_bytes⌉, at least one).
  const std::uint64_t per_packet =
      setup.machine.kind == sim::ModelKind::mesh ? setup.machine.mesh.packet_bytes : 0;
  std::int64_t sends = 0;
  std::int64_t packets = 0;
  for (std::uint32_t g = 0; g < setup.plan.op_count(); ++g) {
    const OpView op = setup.plan.op_at(g);
    if (op.code != OpCode::send) continue;
    ++sends;
    const std::uint64_t bytes = op.a.bytes;
    packets += per_packet == 0 ? 1 : static_cast<std::int64_t>(std::max<std::uint64_t>(1, (bytes + per_packet - 1) / per_packet));
  }
  const auto refuse = [&](std::int64_t n, const char* what, std::int64_t limit) {
    throw InputError("the plan sends " + std::to_string(n) + " " + what + ", more than the explorer's " +
                     std::to_string(limit) + " (run it with: " + sim_command_line(request) + ")");
  };
  if (sends > kMaxSimMessages) refuse(sends, "messages", kMaxSimMessages);
  if (packets > kMaxSimPackets) refuse(packets, "packets", kMaxSimPackets);
  sim::SimOptions opt;
  opt.trace = true;
  return sim::simulate(setup.plan, setup.machine, opt);
}

}  // namespace

nlohmann::json emulated_run_json(const SimRequest& request, const SimSetup& setup, std::size_t max_spans) {
  const Plan& plan = setup.plan;
  const sim::Machine& m = setup.machine;
  const sim::SimResult res = traced_run(request, setup);

  nlohmann::json j = frontend::sim_result_json(res, request.machine, plan.op, plan.algo, plan.p,
                                                  static_cast<std::uint64_t>(request.bytes));
  j["model"] = sim::model_name(m);
  // `postbox sim` prints "time     %.3f us" (or units of one send on the postal model).
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", res.time_us);
  j["time_text"] = text;
  j["time_unit"] = m.kind == sim::ModelKind::postal ? "units of one send" : "us";
  j["per_rank_us"] = res.per_rank_us;
  j["command"] = sim_command_line(request);

  std::size_t budget = max_spans;
  nlohmann::json rank_spans = nlohmann::json::array();
  for (const sim::Span& s : res.rank_spans) {
    if (budget == 0) break;
    --budget;
    rank_spans.push_back({s.track, s.begin_us, s.end_us, s.what, s.peer});
  }
  j["rank_spans"] = std::move(rank_spans);
  j["span_kinds"] = {"send", "recv", "reduce", "copy", "link"};

  if (m.kind == sim::ModelKind::mesh) {
    nlohmann::json mesh;
    mesh["dims"] = m.mesh.dims;
    mesh["wrap"] = m.mesh.wrap;
    mesh["rank_nodes"] = sim::place_ranks(m.mesh, m.placement, plan.p);
    // Links that carried traffic, indexed densely; busy time summed per link (the heat map).
    std::vector<int> index_of(res.links.size(), -1);
    std::vector<double> busy;
    nlohmann::json links = nlohmann::json::array();
    for (std::size_t l = 0; l < res.links.size(); ++l) {
      const sim::LinkPlace& place = res.links[l];
      if (place.kind == sim::LinkPlace::Kind::unused) continue;
      index_of[l] = static_cast<int>(links.size());
      const char* kind = place.kind == sim::LinkPlace::Kind::link ? "link"
                         : place.kind == sim::LinkPlace::Kind::inject ? "inject"
                                                                      : "eject";
      links.push_back({{"name", sim::link_name(place)}, {"node", place.node}, {"kind", kind},
                       {"dir", sim::link_direction(place)}, {"vc", place.kind == sim::LinkPlace::Kind::link ? place.vc : 0}});
      busy.push_back(0);
    }
    nlohmann::json link_spans = nlohmann::json::array();
    for (const sim::Span& s : res.link_spans) {
      const int li = index_of[static_cast<std::size_t>(s.track)];
      busy[static_cast<std::size_t>(li)] += s.end_us - s.begin_us;
      if (budget == 0) continue;
      --budget;
      link_spans.push_back({li, s.begin_us, s.end_us, s.peer, s.peer2});
    }
    for (std::size_t i = 0; i < busy.size(); ++i) {
      links[i]["busy_us"] = busy[i];
      links[i]["occupancy"] = res.time_us > 0 ? busy[i] / res.time_us : 0.0;
    }
    mesh["links"] = std::move(links);
    j["mesh"] = std::move(mesh);
    j["link_spans"] = std::move(link_spans);
  } else {
    j["mesh"] = nullptr;
    j["link_spans"] = nlohmann::json::array();
  }
  j["spans_truncated"] = budget == 0 && res.rank_spans.size() + res.link_spans.size() > max_spans;
  return j;
}

EmulatedRun emulated_run(const SimRequest& r) {
  std::map<std::string, std::string> given{{"machine", r.machine}, {"op", r.op}, {"algo", r.algo},
                                           {"p", std::to_string(r.p)}, {"bytes", std::to_string(r.bytes)}};
  if (r.alpha) given["alpha"] = r.alpha->decimal_str(12);
  if (r.lambda) given["lambda"] = r.lambda->decimal_str(12);
  if (!r.mesh.empty()) given["mesh"] = r.mesh;
  if (!r.placement.empty()) given["placement"] = r.placement;
  if (r.seed != 1) given["seed"] = std::to_string(r.seed);
  return select_emulated_run(given);
}

SimSetup plan_emulated_run(const SimRequest& r) {
  EmulatedRun run = emulated_run(r);
  SimSetup setup;
  setup.plan = build_plan(run.request);
  setup.machine = std::move(run.machine);
  return setup;
}

void Api::set_sim_planner(SimPlanner planner) {
  PB_CHECK(planner != nullptr, "Api::set_sim_planner: no planner");
  add("sim", "an emulated run: time, per-rank spans, link occupancy on meshes (postbox sim)",
      {"machine", "op", "algo", "p", "bytes", "alpha", "lambda", "mesh", "placement", "seed"},
      [planner](const Query& q) {
        const SimRequest r = parse_sim_request(q);
        return json_reply(emulated_run_json(r, planner(r)));
      });
  add("trace", "the same run as Chrome trace-event JSON, for Perfetto (postbox sim --trace)",
      {"machine", "op", "algo", "p", "bytes", "alpha", "lambda", "mesh", "placement", "seed"},
      [planner](const Query& q) {
        const SimRequest r = parse_sim_request(q);
        const SimSetup setup = planner(r);
        const sim::SimResult res = traced_run(r, setup);
        std::ostringstream out;
        sim::write_chrome_trace(out, res, setup.plan, setup.machine);
        Reply reply;
        reply.body = out.str();
        std::string name = "postbox-" + r.machine + "-" + setup.plan.op + "-" + setup.plan.algo + "-p" +
                           std::to_string(setup.plan.p) + ".json";
        for (char& c : name) {
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') c = '_';
        }
        reply.download_name = name;
        return reply;
      });
}

}  // namespace postbox::explorer
