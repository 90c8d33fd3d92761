// postbox topo: the hwloc hierarchy (machine, synthetic or XML) and where each rank of a team
// of p would be placed.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::cli {
namespace {

// A placement vector is p ints; beyond this the request is a typo, not a team.
constexpr int kMaxRanks = 1 << 20;

struct TopoArgs {
  std::string synthetic;
  std::string xml;
  std::string places = "compact";
  std::string p;
  bool json = false;
};

std::string bytes_text(std::uint64_t b) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  std::uint64_t whole = b;
  std::uint64_t rem = 0;
  while (whole >= 1024 && u < 4) {
    rem = whole % 1024;
    whole /= 1024;
    ++u;
  }
  std::ostringstream s;
  s << whole;
  if (u > 0 && rem != 0 && whole < 10) s << '.' << (rem * 10 / 1024);
  s << ' ' << units[u];
  return s.str();
}

std::string pu_range(const Topology::Node& n) {
  if (n.first_pu < 0) return "no PUs";
  if (n.first_pu == n.last_pu) return "PU " + std::to_string(n.first_pu);
  return "PUs " + std::to_string(n.first_pu) + "-" + std::to_string(n.last_pu);
}

std::string index_or_dash(int i) { return i < 0 ? "-" : std::to_string(i); }

std::string plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void print_text(const Topology& t, const TopoArgs& a, const std::vector<int>& placement, bool wrapped) {
  std::cout << "topology: " << t.source_name();
  if (!t.origin().empty()) std::cout << " \"" << t.origin() << "\"";
  std::cout << ": " << plural(t.packages(), "package", "packages") << ", "
            << plural(t.numa_nodes(), "NUMA node", "NUMA nodes") << ", " << plural(t.l3_groups(), "L3 group", "L3 groups")
            << ", " << plural(t.cores(), "core", "cores") << ", " << plural(t.pus(), "PU", "PUs") << "\n\n";
  for (const Topology::Node& n : t.tree()) {
    std::cout << std::string(static_cast<std::size_t>(n.level) * 2, ' ') << n.kind;
    if (n.kind != "Machine") std::cout << " L#" << n.logical_index;
    if (n.os_index >= 0 && n.kind != "Machine") std::cout << " P#" << n.os_index;
    if (n.kind == "PU") {
      std::cout << '\n';
      continue;
    }
    std::cout << " (";
    // hwloc invents memory and cache sizes for synthetic topologies; only real sizes are shown.
    if (n.bytes > 0 && t.source() != Topology::Source::synthetic) std::cout << bytes_text(n.bytes) << ", ";
    std::cout << pu_range(n) << ")\n";
  }
  std::cout << "\nplacement: " << a.places << ", p = " << placement.size();
  if (wrapped) std::cout << " (more ranks than places: wraps around, several ranks share a PU)";
  std::cout << "\npinning: "
            << (t.can_bind() ? "possible (this machine)" : "not possible (not this machine's topology)") << "\n\n";
  std::cout << "rank    PU  P#    core  L3    NUMA  package\n";
  for (std::size_t r = 0; r < placement.size(); ++r) {
    const PuInfo& info = t.pu(placement[r]);
    char line[128];
    std::snprintf(line, sizeof line, "%-6zu  %-3d %-5d %-5s %-5s %-5s %s", r, placement[r], info.os_index,
                  index_or_dash(info.core).c_str(), index_or_dash(info.l3).c_str(), index_or_dash(info.numa).c_str(),
                  index_or_dash(info.package).c_str());
    std::cout << line << '\n';
  }
}

nlohmann::json to_json(const Topology& t, const TopoArgs& a, const std::vector<int>& placement, bool wrapped) {
  nlohmann::json j = frontend::topology_json(t);
  j["origin"] = t.origin().empty() ? nlohmann::json(nullptr) : nlohmann::json(t.origin());
  j["places"] = a.places;
  j["p"] = placement.size();
  j["wrapped"] = wrapped;
  j["placement"] = placement;
  auto ranks = nlohmann::json::array();
  for (std::size_t r = 0; r < placement.size(); ++r) {
    const PuInfo& info = t.pu(placement[r]);
    ranks.push_back({{"rank", r},
                     {"pu", placement[r]},
                     {"os_index", info.os_index},
                     {"core", info.core},
                     {"l3", info.l3},
                     {"numa", info.numa},
                     {"package", info.package}});
  }
  j["ranks"] = std::move(ranks);
  return j;
}

void run_topo(const TopoArgs& a) {
  if (!a.synthetic.empty() && !a.xml.empty()) throw InputError("give either --synthetic or --xml, not both");
  std::optional<int> p;
  if (!a.p.empty()) {
    p = parse_positive("p", a.p, kMaxRanks);
  }
  const Placement placement = Placement::parse(a.places);
  if (dry_run()) return;
  const Topology t = !a.synthetic.empty() ? Topology::synthetic(a.synthetic)
                     : !a.xml.empty()     ? Topology::from_xml(a.xml)
                                          : Topology::machine();
  const int ranks = p.value_or(t.pus());
  const std::vector<int> where = t.place(placement, ranks);
  const bool wrapped = t.wraps(placement, ranks);
  if (a.json) {
    print_json(to_json(t, a, where, wrapped));
  } else {
    print_text(t, a, where, wrapped);
  }
}

}  // namespace

void register_topo(CLI::App& app) {
  auto args = std::make_shared<TopoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "topo",
      "Show the hardware hierarchy (packages, NUMA nodes, L3 groups, cores, PUs) from hwloc and where\n"
      "each rank of a team of p would run. PUs are hwloc logical indices (L#); P# is the OS index.");
  CLI::Option* syn = cmd->add_option(
      "--synthetic", args->synthetic,
      "Use an hwloc synthetic topology instead of this machine, e.g. \"pack:2 core:4 pu:2\", levels from\n"
      "the outermost to pu (at most 2048 PUs: hwloc's time grows with the square of a level's objects;\n"
      "it builds it in a child process that must finish within 10 s)")
      ->type_name("DESC");
  CLI::Option* xml = cmd->add_option("--xml", args->xml,
                                     "Use a topology exported by hwloc as XML (lstopo FILE.xml); hwloc reads it in a\n"
                                     "child process, within 10 s, so a file that crashes hwloc is refused with one line")
                          ->type_name("FILE");
  syn->excludes(xml);
  xml->excludes(syn);
  cmd->add_option("--places", args->places,
                  "Placement: compact (rank r on PU r), scatter (spread over packages, then L3 groups and\n"
                  "cores, then the PUs of a core), or a comma-separated PU list such as 0,2,5 or 0-3,8\n"
                  "(PUs 0 to 65535, at most 1048576 places); ranks beyond the places wrap around")
      ->type_name("POLICY|LIST")
      ->capture_default_str();
  cmd->add_option("--p", args->p, "Number of ranks to place (1 to 1048576; default: the number of PUs)")
      ->type_name("N");
  cmd->add_flag("--json", args->json,
                "Print JSON: pus, cores, packages, numa_nodes, l3_groups, source, origin, can_bind, places,\n"
                "p, wrapped, placement (PU of each rank), ranks (per-rank PU/core/L3/NUMA/package), tree");
  cmd->callback([args] { run_topo(*args); });
}

}  // namespace postbox::cli
