// The explorer's JSON API (docs/explorer.md): what `postbox serve` answers under /api/NAME.
//
// Every figure the page shows comes from here, and every endpoint is a thin view of library
// functions the CLI and the tests also call (build_tree, T_lambda, alpha_ranges, postal_schedule,
// simulate, Topology, calibrated_latency ...). The browser only draws.
//
// Query parameters are the CLI's option names without the dashes (/api/tree?shape=fibo&p=64&s=1&r=3
// is `postbox tree --shape fibo --p 64 --s 1 --r 3`), and bad input gets the message the CLI
// prints for it. Where the CLI would accept a request that is too large to answer at once (a tree
// of 10^7 ranks, an s with 12 decimals) the explorer refuses it with its own one-line message
// naming the limit (kMax* below).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/plan.hpp"
#include "postbox/emulator/machine.hpp"

namespace postbox::explorer {

// Limits of what one request may ask for. Each keeps one answer under about a second and a few MB
// on a 2-core machine; each is named in the refusal.
inline constexpr int kMaxTreeRanks = 4096;         // /api/tree, /api/compare (p)
inline constexpr int kMaxScalingRanks = 1024;      // /api/scaling (p-max)
inline constexpr std::int64_t kMaxPostalN = 1'000'000'000;  // /api/postal, /api/combine (n)
inline constexpr int kMaxAlphaN = 2000;            // /api/alpha-ranges (n-max)
inline constexpr int kMaxSimRanks = 1024;          // /api/sim (p)
// all-to-all plans grow as p² messages (and their construction more), so their p stops earlier.
inline constexpr int kMaxSimAllToAllRanks = 128;
inline constexpr std::int64_t kMaxSimBytes = 1 << 20;  // /api/sim (bytes)
inline constexpr std::int64_t kMaxSimMessages = 100'000;  // /api/sim: sends in the plan
inline constexpr std::int64_t kMaxSimPackets = 50'000;    // /api/sim: packets of those sends on a mesh
inline constexpr std::int64_t kMaxMeshNodes = 4096;  // /api/sim (mesh nodes)
inline constexpr int kMaxSyntheticPus = 2048;      // /api/tree?shape=hier&synthetic=... (Topology::kMaxSyntheticPus)
// Model figures (λ, s, r): at most this magnitude and kMaxDecimals fraction digits (or a
// denominator up to 10^kMaxDecimals), which keeps every exact time well inside 64 bits.
inline constexpr std::int64_t kMaxModelValue = 10'000;
inline constexpr int kMaxDecimals = 3;

// A decoded URL query. A name given twice is refused before a handler sees the query.
using Query = std::map<std::string, std::string, std::less<>>;

struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string download_name;  // non-empty: sent as an attachment with this file name
};

// A JSON reply (invalid UTF-8 in echoed input is replaced, never thrown on).
Reply json_reply(const nlohmann::json& j);
// An error reply: one line as the CLI prints it, "postbox: error: MESSAGE\n" (text/plain).
Reply error_reply(int status, std::string message);

// An endpoint: parses its query (InputError on bad input) and computes its reply.
using Handler = std::function<Reply(const Query&)>;

// An emulated run as the page asks for it. alpha and lambda are exact, as typed (λ = 1/3 stays
// 1/3: the library's plan selection receives them without a detour through a double).
struct SimRequest {
  std::string machine;
  std::string op = "bcast";
  std::string algo = "binomial";
  int p = 2;
  std::int64_t bytes = 8;
  std::optional<Rational> alpha;
  std::optional<Rational> lambda;
  std::string mesh;
  std::string placement;
  std::uint64_t seed = 1;
};
struct SimSetup {
  sim::Machine machine;
  Plan plan;
};
using SimPlanner = std::function<SimSetup(const SimRequest&)>;

// The run `postbox sim` makes of the same options (select_emulated_run): its machine and plan
// request, and the setup with the plan built. The default planner of Api.
EmulatedRun emulated_run(const SimRequest& r);
SimSetup plan_emulated_run(const SimRequest& r);

class Api {
 public:
  // Registers the built-in endpoints: tree, compare, scaling, postal, alpha-ranges, breakeven,
  // combine, topo, calibration, machines, and sim and trace with plan_emulated_run() as their
  // planner (set_sim_planner replaces it).
  Api();

  // Adds or replaces /api/NAME; `params` lists the query names it takes (for /api's index).
  void add(std::string name, std::string summary, std::vector<std::string> params, Handler handler);
  // Registers /api/sim (the run as JSON for the page) and /api/trace (Chrome trace-event JSON,
  // a download for Perfetto) on top of `planner`, replacing the ones registered before.
  void set_sim_planner(SimPlanner planner);

  // Never throws. InputError → 400 with the CLI's line, "postbox: error: MESSAGE\n" (text/plain);
  // an unknown endpoint → 404; any other exception (a bug, or memory) → 500 naming it.
  // A parameter the endpoint does not take → 400. "" (the /api index) lists the endpoints.
  [[nodiscard]] Reply handle(std::string_view name, const Query& query) const;

 private:
  struct Endpoint {
    std::string summary;
    std::vector<std::string> params;
    Handler handler;
  };
  std::map<std::string, Endpoint, std::less<>> endpoints_;
};

// The emulated run as the page draws it: time (and the CLI's "%.3f" text of it), per-rank spans,
// and on mesh machines the mesh, where each rank sits and each link's occupancy. Spans beyond
// `max_spans` are left out (spans_truncated).
nlohmann::json emulated_run_json(const SimRequest& request, const SimSetup& setup, std::size_t max_spans = 200'000);

// Parses /api/sim's query (machine, op, algo, p, bytes, alpha, lambda, mesh, placement, seed)
// with the CLI's messages and the explorer's limits.
SimRequest parse_sim_request(const Query& query);

// The `postbox` command line that prints the same figures (shown on the page, for slides).
std::string sim_command_line(const SimRequest& request);

}  // namespace postbox::explorer
