// /api/tree, /api/compare, /api/scaling: the Trees view (`postbox tree`, Cordsen Figs. 4 and 9,
// Bruck Figs. 1-2).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "endpoints.hpp"
#include "params.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/frontend/render.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::explorer::internal {
namespace {

// The shapes the page compares, in the order of `postbox tree --compare` (Cordsen Fig. 4 and
// §4.3, plus the rest of the family).
const std::vector<std::string>& compare_shapes() {
  static const std::vector<std::string> shapes{"flat", "binary", "binomial", "kary:4", "kary:8",
                                               "lambda", "greedy", "fibo"};
  return shapes;
}

// hwloc's synthetic grammar in its simplest form, "type:N type:N ...", with at most
// kMaxSyntheticPus leaves (the library's limit: hwloc's time grows with the square of a level's
// objects).
Topology bounded_synthetic(const std::string& text) {
  std::int64_t leaves = 1;
  std::size_t at = 0;
  int levels = 0;
  const auto refuse = [&](const std::string& why) {
    throw InputError("--synthetic '" + text + "': " + why);
  };
  if (text.size() > 200) refuse("longer than 200 characters");
  while (at < text.size()) {
    if (text[at] == ' ') {
      ++at;
      continue;
    }
    const std::size_t end = std::min(text.find(' ', at), text.size());
    const std::string token = text.substr(at, end - at);
    const std::size_t colon = token.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == token.size() ||
        token.find_first_not_of("0123456789", colon + 1) != std::string::npos || colon + 1 + 5 < token.size()) {
      refuse("the explorer takes 'type:N ...' with N a number, e.g. 'pack:2 core:4 pu:2'");
    }
    leaves *= std::stoll(token.substr(colon + 1));
    if (leaves > kMaxSyntheticPus) refuse("more than " + std::to_string(kMaxSyntheticPus) + " PUs");
    ++levels;
    at = end;
  }
  if (levels == 0) refuse("empty");
  return Topology::synthetic(text);
}

int parse_root(const std::string* text, int p) {
  if (!text) return 0;
  const std::int64_t v = integer("root", *text);
  if (v < 0 || v >= p) throw InputError("--root must be in 0.." + std::to_string(p - 1) + ", got " + *text);
  return static_cast<int>(v);
}

// shape (with alpha folded in, as `postbox tree` does).
ShapeSpec parse_shape(const Params& prm) {
  const std::string& shape = prm.required("shape", "--shape is required (or use --compare)");
  ShapeSpec spec = ShapeSpec::parse(shape);
  if (const std::string* alpha = prm.find("alpha")) {
    if (spec.kind != ShapeSpec::Kind::lambda) throw InputError("--alpha applies only to --shape lambda");
    if (spec.alpha) throw InputError("alpha given twice: in --shape " + shape + " and in --alpha");
    if (*alpha != "auto") {
      const Rational a = Rational::parse(*alpha, "--alpha");
      if (a <= Rational(0) || a >= Rational(1)) {
        throw InputError("--alpha must be 'auto' or strictly between 0 and 1, got " + *alpha);
      }
      spec.alpha = a;
    }
  }
  return spec;
}

nlohmann::json tree_json(const Tree& t) {
  // postbox tree --format json's fields (one writer), then the page's: labels, the optimum and
  // each edge's send start.
  nlohmann::json j = frontend::tree_json(t);
  j["completion_label"] = format_time(t.completion);
  j["s_label"] = format_time(t.model.s);
  j["r_label"] = format_time(t.model.r);
  j["lambda_label"] = format_time(t.model.lambda());
  // The optimum of the model for p ranks, s·T_λ(p) (Bruck eq. 1; Cordsen's f in units of s).
  j["optimum"] = exact_json(fibo_time(t.model.s, t.model.r, t.p));
  nlohmann::json& nodes = j["nodes"];
  for (int v = 0; v < t.p; ++v) {
    const auto i = static_cast<std::size_t>(v);
    nlohmann::json& n = nodes[i];
    n["time_label"] = format_time(t.time[i]);
    // The edge from the parent: its send starts s + r before the child is active (tree.hpp).
    if (t.parent[i] >= 0) {
      const Rational start = t.time[i] - t.model.s - t.model.r;
      n["send_start"] = exact_json(start)["value"];
      n["send_label"] = format_time(start);
    } else {
      n["send_start"] = nullptr;
      n["send_label"] = nullptr;
    }
  }
  return j;
}

Reply tree(const Query& q) {
  const Params prm(q, "tree", {"shape", "p", "root", "lambda", "s", "r", "alpha", "synthetic", "places"});
  const ShapeSpec spec = parse_shape(prm);
  const int p = static_cast<int>(positive("p", prm.required("p", "--p is required"), kMaxTreeRanks));
  const int root = parse_root(prm.find("root"), p);
  const SendRecv model = tree_model(prm);
  std::optional<Topology> topo;
  std::vector<int> placement;
  if (spec.kind == ShapeSpec::Kind::hier) {
    topo = prm.has("synthetic") ? bounded_synthetic(prm.text("synthetic")) : Topology::machine();
    placement = topo->place(prm.has("places") ? Placement::parse(prm.text("places")) : Placement::compact(), p);
  } else if (prm.has("synthetic") || prm.has("places")) {
    throw InputError(std::string(prm.has("synthetic") ? "--synthetic" : "--places") + " applies only to --shape hier");
  }
  const Tree t = topo ? build_tree(spec, p, root, model, &*topo, &placement) : build_tree(spec, p, root, model);
  nlohmann::json j = tree_json(t);
  if (topo) j["topology"] = topo->source() == Topology::Source::machine ? "machine" : topo->origin();
  return json_reply(j);
}

Reply compare(const Query& q) {
  const Params prm(q, "compare", {"p", "lambda", "s", "r"});
  const int p = static_cast<int>(positive("p", prm.required("p", "--p is required"), kMaxTreeRanks));
  const SendRecv model = tree_model(prm);
  nlohmann::json rows = nlohmann::json::array();
  std::optional<Rational> best;
  std::vector<Rational> times;
  for (const std::string& name : compare_shapes()) {
    times.push_back(build_tree(ShapeSpec::parse(name), p, 0, model).completion);
    best = best ? std::min(*best, times.back()) : times.back();
  }
  for (std::size_t i = 0; i < times.size(); ++i) {
    nlohmann::json row = exact_json(times[i]);
    row["shape"] = compare_shapes()[i];
    row["ratio"] = *best == Rational(0) ? 1.0 : (times[i] / *best).to_double();
    row["best"] = times[i] == *best;
    rows.push_back(std::move(row));
  }
  return json_reply({{"p", p},
                     {"s_label", format_time(model.s)},
                     {"r_label", format_time(model.r)},
                     {"lambda_label", format_time(model.lambda())},
                     {"optimum", exact_json(fibo_time(model.s, model.r, p))},
                     {"best", exact_json(*best)},
                     {"rows", rows}});
}

// Completion against p for a few shapes (Cordsen Fig. 4), at most 256 sizes from 1 to p-max.
Reply scaling(const Query& q) {
  const Params prm(q, "scaling", {"shapes", "p-max", "lambda", "s", "r"});
  const int p_max = static_cast<int>(positive("p-max", prm.required("p-max", "--p-max is required"), kMaxScalingRanks));
  const SendRecv model = tree_model(prm);
  std::vector<std::string> names;
  const std::string list = prm.text("shapes", "binomial,fibo");
  for (std::size_t at = 0; at <= list.size();) {
    // hier's own list uses commas, so the shapes here are separated by ';' or ','.
    const std::size_t end = std::min(list.find_first_of(";,", at), list.size());
    if (end > at) names.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  if (names.empty() || names.size() > 8) throw InputError("--shapes must name 1 to 8 shapes, got '" + list + "'");
  std::vector<int> sizes;
  const int step = std::max(1, (p_max + 255) / 256);
  for (int p = 1; p <= p_max; p += step) sizes.push_back(p);
  if (sizes.back() != p_max) sizes.push_back(p_max);
  nlohmann::json series = nlohmann::json::array();
  for (const std::string& name : names) {
    const ShapeSpec spec = ShapeSpec::parse(name);
    if (spec.kind == ShapeSpec::Kind::hier) throw InputError("--shapes: hier depends on the machine; compare it in /api/tree");
    nlohmann::json values = nlohmann::json::array();
    for (int p : sizes) values.push_back(exact_json(build_tree(spec, p, 0, model).completion)["value"]);
    series.push_back({{"shape", spec.name()}, {"completion", values}});
  }
  nlohmann::json optimum = nlohmann::json::array();
  for (int p : sizes) optimum.push_back(exact_json(fibo_time(model.s, model.r, p))["value"]);
  return json_reply({{"p", sizes}, {"series", series}, {"optimum", optimum}, {"lambda_label", format_time(model.lambda())}});
}

}  // namespace

void add_tree_endpoints(Api& api) {
  api.add("tree", "one tree: nodes with activation and send times, completion, the optimum s*T_lambda(p)",
          {"shape", "p", "root", "lambda", "s", "r", "alpha", "synthetic", "places"}, tree);
  api.add("compare", "completion of every shape for one p and model (postbox tree --compare)",
          {"p", "lambda", "s", "r"}, compare);
  api.add("scaling", "completion against p = 1..p-max for a few shapes (Cordsen Fig. 4)",
          {"shapes", "p-max", "lambda", "s", "r"}, scaling);
}

}  // namespace postbox::explorer::internal
