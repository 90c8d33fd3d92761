// The registry of cost models (host_model.hpp).
#include "postbox/emulator/host_model.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "postbox/runtime/check.hpp"

namespace postbox::sim {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, HostModel, std::less<>> models;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_host_model(HostModel model) {
  const std::string& n = model.name;
  PB_CHECK(!n.empty() && std::all_of(n.begin(), n.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }),
           "register_host_model: '" + n + "' is not a lower-case word");
  for (const char* taken : {"postal", "sr", "crossbar", "logp", "mesh", "cluster", "host"})
    PB_CHECK(n != taken, "register_host_model: '" + n + "' is a built-in machine kind");
  PB_CHECK(static_cast<bool>(model.costs), "register_host_model: '" + n + "' has no costs function");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.models[n] = std::move(model);
}

std::optional<HostModel> find_host_model(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto it = r.models.find(name);
  if (it == r.models.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> host_model_names() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [name, model] : r.models) out.push_back(name);
  return out;
}

}  // namespace postbox::sim
