// /api/tree, /api/compare, /api/scaling: the Trees view (`postbox tree`, Cordsen Figs. 4 and 9,
// Bruck Figs. 1-2).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "endpoints.hpp"
#include "params.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/frontend/render.hpp"
#include "postbox/frontend/tree_select.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::explorer::internal {
namespace {

// hwloc's synthetic grammar in its simplest form, "type:N type:N ...", with at most
// kMaxSyntheticPus leaves (the library's limit: hwloc's time grows with the square of a level's
// objects).
void check_synthetic_bounds(const std::string& text) {
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

// The query as the library's tree selection takes it (tree_select.hpp): the same checks and
// messages as `postbox tree`, after the explorer's own limits on p and the model's figures.
std::map<std::string, std::string> selection_options(const Query& q, const Params& prm) {
  (void)positive("p", prm.required("p", "--p is required"), kMaxTreeRanks);
  (void)tree_model(prm);
  return {q.begin(), q.end()};
}

Reply tree(const Query& q) {
  const Params prm(q, "tree", {"shape", "p", "root", "lambda", "s", "r", "alpha", "synthetic", "places"});
  const TreeSelection sel = select_tree(selection_options(q, prm));
  if (sel.synthetic) check_synthetic_bounds(*sel.synthetic);
  nlohmann::json j = tree_json(build_selected_tree(sel));
  if (sel.spec.kind == ShapeSpec::Kind::hier) j["topology"] = sel.synthetic ? *sel.synthetic : "machine";
  return json_reply(j);
}

Reply compare(const Query& q) {
  const Params prm(q, "compare", {"p", "lambda", "s", "r"});
  const TreeComparison c = compare_trees(select_tree_comparison(selection_options(q, prm)));
  nlohmann::json rows = nlohmann::json::array();
  for (const TreeComparison::Row& r : c.rows) {
    nlohmann::json row = exact_json(r.completion);
    row["shape"] = r.shape;
    row["ratio"] = c.ratio(r.completion);
    row["best"] = r.completion == c.best;
    rows.push_back(std::move(row));
  }
  return json_reply({{"p", c.p},
                     {"s_label", format_time(c.model.s)},
                     {"r_label", format_time(c.model.r)},
                     {"lambda_label", format_time(c.lambda)},
                     {"optimum", exact_json(fibo_time(c.model.s, c.model.r, c.p))},
                     {"best", exact_json(c.best)},
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
