// postbox c3: the C³ units of Hambrusch & Khokhar for a routing algorithm (one plan), or the
// table of every algorithm of an operation as a function of L (their Fig. 3).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "cli.hpp"
#include "postbox/collectives/c3.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox::cli {
namespace {

struct C3Options {
  std::string op, algo, machine, switching = "wh", sends = "nb", mesh;
  std::string p_text, L_text, root_text = "0";
  std::optional<std::string> s, l, b, h;
  // Parsed in run_c3.
  int p = 0;
  long long L = -1;
  int root = 0;
  bool table = false;
  bool json = false;
};

C3Machine machine_of(const C3Options& o) {
  const bool explicit_params = o.s || o.l || o.b || o.h;
  C3Machine m = C3Machine::delta();
  if (!o.machine.empty()) {
    if (o.machine != "delta" && o.machine != "mesh" && o.machine != "hypercube" && o.machine != "tree") {
      throw InputError("unknown --machine '" + o.machine + "' (known: delta, mesh, hypercube, tree)");
    }
    if (explicit_params) throw InputError("--machine and --s/--l/--b/--h are exclusive");
    if (o.machine != "delta") m = C3Machine::network(o.machine, o.p);
  } else if (explicit_params) {
    if (!(o.s && o.l && o.b && o.h)) throw InputError("without --machine, give all of --s, --l, --b and --h");
    m.s = parse_real(*o.s, "--s");
    m.l = parse_real(*o.l, "--l");
    m.b = parse_real(*o.b, "--b");
    m.h = parse_real(*o.h, "--h");
    validate_c3_parameter('s', m.s, "--s", *o.s);
    validate_c3_parameter('l', m.l, "--l", *o.l);
    validate_c3_parameter('b', m.b, "--b", *o.b);
    validate_c3_parameter('h', m.h, "--h", *o.h);
  }
  if (o.switching == "wh") m.switching = Switching::wormhole;
  else if (o.switching == "sf") m.switching = Switching::store_and_forward;
  else throw InputError("--switching must be wh or sf, got '" + o.switching + "'");
  if (o.sends == "nb") m.sends = SendMode::nonblocking;
  else if (o.sends == "b") m.sends = SendMode::blocking;
  else throw InputError("--sends must be nb or b, got '" + o.sends + "'");
  return m;
}

C3Units units_for(const C3Options& o, const std::string& algo, std::uint64_t L, const C3Machine& m,
                  const std::optional<Mesh>& mesh) {
  return c3_units(build_c3_plan(C3Request{o.op, algo, o.p, L, o.root, mesh}), m, mesh.value_or(Mesh{0, 0}));
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

void run_c3(C3Options o) {
  if (o.op.empty()) throw InputError("--op is required (one-to-one, one-to-all, all-to-one, all-to-all)");
  (void)c3_algorithm_names(o.op);
  if (o.p_text.empty()) throw InputError("--p is required");
  o.p = static_cast<int>(parse_int(o.p_text, "--p", 1, 4096));
  o.root = static_cast<int>(parse_int(o.root_text, "--root", 0, o.p - 1));
  if (!o.L_text.empty()) o.L = parse_int(o.L_text, "--L", 0, kMaxPlanBytes);
  const C3Machine m = machine_of(o);
  std::optional<Mesh> mesh;
  if (!o.mesh.empty()) mesh = parse_mesh(o.mesh);
  if (!o.table && o.algo.empty()) throw InputError("--algo is required (or --table)");
  if (!o.table && o.L < 0) throw InputError("--L is required and must be >= 0");
  if (o.table && (!o.algo.empty() || o.L >= 0)) throw InputError("--table lists every algorithm over L; drop --algo and --L");
  if (dry_run()) return;
  if (!o.table) {
    const auto u = units_for(o, o.algo, static_cast<std::uint64_t>(o.L), m, mesh);
    nlohmann::json j{{"op", o.op},         {"algo", o.algo},         {"p", o.p},         {"L", o.L},
                     {"comm_units", u.comm_units}, {"comp_units", u.comp_units}, {"S_max", u.S_max},
                     {"R_max", u.R_max},   {"C_l", u.C_l},           {"C_p", u.C_p},
                     {"supersteps", u.supersteps.size()}};
    if (o.json) {
      print_json(j);
      return;
    }
    std::cout << o.op << " " << o.algo << "  p = " << o.p << "  L = " << o.L << " bytes\n";
    for (const char* k : {"comm_units", "comp_units", "S_max", "R_max", "C_l", "C_p", "supersteps"}) {
      std::printf("  %-11s %s\n", k, j[k].dump().c_str());
    }
    return;
  }
  // Units are affine in s and, for L a multiple of l·(every message's block count), in L.
  const double L1 = 64 * m.l, L2 = 128 * m.l;
  const std::vector<std::uint64_t> sample{16, 256, 1024, 4096, 16384};
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& algo : c3_algorithm_names(o.op)) {
    C3Machine m0 = m, m1 = m;
    m0.s = 0;
    m1.s = 1;
    const double base0 = units_for(o, algo, 0, m0, mesh).comm_units;
    const double setups = units_for(o, algo, 0, m1, mesh).comm_units - base0;
    const auto u1 = units_for(o, algo, static_cast<std::uint64_t>(L1), m, mesh);
    const auto u2 = units_for(o, algo, static_cast<std::uint64_t>(L2), m, mesh);
    const double per_byte = (u2.comm_units - u1.comm_units) / (L2 - L1);
    const double comp_per_byte = (u2.comp_units - u1.comp_units) / (L2 - L1);
    nlohmann::json at = nlohmann::json::object();
    for (auto L : sample) at[std::to_string(L)] = units_for(o, algo, L, m, mesh).comm_units;
    rows.push_back({{"algo", algo},
                    {"setups", setups},
                    {"per_byte", per_byte},
                    {"constant", base0},
                    {"comp_per_byte", comp_per_byte},
                    {"formula", fmt(setups) + "s + " + fmt(per_byte) + "L + " + fmt(base0)},
                    {"formula_units", fmt(setups * m.s + base0) + " + " + fmt(per_byte) + "L"},
                    {"comm_units", at}});
  }
  nlohmann::json j{{"op", o.op},
                   {"p", o.p},
                   {"machine", {{"s", m.s}, {"l", m.l}, {"b", m.b}, {"h", m.h}}},
                   {"switching", o.switching},
                   {"sends", o.sends},
                   {"rows", rows}};
  if (o.json) {
    print_json(j);
    return;
  }
  std::printf("%s on p = %d (s = %g, l = %g, b = %g, h = %g; %s, %s sends); slope for L a multiple of l\n",
              o.op.c_str(), o.p, m.s, m.l, m.b, m.h, o.switching.c_str(), o.sends.c_str());
  std::printf("%-20s %-32s %-12s", "algorithm", "communication units", "comp/byte");
  for (auto L : sample) std::printf(" %10s", ("L=" + std::to_string(L)).c_str());
  std::printf("\n");
  for (const auto& r : rows) {
    std::printf("%-20s %-32s %-12s", r["algo"].get<std::string>().c_str(), r["formula"].get<std::string>().c_str(),
                fmt(r["comp_per_byte"].get<double>()).c_str());
    for (auto L : sample) std::printf(" %10.1f", r["comm_units"][std::to_string(L)].get<double>());
    std::printf("\n");
  }
}

}  // namespace

void register_c3(CLI::App& app) {
  auto opts = std::make_shared<C3Options>();
  auto* c = app.add_subcommand("c3",
                               "C3 model units (Hambrusch & Khokhar) of a routing algorithm, counted from its plan: "
                               "comm_units = sum over supersteps of max(S_i+R_i) + C_l + C_p (Fig. 1), comp_units = "
                               "sum of max ceil(t_i/l)");
  c->add_option("--op", opts->op, "one-to-one, one-to-all, all-to-one or all-to-all");
  c->add_option("--algo", opts->algo,
                "one-to-one: 1-lev-dir; one-to-all: 1-lev-dir, 1-lev-our-br, 1-lev-sys-br, 2-lev-rec, 3-lev-sq, logp-lev-sq, logp-lev-rec:G; all-to-one: "
                "1-lev-dir, 2-lev-rec, 3-lev-sq, logp-lev-sq; all-to-all: 1-lev-dir, 1-lev-perm:linear|xor|balanced, "
                "2-lev-sq, 2-lev-rc, logp-lev-bfly");
  c->add_option("--p", opts->p_text, "number of processors, 1 to 4096");
  c->add_option("--L", opts->L_text, "actual message size in bytes, 0 to 1073741824");
  c->add_option("--root", opts->root_text, "source of one-to-all / destination of all-to-one, 0 to p-1 (default 0)");
  c->add_option("--mesh", opts->mesh, "RxC mesh the ranks form, row-major (default: closest to square)");
  c->add_option("--machine", opts->machine,
                "delta: 256-processor Intel Delta, s = 8, l = 512, b = 16, h = 10 (the default); mesh, hypercube, tree: "
                "the p-processor machines of section 3 (square mesh b = sqrt p, h = 2/3 sqrt p; hypercube b = p/2, "
                "h = log2(p)/2; tree b = 1, h = log2 p), s and l of the Delta");
  c->add_option("--s", opts->s, "set-up cost of a message, in units, 0 to 1e9");
  c->add_option("--l", opts->l, "packet length in bytes, above 0 and at most 1e9");
  c->add_option("--b", opts->b, "bisection width of the machine, above 0 and at most 1e9");
  c->add_option("--h", opts->h, "average distance between two processors of the machine, 0 to 1e9");
  c->add_option("--switching", opts->switching, "wh (wormhole, default) or sf (store-and-forward)");
  c->add_option("--sends", opts->sends, "nb (non-blocking, default) or b (blocking) sends; receives are non-blocking");
  c->add_flag("--table", opts->table, "every algorithm of --op: units as a function of L (like Fig. 3)");
  c->add_flag("--json", opts->json, "JSON on stdout");
  c->callback([opts] { run_c3(*opts); });
}

}  // namespace postbox::cli
