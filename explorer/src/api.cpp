#include "postbox/explorer/api.hpp"

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "endpoints.hpp"
#include "postbox/frontend/render.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::explorer {

namespace internal {
nlohmann::json exact_json(const Rational& x) {
  // The value as postbox tree --format json writes its numbers (frontend::number_json).
  return {{"value", nlohmann::json(frontend::number_json(x))}, {"exact", x.str()}, {"label", format_time(x)}};
}
}  // namespace internal

// One line, as the CLI prints it: its main() writes "postbox: error: " and the message, under
// the same echo rule (one_line(): control characters escaped, long values shortened).
Reply error_reply(int status, std::string message) {
  Reply r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "postbox: error: " + one_line(message) + "\n";
  return r;
}

Reply json_reply(const nlohmann::json& j) {
  Reply r;
  r.body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

Api::Api() {
  internal::add_tree_endpoints(*this);
  internal::add_model_endpoints(*this);
  internal::add_machine_endpoints(*this);
  set_sim_planner(plan_emulated_run);
}

void Api::add(std::string name, std::string summary, std::vector<std::string> params, Handler handler) {
  PB_CHECK(handler != nullptr, "Api::add: no handler for " + name);
  endpoints_[std::move(name)] = Endpoint{std::move(summary), std::move(params), std::move(handler)};
}

Reply Api::handle(std::string_view name, const Query& query) const {
  try {
    if (name.empty()) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& [n, e] : endpoints_) list.push_back({{"path", "/api/" + n}, {"params", e.params}, {"summary", e.summary}});
      return json_reply({{"endpoints", list}});
    }
    const auto it = endpoints_.find(name);
    if (it == endpoints_.end()) return error_reply(404, "no endpoint /api/" + std::string(name) + " (see /api)");
    return it->second.handler(query);
  } catch (const InputError& e) {
    return error_reply(400, frontend::error_line(e));
  } catch (const std::bad_alloc&) {
    return error_reply(500, "out of memory answering /api/" + std::string(name));
  } catch (const std::exception& e) {
    return error_reply(500, "internal error in /api/" + std::string(name) + ": " + e.what());
  } catch (...) {
    return error_reply(500, "internal error in /api/" + std::string(name));
  }
}

}  // namespace postbox::explorer
