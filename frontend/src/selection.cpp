// The one plan selection (selection.hpp).
#include "postbox/frontend/machines.hpp"
#include "postbox/frontend/selection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include "postbox/collectives/c3.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/limits.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/emulator/calibrate.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

bool combines(const std::string& op) { return op == "reduce" || op == "allreduce"; }

// Counted from the emulator's arrays (simulator.cpp, build_mesh) on a 2-D wormhole torus: ten
// channels of 32 bytes (four links of two virtual channels, injection, ejection), the far node of
// each of the eight links (64), two coordinates (8) and the node's placement entry (8).
constexpr std::uint64_t kEmulatorBytesPerNode = 400;

// work() with the library's FieldErrors written as options: the selection's errors name options.
template <class Work>
auto as_options(Work&& work) {
  try {
    return work();
  } catch (const FieldError& e) {
    throw InputError(frontend::error_line(e));
  }
}

// Keys only s2p reads (mesh is read by the C³ ops too).
constexpr std::string_view kS2POnly[] = {"sources", "dist", "seed", "source-list"};

}  // namespace

const std::vector<SelectionOption>& plan_selection_options() {
  static const std::vector<SelectionOption> options = [] {
    const std::string c3_algos = "one-to-one " + joined(c3_algorithm_names("one-to-one")) + "; one-to-all " + joined(c3_algorithm_names("one-to-all")) +
                                 " (logp-lev-rec:G, G in (0, 1)); all-to-one " + joined(c3_algorithm_names("all-to-one")) +
                                 "; all-to-all " + joined(c3_algorithm_names("all-to-all"));
    return std::vector<SelectionOption>{
        {"op", "OP",
         "Operation: bcast, reduce, gather, allreduce, s2p, one-to-one, one-to-all, all-to-one, all-to-all, barrier (every "
         "registered op; see run --list)"},
        {"algo", "ALGO",
         "Algorithm: bcast takes a tree shape (flat, binary, kary:K with K in 1.." + std::to_string(kMaxKaryDegree) +
             ", binomial, lambda[:ALPHA], greedy, "
         "fibo, hier); reduce and gather binomial; allreduce postal, postal-delay-recv, postal-delay-send, "
         "recursive-doubling, reduce-bcast; s2p " +
             joined(s2p_algorithm_names()) + "; " + c3_algos + "; barrier central, dissemination, combine, mcs, tournament, fibo, hier"},
        {"p", "N", "Number of ranks, at least 1 (decimal; the command states its upper limit)"},
        {"bytes", "B",
         "Bytes per rank, 0 to 1073741824 (gather: per block; s2p: each source's message, every rank holding "
         "sources*bytes; one-to-one, one-to-all, all-to-one, all-to-all: the block L for one destination)"},
        {"root", "R", "Root rank, 0 to p-1 (default 0); refused for ops without a root (allreduce, s2p, one-to-one, all-to-all, barrier)"},
        {"lambda", "L", "Postal latency lambda >= 1, exact (2, 2.5 or 5/2), for lambda-dependent algorithms"},
        {"s", "S", "Send latency s > 0, exact (with --r; lambda = 1 + r/s)"},
        {"r", "R", "Receive latency r >= 0, exact (with --s)"},
        {"alpha", "A", "Split fraction of the lambda tree, strictly between 0 and 1: --algo lambda becomes lambda:A"},
        {"mesh", "RxC",
         "s2p, one-to-one, one-to-all, all-to-one, all-to-all: the ranks as an RxC mesh, row-major, R*C = p (default: the "
         "closest to square with R <= C)"},
        {"sources", "S", "s2p: number of sources S, 1 to p (default 1; with --source-list, must match its length)"},
        {"dist", "DIST", "s2p: where the S sources sit: " + joined(source_distribution_names()) +
                             " (default equal; docs/s-to-p.md)"},
        {"seed", "SEED", "s2p with --dist random: the seed of the distribution, 0 to 18446744073709551615 (default 1)"},
        {"source-list", "R,R,...",
         "s2p: the source ranks in source order, comma-separated, each once (instead of --dist)"},
        {"elem-bytes", "E",
         "reduce and allreduce: element size 1, 2, 4 or 8 (unsigned sum of that width; default 8); --bytes must be a "
         "multiple"},
    };
  }();
  return options;
}

Mesh parse_mesh(std::string_view text) {
  const auto x = text.find_first_of("xX");
  const std::string whole = "mesh '" + std::string(text) + "'";
  if (x == std::string_view::npos) throw InputError(whole + " must be RxC, e.g. 10x10");
  const std::int64_t rows = postbox::parse_int(text.substr(0, x), whole + ": rows", 1, kMaxMeshRanks);
  const std::int64_t cols = postbox::parse_int(text.substr(x + 1), whole + ": columns", 1, kMaxMeshRanks);
  if (rows * cols > kMaxMeshRanks) {
    throw InputError(whole + " has " + std::to_string(rows * cols) + " ranks, more than " + std::to_string(kMaxMeshRanks));
  }
  return Mesh{static_cast<int>(rows), static_cast<int>(cols)};
}

std::vector<int> parse_source_list(std::string_view text) {
  std::vector<int> out;
  for (const std::string_view item : split_list(text, ',', "--source-list")) {
    out.push_back(static_cast<int>(parse_int(item, "--source-list: rank", 0, kMaxMeshRanks - 1)));
  }
  return out;
}

std::vector<int> s2p_sources(const Mesh& mesh, const std::optional<std::string>& count,
                             const std::optional<std::string>& dist, const std::optional<std::string>& seed,
                             const std::optional<std::string>& list) {
  const int p = mesh.p();
  const int s = count ? static_cast<int>(parse_int(*count, "--sources", std::numeric_limits<int>::min(),
                                                   std::numeric_limits<int>::max()))
                      : 1;
  if (count && (s < 1 || s > p)) {
    throw InputError("--sources " + *count + " is outside 1.." + std::to_string(p) + " (p, from --p or --mesh)");
  }
  if (list) {
    if (dist) throw InputError("give either --dist or --source-list, not both");
    if (seed) throw InputError("--seed applies to --dist random only");
    std::vector<int> sources = parse_source_list(*list);
    std::vector<char> seen(static_cast<std::size_t>(p), 0);
    for (int r : sources) {
      if (r >= p) {
        throw InputError("--source-list '" + *list + "' names source rank " + std::to_string(r) + ", outside 0.." +
                         std::to_string(p - 1));
      }
      if (seen[static_cast<std::size_t>(r)]) throw InputError("--source-list gives source " + std::to_string(r) + " twice");
      seen[static_cast<std::size_t>(r)] = 1;
    }
    if (count && s != static_cast<int>(sources.size())) {
      throw InputError("--sources " + *count + " does not match the " + std::to_string(sources.size()) +
                       (sources.size() == 1 ? " source" : " sources") + " of --source-list '" + *list + "'");
    }
    return sources;
  }
  const std::string name = dist ? *dist : "equal";
  const auto& names = source_distribution_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw InputError("unknown distribution '" + name + "' (one of: " + joined(names) + ")");
  }
  if (seed && name != "random") throw InputError("--seed applies to --dist random only");
  return source_distribution(name, mesh, s, seed ? parse_uint(*seed, "--seed") : 1);
}

PlanRequest select_plan(const std::map<std::string, std::string>& given, const SelectionContext& context) {
  for (const auto& entry : given) {
    const std::string& key = entry.first;  // a named reference: clang 14 cannot capture a structured binding
    const auto& opts = plan_selection_options();
    PB_CHECK(std::any_of(opts.begin(), opts.end(), [&](const SelectionOption& o) { return o.name == key; }),
             "select_plan: '" + key + "' is not a plan selection option");
  }
  // The text of an option as given, else its default; nullopt when neither.
  auto value = [&](const std::string& key) -> std::optional<std::string> {
    if (const auto it = given.find(key); it != given.end()) return it->second;
    if (const auto it = context.defaults.find(key); it != context.defaults.end()) return it->second;
    return std::nullopt;
  };
  auto was_given = [&](const std::string& key) { return given.count(key) != 0; };
  auto required = [&](const std::string& key) {
    auto v = value(key);
    if (!v) throw InputError("--" + key + " is required");
    if (v->empty()) throw InputError("--" + key + " must not be empty");
    return *v;
  };

  PlanRequest req;
  req.op = required("op");
  req.algo = required("algo");
  as_options([&] { check_plan_known(req.op, req.algo); });
  req.p = static_cast<int>(parse_int(required("p"), "--p", 1, std::numeric_limits<int>::max()));
  if (const auto b = value("bytes")) req.bytes = parse_int(*b, "--bytes", 0, kMaxPlanBytes);
  else throw InputError("--bytes is required");

  if (const auto root = value("root")) {
    if (was_given("root") && !op_has_root(req.op)) throw InputError("--root does not apply to --op " + req.op + " (it has no root)");
    const std::int64_t r = parse_int(*root, "--root");
    if (r < 0 || r >= req.p) throw InputError("--root " + *root + " is outside 0.." + std::to_string(req.p - 1));
    req.root = static_cast<int>(r);
  }

  if (const auto e = value("elem-bytes"); e && was_given("elem-bytes")) {
    if (!combines(req.op)) throw InputError("--elem-bytes applies to --op reduce and allreduce only");
    const std::int64_t v = parse_int(*e, "--elem-bytes");
    if (v != 1 && v != 2 && v != 4 && v != 8) throw InputError("--elem-bytes must be 1, 2, 4 or 8, got " + *e);
    req.elem_bytes = static_cast<std::uint32_t>(v);
  } else {
    req.elem_bytes = combines(req.op) ? 8 : 1;
  }
  try {
    check_elements(req);  // the builders' rule, checked here to name --bytes as typed
  } catch (const InputError& e) {
    throw InputError("--bytes " + *value("bytes") + ": " + e.what());
  }

  const auto lambda = value("lambda"), s = value("s"), r = value("r");
  if (lambda && (s || r)) throw InputError("give either --lambda or --s and --r, not both");
  if (s.has_value() != r.has_value()) throw InputError(s ? "--s needs --r" : "--r needs --s");
  if (lambda) {
    req.lambda = Rational::parse(*lambda, "--lambda");
    if (*req.lambda < Rational(1)) throw InputError("--lambda must be at least 1, got " + *lambda);
  }
  if (s) {
    const Rational sv = Rational::parse(*s, "--s"), rv = Rational::parse(*r, "--r");
    if (sv <= Rational(0)) throw InputError("--s must be positive, got " + *s);
    if (rv < Rational(0)) throw InputError("--r must not be negative, got " + *r);
    req.model = SendRecv{sv, rv};
  }

  if (const auto alpha = value("alpha")) {
    const auto colon = req.algo.find(':');
    if (req.algo.substr(0, colon) != "lambda") throw InputError("--alpha applies to --algo lambda only");
    if (colon != std::string::npos) throw InputError("alpha given twice: in --algo " + req.algo + " and in --alpha");
    const Rational a = Rational::parse(*alpha, "--alpha");
    if (a <= Rational(0) || a >= Rational(1)) throw InputError("--alpha must lie strictly between 0 and 1, got " + *alpha);
    req.algo = "lambda:" + *alpha;
  }

  // s2p and C³ parameters: refused for ops that do not read them, unless the caller reads them.
  for (const std::string key : {"mesh", "sources", "dist", "seed", "source-list"}) {
    if (!was_given(key) || context.shared.count(key) != 0) continue;
    const bool s2p_only = std::find(std::begin(kS2POnly), std::end(kS2POnly), key) != std::end(kS2POnly);
    const bool applies = req.op == "s2p" || (!s2p_only && op_takes_mesh(req.op));
    if (!applies) {
      throw InputError("--" + key + " does not apply to --op " + req.op +
                       (is_c3_op(req.op) ? " (the C3 ops take --mesh only)"
                                         : " (only s2p takes it; s2p and the C3 ops take --mesh)"));
    }
  }
  for (const std::string key : {"mesh", "sources", "dist", "seed", "source-list"}) {
    if (const auto v = value(key); v && v->empty()) throw InputError("--" + key + " must not be empty");
  }
  // A plan too large for memory is refused before any work that grows with p: s2p's source
  // list, λ measured on a mesh as large as p (these took 29 s and 57 s at p = 2^31 - 1 and 2^24.3).
  try {
    check_plan_memory(req);
  } catch (const InputError& e) {  // the message names the option as well as the p it was given
    throw InputError("--p " + value("p").value_or(std::to_string(req.p)) + ": " + e.what());
  }
  if (op_takes_mesh(req.op)) {
    if (const auto m = value("mesh")) {
      const Mesh mesh = parse_mesh(*m);
      if (mesh.p() != req.p) {
        throw InputError("--mesh " + *m + " has " + std::to_string(mesh.p()) + " ranks, but --p is " + std::to_string(req.p));
      }
      req.mesh = mesh;
    }
    if (req.op == "s2p") {
      // Resolved once, here: the builder and the oracle read this list.
      const bool seed_for_caller = context.shared.count("seed") != 0 && value("dist") != "random";
      const auto seed = seed_for_caller ? std::nullopt : value("seed");
      req.sources = s2p_sources(s2p_request_mesh(req), value("sources"), value("dist"), seed, value("source-list"));
    }
  }
  // The mailboxes' limit on one message, which gather, s2p and the C³ ops can pass with bytes
  // below it (they forward or combine many blocks at once): build_plan() refuses such a
  // request too, checked here to name --bytes as typed.
  if (const auto problem = oversized_message(req)) throw InputError("--bytes " + *value("bytes") + ": " + *problem);
  return req;
}

const std::vector<SelectionOption>& emulated_run_options() {
  static const std::vector<SelectionOption> options = [] {
    std::vector<SelectionOption> out{{"machine", "M",
                                      "Machine: postal:L[:C], sr:S:R[:C], logp:L:o:g:G[:C][:O=X][:S=N] (microseconds; G, C and O "
                                      "per byte, C the CPU time of reduce and copy, O LogGOPS's CPU time of a send and an accept; "
                                      "messages of more than S=N bytes go by rendezvous), cluster:NODESxCORES[:PROFILE] (a cluster profile, "
                                      "default cluster-example, rescaled), a profile name (delta, paragon, t3d, manna, "
                                      "cluster-example, local) or a profile file (required)"}};
    for (SelectionOption o : plan_selection_options()) {
      if (o.name == "mesh") {
        o.value = "RxC|AxBxC";
        o.help = "Mesh machines: the (sub)partition replacing the profile's dims. s2p and the C3 ops: also the ranks' "
                 "RxC mesh, R*C = p (default: the closest to square, which the machine then takes too)";
      } else if (o.name == "seed") {
        o.help = "Seed of --placement random, of --dist random and of sim's --noise and --noise-trace (offsets, random "
                 "detours), 0 to 18446744073709551615 (default 1)";
      } else if (o.name == "lambda") {
        o.help = "Postal latency lambda >= 1 the plan is built for, exact (default: the machine's at this size; on a "
                 "mesh, Bruck's experiment 1 in the emulator)";
      }
      out.push_back(o);
    }
    out.push_back({"placement", "P", "Mesh machines: rank placement row-major, snake, random or list:N,N,... (default: the "
                                     "profile's)"});
    return out;
  }();
  return options;
}

namespace {

// The machine of an emulated run: "machine" with "mesh", "placement" and "seed" applied, for p
// ranks; ranks_mesh (s2p and the C³ ops without --mesh) is the plan's mesh, which a mesh machine takes.
sim::Machine emulated_machine(const std::map<std::string, std::string>& given, int p, const std::optional<Mesh>& ranks_mesh) {
  const auto machine = given.find("machine");
  if (machine == given.end()) throw InputError("--machine is required");
  sim::Machine m = as_options([&] { return sim::load_machine(machine->second); });
  const bool is_mesh = m.kind == sim::ModelKind::mesh;
  const auto mesh = given.find("mesh");
  if (mesh != given.end()) {
    if (!is_mesh) throw InputError("--mesh needs a mesh machine, '" + machine->second + "' is not one");
    m.mesh.dims = sim::parse_dims(mesh->second, "--mesh");
  } else if (is_mesh && ranks_mesh) {
    m.mesh.dims = {ranks_mesh->rows, ranks_mesh->cols};
  }
  const auto seed = given.find("seed");
  const auto placement = given.find("placement");
  if (placement != given.end()) {
    if (!is_mesh) throw InputError("--placement needs a mesh machine, '" + machine->second + "' is not one");
    const std::uint64_t placement_seed = seed != given.end() ? parse_uint(seed->second, "--seed") : 1;
    m.placement = as_options([&] { return sim::parse_placement(placement->second, placement_seed); });
  } else if (seed != given.end()) {
    m.placement.seed = parse_uint(seed->second, "--seed");
  }
  if (is_mesh) {
    // The emulator keeps a few words per link (2·dims per node, twice on a torus) and per node.
    const auto nodes = static_cast<std::uint64_t>(m.mesh.nodes());
    require_memory(nodes * kEmulatorBytesPerNode, (mesh != given.end() ? "--mesh " + mesh->second + ": a mesh of "
                                                                         : "--machine " + machine->second + ": a mesh of ") +
                                                      std::to_string(nodes) + " nodes");
  }
  if (is_mesh && m.mesh.nodes() < p) {
    throw InputError("the mesh has " + std::to_string(m.mesh.nodes()) + " nodes, fewer than --p " + std::to_string(p));
  }
  if (m.kind == sim::ModelKind::cluster &&
      static_cast<std::int64_t>(m.cluster.nodes) * m.cluster.cores_per_node < p) {
    throw InputError("the cluster has " + std::to_string(m.cluster.nodes) + " nodes x " +
                     std::to_string(m.cluster.cores_per_node) + " cores, fewer than --p " + std::to_string(p));
  }
  return m;
}

// The topology hier plans see on a cluster machine: one package per node, a core (one PU) per
// rank, so that rank r (compact placement: PU r) is on package r / cores, the emulator's node.
// Kept for the process's life: plans are cached by the topology's address.
const Topology* cluster_topology(const sim::ClusterSpec& c) {
  static std::mutex m;
  static std::map<std::pair<int, int>, std::unique_ptr<const Topology>> made;
  std::lock_guard<std::mutex> lock(m);
  auto& t = made[{c.nodes, c.cores_per_node}];
  if (!t)
    t = std::make_unique<const Topology>(
        Topology::synthetic("pack:" + std::to_string(c.nodes) + " core:" + std::to_string(c.cores_per_node) + " pu:1"));
  return t.get();
}

}  // namespace

bool shape_reads_lambda(const std::string& op, const std::string& algo) {
  const auto family = [](std::string_view a) { return a.substr(0, a.find(':')); };
  const auto one_of = [](std::string_view x, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), x) != names.end();
  };
  const std::string_view f = family(algo);
  if (op == "bcast") {
    if (f != "hier") return !one_of(f, {"flat", "binary", "kary", "binomial"});
    // hier: its inner shapes (binomial when none are given).
    if (algo.size() == f.size()) return false;
    std::string_view rest = std::string_view(algo).substr(f.size() + 1);
    for (;;) {
      const std::size_t comma = rest.find(',');
      if (shape_reads_lambda("bcast", std::string(rest.substr(0, comma)))) return true;
      if (comma == std::string_view::npos) return false;
      rest.remove_prefix(comma + 1);
    }
  }
  if (op == "reduce" || op == "gather") return f != "binomial";
  if (op == "allreduce") return !one_of(f, {"recursive-doubling", "reduce-bcast"});
  if (op == "barrier") return !one_of(f, {"central", "dissemination", "mcs", "tournament", "hier"});
  // s2p's plans read the mesh and the sources; the C³ plans read s and r (never λ), only for
  // 1-lev-sys-br and only when the request gives them.
  if (op == "s2p" || is_c3_op(op)) return false;
  return true;  // an op registered elsewhere: assumed to read λ
}

EmulatedRun select_emulated_run(const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> selection = given;
  selection.erase("machine");
  selection.erase("placement");
  if (given.count("machine") == 0) throw InputError("--machine is required");
  const std::string& machine = given.at("machine");
  SelectionContext context;
  context.defaults = {{"op", "bcast"}, {"algo", "binomial"}, {"p", "2"}, {"bytes", "8"}};
  context.shared = {"mesh", "seed"};
  EmulatedRun run;
  run.request = select_plan(selection, context);
  const PlanRequest& req = run.request;
  std::optional<Mesh> ranks_mesh;
  if (op_takes_mesh(req.op)) ranks_mesh = s2p_request_mesh(req);  // near square unless --mesh: the plan's mesh
  run.machine = emulated_machine(given, req.p, ranks_mesh);
  const sim::Machine& m = run.machine;
  // Only hier reads the topology (its classes are the nodes): no other algorithm waits for hwloc.
  if (m.kind == sim::ModelKind::cluster && req.algo.rfind("hier", 0) == 0) {
    if (static_cast<std::uint64_t>(m.cluster.nodes) * static_cast<std::uint64_t>(m.cluster.cores_per_node) >
        Topology::kMaxSyntheticPus) {
      throw InputError("--algo " + req.algo + " on a cluster needs at most " + std::to_string(Topology::kMaxSyntheticPus) +
                       " cores in all (the topology it is built on), --machine '" + machine + "' has " +
                       std::to_string(static_cast<std::uint64_t>(m.cluster.nodes) * m.cluster.cores_per_node));
    }
    run.request.topology = cluster_topology(m.cluster);
  }
  const bool is_mesh = m.kind == sim::ModelKind::mesh;
  if (!req.lambda && !req.model) {
    const auto b = static_cast<std::uint64_t>(req.bytes);
    double lambda = 2.0;
    if (!is_mesh) {
      lambda = sim::nominal_lambda(m, b);
    } else {
      // Bruck §2.6: λ is measured for the message size, then the tree is chosen for it.
      sim::Machine row = m;
      row.placement = sim::Placement{};
      const int k_max = static_cast<int>(std::min<std::int64_t>(12, row.mesh.nodes() - 1));
      if (k_max >= 3) {
        try {
          lambda = std::max(1.0, sim::measure_lambda(row, b, 2, k_max).lambda_exp1);
        } catch (const InputError& e) {
          throw InputError("measuring lambda on '" + machine + "' at " + std::to_string(b) + " bytes (Bruck's experiment 1): " +
                           e.what() + "; give --lambda");
        }
      }
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", lambda);
    if (!(lambda >= 1)) {
      // A send keeps the machine longer than a message takes to be usable: no postal λ >= 1
      // describes it. Shapes that do not read λ are the same for every λ: built with λ = 1.
      if (shape_reads_lambda(req.op, req.algo)) {
        throw InputError("--algo " + req.algo + " builds its shape for a postal latency lambda >= 1 (a message usable " +
                         "lambda >= 1 send times after its send starts), but machine '" + machine + "' has lambda " + text +
                         " at " + std::to_string(b) + " bytes (a send keeps it longer than a message takes to arrive): " +
                         "give --lambda L, L >= 1, to build it for L");
      }
      lambda = 1;
    }
    if (lambda > 1e9) throw InputError("machine '" + machine + "' has lambda " + std::string(text) + ", more than 10^9");
    run.request.lambda = Rational(std::llround(lambda * 1000), 1000);
  }
  return run;
}

sim::Machine select_schedule_machine(const std::map<std::string, std::string>& given, int p,
                                     const std::optional<Mesh>& ranks_mesh) {
  for (const auto& [key, text] : given) {
    (void)text;
    if (key != "machine" && key != "mesh" && key != "placement" && key != "seed") {
      throw InputError("--goal takes the schedule from its file; drop --" + key);
    }
  }
  return emulated_machine(given, p, ranks_mesh);
}

}  // namespace postbox
