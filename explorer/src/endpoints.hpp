// The built-in endpoints, by page view (each file registers its own into the Api).
#pragma once

#include <nlohmann/json.hpp>

#include "postbox/collectives/rational.hpp"
#include "postbox/explorer/api.hpp"

namespace postbox::explorer::internal {

void add_tree_endpoints(Api& api);     // tree, compare, scaling
void add_model_endpoints(Api& api);    // postal, alpha-ranges, breakeven, combine
void add_machine_endpoints(Api& api);  // topo, calibration, machines

// An exact time as the page shows it: a number (integral when exact), its exact text ("32/5")
// and its short label (format_time: "6.4").
nlohmann::json exact_json(const Rational& x);

}  // namespace postbox::explorer::internal
