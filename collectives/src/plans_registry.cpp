// The plan registry, request checks, the plan cache and the model defaults.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "plans_internal.hpp"
#include "postbox/collectives/c3.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox {
namespace {

struct Entry {
  PlanBuilderInfo info;
  PlanBuilder build;
};

struct Registry {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, Entry> entries;  // (op, family)
};

Registry& storage() {
  static Registry reg;
  return reg;
}

// The built-ins register on first use rather than from static initialisers, which the linker
// drops from a static library when nothing references their translation unit.
void ensure_builtins() {
  static std::once_flag once;
  std::call_once(once, [] {
    internal::register_tree_plans();
    internal::register_allreduce_plans();
    internal::register_barrier_plans();
    register_s2p_plans();
    register_c3_plans();
  });
}

constexpr int kMaxPlanP = 1 << 30;

std::string family_of(const std::string& algo) { return algo.substr(0, algo.find(':')); }

std::optional<Rational> env_rational(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return Rational::parse(v, name);
}

void check_request(const PlanRequest& req) {
  if (req.p < 1) throw InputError("p must be at least 1, got " + std::to_string(req.p));
  if (req.p > kMaxPlanP) throw InputError("p must be at most " + std::to_string(kMaxPlanP) + ", got " + std::to_string(req.p));
  if (req.root < 0 || req.root >= req.p) {
    throw InputError("root " + std::to_string(req.root) + " is outside 0.." + std::to_string(req.p - 1));
  }
  if (req.bytes < 0) throw InputError("bytes must not be negative, got " + std::to_string(req.bytes));
  if (req.bytes > kMaxPlanBytes) throw InputError("bytes must be at most 1 GiB, got " + std::to_string(req.bytes));
  if (req.elem_bytes < 1) throw InputError("elem_bytes must be at least 1");
  if (req.lambda && req.model) throw InputError("give either lambda or s and r, not both");
  if (req.lambda) validate_lambda(*req.lambda);
  if (req.model) validate_send_recv(req.model->s, req.model->r);
}

}  // namespace

namespace internal {
void require_elements(const PlanRequest& req) {
  if (req.bytes % req.elem_bytes != 0) {
    throw InputError(req.op + "/" + req.algo + ": " + std::to_string(req.bytes) + " bytes is not a multiple of the " +
                     std::to_string(req.elem_bytes) + "-byte element");
  }
}
}  // namespace internal

void register_plan_builder(const std::string& op, const std::string& algo, const std::string& description,
                           PlanBuilder builder) {
  PB_CHECK(!op.empty() && !algo.empty() && builder, "register_plan_builder: empty op, algo or builder");
  Registry& r = storage();
  std::lock_guard<std::mutex> lock(r.mu);
  r.entries[{op, family_of(algo)}] = Entry{PlanBuilderInfo{op, algo, description}, std::move(builder)};
}

std::vector<PlanBuilderInfo> list_plan_builders() {
  ensure_builtins();
  Registry& r = storage();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<PlanBuilderInfo> out;
  for (const auto& [key, e] : r.entries) out.push_back(e.info);
  return out;
}

bool op_has_root(const std::string& op) {
  return op != "allreduce" && op != "s2p" && op != "all-to-all" && op != "one-to-one" && op != "barrier";
}

bool op_takes_mesh(const std::string& op) { return op == "s2p" || is_c3_op(op); }

void check_elements(const PlanRequest& request) { internal::require_elements(request); }

void check_plan_known(const std::string& op, const std::string& algo) {
  ensure_builtins();
  Registry& r = storage();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.entries.count({op, family_of(algo)}) != 0) return;
  std::set<std::string> ops;
  std::string algos;
  for (const auto& [key, e] : r.entries) {
    ops.insert(key.first);
    if (key.first == op) algos += (algos.empty() ? "" : ", ") + e.info.algo;
  }
  if (algos.empty()) {
    std::string known;
    for (const auto& o : ops) known += (known.empty() ? "" : ", ") + o;
    throw InputError("unknown op '" + op + "' (known: " + known + ")");
  }
  throw FieldError({{"unknown "}, FieldError::field("algo"), {" '" + algo + "' for "}, FieldError::field("op"),
                    {" " + op + " (known: " + algos + ")"}});
}

Plan build_plan(const PlanRequest& req) {
  check_plan_known(req.op, req.algo);
  PlanBuilder builder;
  {
    Registry& r = storage();
    std::lock_guard<std::mutex> lock(r.mu);
    builder = r.entries.at({req.op, family_of(req.algo)}).build;
  }
  check_request(req);
  check_plan_memory(req);
  if (const auto problem = oversized_message(req)) throw InputError(*problem);
  Plan plan = builder(req);
  const auto problem = validate(plan);
  PB_CHECK(!problem, "builder " + req.op + "/" + req.algo + " made an invalid plan: " + problem.value_or(""));
  return plan;
}

std::shared_ptr<const Plan> cached_plan(const PlanRequest& req) {
  const SendRecv m = model_of(req);
  std::ostringstream key;
  key << req.op << '|' << req.algo << '|' << req.p << '|' << req.root << '|' << req.bytes << '|' << req.elem_bytes << '|'
      << m.s.str() << '|' << m.r.str() << '|' << (req.topology == nullptr ? 0 : req.topology->id()) << '|';
  // The placement by value: its vector's address may be reused, or the vector changed, between calls.
  if (req.placement != nullptr) {
    key << 'P';
    for (const int pu : *req.placement) key << ',' << pu;
  }
  if (req.mesh) key << "|mesh" << req.mesh->rows << 'x' << req.mesh->cols;
  if (!req.sources.empty()) {
    key << "|sources";
    for (const int src : req.sources) key << ',' << src;
  }
  if (req.hier_levels) {
    key << "|levels";
    for (const auto& g : req.hier_levels->groups) {
      key << '/';
      for (int c : g) key << c << ',';
    }
    for (const SendRecv& lm : req.hier_levels->models) key << '/' << lm.s.str() << ':' << lm.r.str();
  }
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const Plan>> cache;
  const std::string k = key.str();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (const auto it = cache.find(k); it != cache.end()) return it->second;
  }
  auto plan = std::make_shared<const Plan>(build_plan(req));
  std::lock_guard<std::mutex> lock(mu);
  // Bounded: a sweep over many sizes must not grow the cache without limit.
  if (cache.size() >= kPlanCacheEntries) cache.clear();
  return cache.emplace(k, std::move(plan)).first->second;
}

std::optional<SendRecv> env_latency() {
  const auto s = env_rational("POSTBOX_S_NS");
  const auto r = env_rational("POSTBOX_R_NS");
  if (!s && !r) return std::nullopt;
  if (!s || !r) throw InputError("set both POSTBOX_S_NS and POSTBOX_R_NS, or neither");
  if (*s <= Rational(0)) throw InputError("POSTBOX_S_NS must be positive");
  if (*r < Rational(0)) throw InputError("POSTBOX_R_NS must not be negative");
  return SendRecv{*s, *r};
}

SendRecv model_of(const PlanRequest& req) {
  if (req.model) return *req.model;
  if (req.lambda) return SendRecv::from_lambda(*req.lambda);
  if (auto env = env_latency()) return *env;
  return SendRecv{Rational(1), Rational(1)};
}

std::string default_bcast_shape() { return env_latency() ? "greedy" : "binomial"; }

}  // namespace postbox
