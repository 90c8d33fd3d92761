// Reading an endpoint's query with the CLI's messages (the parameter NAME is the CLI's --NAME)
// and the explorer's limits (api.hpp, kMax*).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/explorer/api.hpp"

namespace postbox::explorer::internal {

class Params {
 public:
  // A name outside `allowed` → InputError.
  Params(const Query& query, std::string_view endpoint, std::initializer_list<std::string_view> allowed);

  [[nodiscard]] bool has(std::string_view name) const { return find(name) != nullptr; }
  [[nodiscard]] const std::string* find(std::string_view name) const;
  [[nodiscard]] std::string text(std::string_view name, std::string_view fallback = {}) const;
  // The value, or InputError(`missing`) when absent.
  [[nodiscard]] const std::string& required(std::string_view name, std::string_view missing) const;

 private:
  const Query& query_;
};

// The CLI's positive integer: "--NAME must be an integer, got 'x'", "--NAME must be at least 1,
// got 0", then the explorer's "--NAME must be at most MAX in the explorer, got N".
std::int64_t positive(std::string_view name, const std::string& text, std::int64_t max);
// A signed 64-bit integer ("--NAME must be an integer, got 'x'").
std::int64_t integer(std::string_view name, const std::string& text);

// A model figure (λ, s, r) parsed by Rational::parse, then held to the explorer's limits:
// magnitude <= kMaxModelValue, denominator <= 10^kMaxDecimals.
Rational model_figure(std::string_view name, const std::string& text);

// `postbox tree`'s model: --lambda, or --s and --r, else s = 1, r = 1 (λ = 2).
SendRecv tree_model(const Params& params);
// `postbox model`'s --lambda (">= 1").
Rational model_lambda(const Params& params);

}  // namespace postbox::explorer::internal
