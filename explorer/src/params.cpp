#include "params.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "postbox/frontend/tree_select.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox::explorer::internal {

Params::Params(const Query& query, std::string_view endpoint, std::initializer_list<std::string_view> allowed)
    : query_(query) {
  for (const auto& [name, value] : query) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == name;
    if (known) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw InputError("/api/" + std::string(endpoint) + " takes no parameter '" + name + "'" +
                     (list.empty() ? std::string(" (it takes none)") : " (it takes " + list + ")"));
  }
}

const std::string* Params::find(std::string_view name) const {
  const auto it = query_.find(name);
  return it == query_.end() ? nullptr : &it->second;
}

std::string Params::text(std::string_view name, std::string_view fallback) const {
  const std::string* v = find(name);
  return v ? *v : std::string(fallback);
}

const std::string& Params::required(std::string_view name, std::string_view missing) const {
  const std::string* v = find(name);
  if (!v) throw InputError(std::string(missing));
  return *v;
}

std::int64_t integer(std::string_view name, const std::string& text) {
  // The CLI's grammar (parse.hpp), so a value means the same and is refused in the same words.
  return parse_int(text, "--" + std::string(name));
}

std::int64_t positive(std::string_view name, const std::string& text, std::int64_t max) {
  const std::string opt = "--" + std::string(name);
  const std::int64_t v = integer(name, text);
  if (v < 1) throw InputError(opt + " must be at least 1, got " + text);
  if (v > 1'000'000'000) throw InputError(opt + " is too large: " + text);
  if (v > max) throw InputError(opt + " must be at most " + std::to_string(max) + " in the explorer, got " + text);
  return v;
}

Rational model_figure(std::string_view name, const std::string& text) {
  const std::string opt = "--" + std::string(name);
  const Rational x = Rational::parse(text, opt);
  std::int64_t den_limit = 1;
  for (int i = 0; i < kMaxDecimals; ++i) den_limit *= 10;
  if (x.den() > den_limit) {
    throw InputError(opt + " may have at most " + std::to_string(kMaxDecimals) +
                     " decimals (or a denominator up to " + std::to_string(den_limit) + ") in the explorer, got " + text);
  }
  if (x > Rational(kMaxModelValue) || x < Rational(-kMaxModelValue)) {
    throw InputError(opt + " must be at most " + std::to_string(kMaxModelValue) + " in the explorer, got " + text);
  }
  return x;
}

SendRecv tree_model(const Params& params) {
  std::map<std::string, std::string> given;
  for (const char* name : {"lambda", "s", "r"}) {
    if (const std::string* text = params.find(name)) given.emplace(name, *text);
  }
  const SendRecv model = select_model(given);
  for (const auto& [name, text] : given) (void)model_figure(name, text);
  return model;
}

Rational model_lambda(const Params& params) {
  const std::string& text = params.required("lambda", "--lambda is required");
  const Rational l = Rational::parse(text, "--lambda");
  if (l < Rational(1)) throw InputError("--lambda must be >= 1, got " + text);
  return model_figure("lambda", text);
}

}  // namespace postbox::explorer::internal
