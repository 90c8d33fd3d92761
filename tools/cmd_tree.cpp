// postbox tree: build one distribution tree and draw it (ascii, DOT, SVG) or print it as JSON;
// postbox tree --compare: completion time of every shape for one (p, s, r).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/frontend/render.hpp"
#include "postbox/frontend/tree_select.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::cli {
namespace {

struct TreeArgs {
  std::string shape;
  std::string p;
  std::string root;
  std::string lambda;
  std::string s;
  std::string r;
  std::string alpha;
  std::string format;
  std::string layers;
  std::string layout;
  std::string out;
  std::string topology;
  std::string place;
  bool compare = false;
  bool json = false;

  // The tree selection's options (frontend/tree_select.hpp) that were given.
  [[nodiscard]] std::map<std::string, std::string> given() const {
    std::map<std::string, std::string> g;
    for (const auto& [name, text] : {std::pair{"shape", &shape}, std::pair{"p", &p}, std::pair{"root", &root},
                                     std::pair{"lambda", &lambda}, std::pair{"s", &s}, std::pair{"r", &r},
                                     std::pair{"alpha", &alpha}, std::pair{"synthetic", &topology},
                                     std::pair{"places", &place}}) {
      if (!text->empty()) g[name] = *text;
    }
    return g;
  }
};

void emit(const std::string& text, const std::string& out_path) {
  if (out_path.empty()) {
    std::cout << text;
    std::cout.flush();
    return;
  }
  std::ofstream f(out_path, std::ios::binary | std::ios::trunc);
  if (!f) throw InputError("cannot open --out " + out_path + " for writing");
  f << text;
  f.close();
  if (!f) throw InputError("cannot write --out " + out_path);
}

void run_compare(const TreeArgs& a) {
  for (const auto& [given, name] : {std::pair{!a.format.empty(), "--format"}, std::pair{!a.layers.empty(), "--layers"},
                                    std::pair{!a.layout.empty(), "--layout"}}) {
    if (given) throw InputError(std::string(name) + " does not apply to --compare");
  }
  const TreeSelection selection = select_tree_comparison(a.given());
  if (dry_run()) return;
  const TreeComparison c = compare_trees(selection);
  const SendRecv& model = c.model;
  const Rational& lambda = c.lambda;
  const Rational& best = c.best;
  const int p = c.p;
  const auto& rows = c.rows;
  auto ratio = [&](const Rational& completion) { return c.ratio(completion); };

  if (a.json) {
    nlohmann::ordered_json j;
    j["p"] = p;
    j["s"] = frontend::number_json(model.s);
    j["r"] = frontend::number_json(model.r);
    j["lambda"] = frontend::number_json(lambda);
    j["rows"] = nlohmann::ordered_json::array();
    for (const auto& row : rows) {
      j["rows"].push_back(nlohmann::ordered_json{{"shape", row.shape},
                           {"completion", frontend::number_json(row.completion)},
                           {"completion_exact", row.completion.str()},
                           {"ratio", ratio(row.completion)}});
    }
    j["best"] = frontend::number_json(best);
    emit(j.dump(2) + "\n", a.out);
    return;
  }
  std::ostringstream o;
  o << "time until the last of p=" << p << " ranks is active, s=" << format_time(model.s)
    << ", r=" << format_time(model.r) << " (lambda=" << format_time(lambda) << ")\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-10s %12s %8s\n", "shape", "completion", "/best");
  o << line;
  for (const auto& row : rows) {
    std::snprintf(line, sizeof line, "%-10s %12s %8.3f%s\n", row.shape.c_str(), format_time(row.completion).c_str(),
                  ratio(row.completion), row.completion == best ? "  best" : "");
    o << line;
  }
  emit(o.str(), a.out);
}

void run_tree(const TreeArgs& a) {
  if (a.json) throw InputError("--json applies to --compare; use --format json for one tree");
  const TreeSelection selection = select_tree(a.given());

  const std::string format = a.format.empty() ? "ascii" : a.format;
  if (format != "ascii" && format != "dot" && format != "svg" && format != "json") {
    throw InputError("--format must be ascii, dot, svg or json, got '" + a.format + "'");
  }
  RenderOptions ro;
  if (!a.layers.empty()) {
    if (a.layers == "depth") {
      ro.layers = TreeLayers::depth;
    } else if (a.layers == "time") {
      ro.layers = TreeLayers::time;
    } else {
      throw InputError("--layers must be depth or time, got '" + a.layers + "'");
    }
    if (format != "dot" && format != "svg") throw InputError("--layers applies to --format dot and svg");
  }
  if (!a.layout.empty()) {
    if (a.layout == "auto") {
      ro.svg_layout = SvgLayout::automatic;
    } else if (a.layout == "builtin") {
      ro.svg_layout = SvgLayout::builtin;
    } else if (a.layout == "graphviz") {
      ro.svg_layout = SvgLayout::graphviz;
    } else {
      throw InputError("--layout must be auto, builtin or graphviz, got '" + a.layout + "'");
    }
    if (format != "svg") throw InputError("--layout applies to --format svg");
  }

  if (dry_run()) return;
  const Tree t = build_selected_tree(selection);
  if (format == "ascii") {
    emit(render_ascii(t, ro), a.out);
  } else if (format == "dot") {
    emit(render_dot(t, ro), a.out);
  } else if (format == "svg") {
    emit(render_svg(t, ro), a.out);
  } else {
    emit(frontend::tree_json(t).dump(2) + "\n", a.out);
  }
}

}  // namespace

void register_tree(CLI::App& app) {
  auto args = std::make_shared<TreeArgs>();
  CLI::App* sub = app.add_subcommand(
      "tree",
      "Build a distribution tree and draw it, or compare the completion time of every shape.\n"
      "Time model (Cordsen et al.): a node active at time a sends to its children one after another;\n"
      "child i (from 1) is active at a + i*s + r. Bruck's postal model is s = 1, r = lambda - 1.\n"
      "Default model when none is given: s = 1, r = 1 (lambda = 2, Bruck's running example).\n"
      "Shapes:\n"
      "  flat        the root sends to every other rank in turn (sequential)\n"
      "  binary      heap layout: rank i sends to 2i+1, then 2i+2\n"
      "  kary:K      heap layout: rank i sends to K*i+1 .. K*i+K in order (K in 1.." + std::to_string(kMaxKaryDegree) + ")\n"
      "  binomial    recursive doubling, largest subtree first\n"
      "  lambda[:A]  Bruck's recursive alpha-split: the source keeps n' = min(round(alpha*n), n-1)\n"
      "              ranks (at least 1) and first sends to the leader of the other n - n';\n"
      "              alpha A in (0, 1) from the shape or --alpha, else from the look-up table\n"
      "              (auto: optimal for every n)\n"
      "  greedy      the optimal two-queue construction (Bruck 2.3)\n"
      "  fibo        Cordsen's Fibo-tree (Fig. 8) from s and r\n"
      "  hier[:S1,S2,...]  an inner tree per topology level (package, NUMA node, L3, core, PU)\n"
      "              of --synthetic (or this machine) with ranks placed by --places; S1 is\n"
      "              the outermost level's shape, the last one repeats inward (default\n"
      "              binomial); any shape but hier\n"
      "Roots other than 0 relabel rank v as (v + root) mod p (hier: real ranks).\n"
      "Examples:\n"
      "  postbox tree --shape fibo --p 64 --s 1 --r 3 --format svg --out fibo.svg\n"
      "  postbox tree --compare --p 64 --s 1 --r 3");
  sub->add_option("--shape", args->shape, "Tree shape (grammar above), required unless --compare")
      ->type_name("SHAPE");
  sub->add_option("--p", args->p, "Number of ranks, 1 to 1048576 (required)")
      ->type_name("N");
  sub->add_option("--root", args->root, "Root rank in 0..p-1 (default 0)")
      ->type_name("R");
  sub->add_option("--lambda", args->lambda,
                  "Postal latency lambda >= 1 (sets s = 1, r = lambda - 1), decimal or p/q, e.g. 1.8 or 9/5")
      ->type_name("L");
  sub->add_option("--s", args->s, "Send latency s > 0 (needs --r; not with --lambda)")
      ->type_name("S");
  sub->add_option("--r", args->r, "Receive latency r >= 0 (needs --s; not with --lambda)")
      ->type_name("R");
  sub->add_option("--alpha", args->alpha,
                  "For --shape lambda only: fixed split fraction strictly between 0 and 1, or 'auto' (default)")
      ->type_name("A|auto");
  sub->add_option("--format", args->format,
                  "ascii (default): indented tree; dot: Graphviz source; svg: a picture; json: "
                  "{shape, p, completion, completion_exact, root, s, r, lambda, nodes: [{rank, parent, children, time}]}; "
                  "times are numbers (exact p/q in completion_exact)")
      ->type_name("ascii|dot|svg|json");
  sub->add_option("--layers", args->layers,
                  "dot/svg rows: depth (default, one row per tree level) or time (one row per activation time)")
      ->type_name("depth|time");
  sub->add_option("--layout", args->layout,
                  "svg only: auto (default: graphviz 'dot' when on PATH, p <= 2000 and POSTBOX_NO_GRAPHVIZ is unset "
                  "or 0; else built-in), builtin, or graphviz")
      ->type_name("auto|builtin|graphviz");
  sub->add_option("--out", args->out, "Write to FILE instead of stdout")
      ->type_name("FILE");
  sub->add_option("--synthetic", args->topology,
                  "hier only: an hwloc synthetic topology, e.g. 'pack:2 core:4 pu:2' (default: this machine)")
      ->type_name("DESC");
  sub->add_option("--places", args->place,
                  "hier only: rank placement compact (default), scatter, or a PU list like 0,2,4-7")
      ->type_name("POLICY");
  sub->add_flag("--compare", args->compare,
                "Print the completion time of flat, binary, binomial, kary:4, kary:8, lambda, greedy and fibo "
                "for --p and the model, with the ratio to the best (root 0)");
  sub->add_flag("--json", args->json,
                "With --compare: JSON {p, s, r, lambda, rows: [{shape, completion, completion_exact, ratio}], best}");
  sub->callback([args] {
    if (args->compare) {
      run_compare(*args);
    } else {
      run_tree(*args);
    }
  });
}

}  // namespace postbox::cli
