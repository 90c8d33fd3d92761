// The plan registry lists parametrised families by their grammar ("kary:K", "logp-lev-rec:G",
// "1-lev-perm:linear|xor|balanced"); tests that run every registered plan turn each listed name
// into concrete algorithms with this one rule.
#pragma once

#include <string>
#include <vector>

namespace postbox::test {

// "kary:K" → kary:3, "logp-lev-rec:G" → logp-lev-rec:0.5, "NAME:a|b|c" → NAME:a, NAME:b,
// NAME:c; a name without a parameter is itself.
inline std::vector<std::string> concrete_algos(const std::string& listed) {
  const auto colon = listed.find(':');
  if (colon == std::string::npos) return {listed};
  const std::string base = listed.substr(0, colon), param = listed.substr(colon + 1);
  if (param == "K") return {base + ":3"};
  if (param == "G") return {base + ":0.5"};
  std::vector<std::string> out;
  for (std::size_t at = 0;;) {
    const auto bar = param.find('|', at);
    out.push_back(base + ":" + param.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
    if (bar == std::string::npos) return out;
    at = bar + 1;
  }
}

}  // namespace postbox::test
