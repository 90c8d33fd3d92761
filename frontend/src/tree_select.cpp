// The one tree selection (tree_select.hpp).
#include "postbox/frontend/tree_select.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {
namespace {

std::optional<std::string> option(const std::map<std::string, std::string>& given, const std::string& name) {
  const auto it = given.find(name);
  if (it == given.end()) return std::nullopt;
  return it->second;
}

void check_names(const std::map<std::string, std::string>& given) {
  const auto& names = tree_selection_options();
  for (const auto& [key, text] : given) {
    PB_CHECK(std::find(names.begin(), names.end(), key) != names.end(), "not a tree selection option");
  }
}

int parse_p(const std::map<std::string, std::string>& given) {
  const auto p = option(given, "p");
  if (!p) throw InputError("--p is required");
  return static_cast<int>(parse_int(*p, "--p", 1, kMaxTreeRanks));
}

}  // namespace

SendRecv select_model(const std::map<std::string, std::string>& given) {
  const auto lambda_text = option(given, "lambda");
  const auto s_text = option(given, "s");
  const auto r_text = option(given, "r");
  if (lambda_text && (s_text || r_text)) throw InputError("give either --lambda or --s and --r, not both");
  if (s_text.has_value() != r_text.has_value()) throw InputError(s_text ? "--s needs --r" : "--r needs --s");
  if (lambda_text) {
    const Rational lambda = Rational::parse(*lambda_text, "--lambda");
    if (lambda < Rational(1)) throw InputError("--lambda must be at least 1, got " + *lambda_text);
    return SendRecv::from_lambda(lambda);
  }
  if (!s_text) return SendRecv{Rational(1), Rational(1)};  // λ = 2: Bruck's running example
  SendRecv m;
  m.s = Rational::parse(*s_text, "--s");
  m.r = Rational::parse(*r_text, "--r");
  if (m.s <= Rational(0)) throw InputError("--s must be positive, got " + *s_text);
  if (m.r < Rational(0)) throw InputError("--r must not be negative, got " + *r_text);
  return m;
}

namespace {

// The options that gave the model, as typed ("--s 1.5 and --r 3", "--lambda 9/5"); empty for
// the default model.
std::string model_options(const std::map<std::string, std::string>& given) {
  if (const auto lambda = option(given, "lambda")) return "--lambda " + *lambda;
  if (const auto s = option(given, "s")) return "--s " + *s + " and --r " + given.at("r");
  return "";
}

// Runs `work`, which builds trees of p ranks from the parsed model: p and the model are the
// inputs left that can fail there (the exact times may not fit 64 bits, or need too long a
// table), so its InputError names the options that gave them ("--p 1048576 with --s 0.001 and
// --r 1000: ...").
template <class Work>
auto naming_model(const TreeSelection& sel, Work&& work) {
  try {
    return work();
  } catch (const InputError& e) {
    throw InputError("--p " + sel.p_text + (sel.model_options.empty() ? "" : " with " + sel.model_options) + ": " +
                     frontend::error_line(e));
  }
}

}  // namespace

const std::vector<std::string>& tree_selection_options() {
  static const std::vector<std::string> names{"shape", "p", "root", "lambda", "s", "r", "alpha", "synthetic", "places"};
  return names;
}

TreeSelection select_tree(const std::map<std::string, std::string>& given) {
  check_names(given);
  const auto shape = option(given, "shape");
  if (!shape) throw InputError("--shape is required (or use --compare)");
  TreeSelection sel;
  sel.p = parse_p(given);
  sel.p_text = given.at("p");
  if (const auto root = option(given, "root")) {
    const std::int64_t v = parse_int(*root, "--root");
    if (v < 0 || v >= sel.p) throw InputError("--root must be in 0.." + std::to_string(sel.p - 1) + ", got " + *root);
    sel.root = static_cast<int>(v);
  }
  sel.model = select_model(given);
  sel.model_options = model_options(given);
  sel.spec = ShapeSpec::parse(*shape);
  if (const auto alpha = option(given, "alpha")) {
    if (sel.spec.kind != ShapeSpec::Kind::lambda) throw InputError("--alpha applies only to --shape lambda");
    if (sel.spec.alpha) throw InputError("alpha given twice: in --shape " + *shape + " and in --alpha");
    if (*alpha == "auto") {
      sel.spec.alpha.reset();
    } else {
      const Rational a = Rational::parse(*alpha, "--alpha");
      if (a <= Rational(0) || a >= Rational(1)) {
        throw InputError("--alpha must be 'auto' or strictly between 0 and 1, got " + *alpha);
      }
      sel.spec.alpha = a;
    }
  }
  sel.synthetic = option(given, "synthetic");
  sel.places = option(given, "places");
  if (sel.spec.kind != ShapeSpec::Kind::hier && (sel.synthetic || sel.places)) {
    throw InputError(std::string(sel.synthetic ? "--synthetic" : "--places") + " applies only to --shape hier");
  }
  return sel;
}

Tree build_selected_tree(const TreeSelection& sel) {
  std::optional<Topology> topo;
  std::vector<int> placement;
  if (sel.spec.kind == ShapeSpec::Kind::hier) {
    topo = sel.synthetic ? Topology::synthetic(*sel.synthetic) : Topology::machine();
    placement = topo->place(sel.places ? Placement::parse(*sel.places) : Placement::compact(), sel.p);
  }
  return naming_model(sel, [&] {
    Tree built = sel.spec.kind == ShapeSpec::Kind::hier ? build_tree(sel.spec, sel.p, sel.root, sel.model, &*topo, &placement)
                                                        : build_tree(sel.spec, sel.p, sel.root, sel.model);
    (void)built.model.lambda();  // every face shows it
    return built;
  });
}

const std::vector<std::string>& compare_tree_shapes() {
  static const std::vector<std::string> shapes{"flat", "binary", "binomial", "kary:4", "kary:8",
                                               "lambda", "greedy", "fibo"};
  return shapes;
}

TreeSelection select_tree_comparison(const std::map<std::string, std::string>& given) {
  check_names(given);
  for (const char* name : {"shape", "root", "alpha", "synthetic", "places"}) {
    if (given.count(name) != 0) throw InputError("--" + std::string(name) + " does not apply to --compare");
  }
  TreeSelection sel;
  sel.p = parse_p(given);
  sel.p_text = given.at("p");
  sel.model = select_model(given);
  sel.model_options = model_options(given);
  return sel;
}

double TreeComparison::ratio(const Rational& completion) const {
  return best == Rational(0) ? 1.0 : (completion / best).to_double();
}

TreeComparison compare_trees(const TreeSelection& sel) {
  TreeComparison c;
  c.p = sel.p;
  c.model = sel.model;
  c.lambda = naming_model(sel, [&] {
    for (const auto& name : compare_tree_shapes()) {
      const Tree t = build_tree(ShapeSpec::parse(name), sel.p, 0, sel.model);
      c.best = c.rows.empty() ? t.completion : std::min(c.best, t.completion);
      c.rows.push_back({name, t.completion});
    }
    return sel.model.lambda();
  });
  return c;
}

}  // namespace postbox
