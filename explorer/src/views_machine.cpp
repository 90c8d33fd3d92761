// /api/topo, /api/calibration, /api/machines: the "This machine" view and the choices of the
// Emulated runs view.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <set>
#include <string>

#include "endpoints.hpp"
#include "params.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::explorer::internal {
namespace {

// The machine's hierarchy, with `postbox topo --json`'s field names.
Reply topo(const Query& q) {
  const Params prm(q, "topo", {});
  return json_reply(frontend::topology_json(Topology::machine()));
}

// A measured latency as a model figure the tree endpoint takes (at most kMaxModelValue, at most
// kMaxDecimals decimals): in ns to 0.1 ns, or in µs to 1 ns where r is beyond 10 µs (a loaded
// machine). The measurement's spread is far coarser than either.
std::string latency_text(double ns, bool in_us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, in_us ? "%.3f" : "%.1f", in_us ? ns / 1000.0 : ns);
  return buf;
}

// The figures the library uses (calibrated_latency(): environment, saved file or a quick
// measurement), or with measure=1 a fresh quick measurement; and the Fibo-tree query they give.
Reply calibration(const Query& q) {
  const Params prm(q, "calibration", {"measure"});
  const std::string measure = prm.text("measure", "0");
  if (measure != "0" && measure != "1") throw InputError("--measure must be 0 or 1, got '" + measure + "'");
  Calibration c;
  if (measure == "1") {
    // One measurement at a time: it runs its own two threads and wants the cores to itself.
    static std::mutex mu;
    const std::lock_guard<std::mutex> lock(mu);
    try {
      c = calibrate(CalibrateOptions::quick());
    } catch (const InputError&) {
      throw;
    } catch (const std::runtime_error& e) {
      // A measurement a busy machine spoiled: the request was right, try again later.
      return error_reply(503, e.what());
    }
  } else {
    c = calibrated_latency();
  }
  nlohmann::json j = nlohmann::json::parse(calibration_json(c));
  j["source"] = c.source;
  const int pus = Topology::machine().pus();
  const double s_ns = std::max(0.1, c.s_ns), r_ns = std::max(0.0, c.r_ns);
  const bool in_us = std::max(s_ns, r_ns) > static_cast<double>(kMaxModelValue);
  if (std::max(s_ns, r_ns) > 1000.0 * static_cast<double>(kMaxModelValue)) {
    throw InputError("the measured latencies (s = " + std::to_string(c.s_ns) + " ns, r = " + std::to_string(c.r_ns) +
                     " ns) are beyond 10 ms: measure again on a quieter machine");
  }
  j["tree_query"] = {{"shape", "fibo"},
                     {"p", pus},
                     {"s", latency_text(s_ns, in_us)},
                     {"r", latency_text(r_ns, in_us)},
                     {"unit", in_us ? "us" : "ns"}};
  j["pus"] = pus;
  return json_reply(j);
}

// Profiles found in the profile directories, the measured model of this machine, and the
// registered (op, algorithm) pairs.
Reply machines(const Query& q) {
  const Params prm(q, "machines", {});
  std::set<std::string> names;
  for (const std::string& dir : sim::profile_dirs()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".toml") names.insert(entry.path().stem().string());
    }
  }
  nlohmann::json profiles = nlohmann::json::array();
  for (const std::string& name : names) {
    nlohmann::json row{{"name", name}};
    try {
      const sim::Machine m = sim::load_machine(name);
      row["kind"] = sim::model_name(m);
      row["dims"] = m.mesh.dims;
      if (m.kind != sim::ModelKind::mesh) row["dims"] = nlohmann::json::array();
    } catch (const InputError& e) {
      row["error"] = e.what();  // shown beside the name; the page does not offer it
    }
    profiles.push_back(std::move(row));
  }
  const Calibration& c = calibrated_latency();
  char measured[96];
  std::snprintf(measured, sizeof measured, "sr:%.6g:%.6g", c.s_ns / 1000.0, std::max(0.0, c.r_ns) / 1000.0);
  nlohmann::json algos = nlohmann::json::array();
  for (const PlanBuilderInfo& b : list_plan_builders()) {
    algos.push_back({{"op", b.op}, {"algo", b.algo}, {"description", b.description}});
  }
  return json_reply({{"profiles", profiles}, {"measured", measured}, {"algorithms", algos}});
}

}  // namespace

void add_machine_endpoints(Api& api) {
  api.add("topo", "this machine's hwloc hierarchy (postbox topo --json)", {}, topo);
  api.add("calibration", "s, r and lambda of this machine (measure=1: measure again) and the Fibo-tree they give",
          {"measure"}, calibration);
  api.add("machines", "machine profiles, this machine's measured model string, the (op, algorithm) pairs", {},
          machines);
}

}  // namespace postbox::explorer::internal
