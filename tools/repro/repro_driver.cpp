// postbox-repro: the driver behind tools/repro.sh for the Hambrusch & Khokhar (C³) and s-to-p
// reproductions. It builds the plans with build_c3_plan / build_s2p_plan directly and runs them on
// the emulator (postbox::sim::simulate), a grid of configurations in parallel with oneTBB; results
// are stored by grid index, so the output does not depend on scheduling. `plot` draws any CSV it
// (or awk) wrote with the project's SVG writer.
//
//   postbox-repro c3  --op OP --algos A,B,... --L 16,64,... [--p 256] [--mesh 16x16]
//                     [--machine delta] [--sends nb|b]
//       CSV: algo,L,comm_units,comp_units,time_us
//   postbox-repro s2p --machine M --mesh RxC[,RxC...] --algos A,... --dists D,... --sources 1,2,...
//                     --bytes 32,... [--seed S]
//       CSV: mesh,algo,dist,s,bytes,time_us
//   postbox-repro plot --csv FILE --x COL --y COL [--series COL,...] [--log2x] [--yscale K] [--title T]
//                     [--xlabel T] [--ylabel T] [--xmin X] [--xmax X] [--ymin Y] [--ymax Y]
//                     [--points SERIES,...] --out FILE.svg
#include <tbb/parallel_for.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "postbox/collectives/c3.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/frontend/svg_plot.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/emulator/simulator.hpp"

namespace postbox::internal {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

std::uint64_t parse_u64(const std::string& what, const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || v < 0)
    throw InputError(what + ": '" + text + "' is not a non-negative integer");
  return static_cast<std::uint64_t>(v);
}

std::vector<std::uint64_t> parse_list(const std::string& what, const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const auto& t : split(text, ',')) out.push_back(parse_u64(what, t));
  if (out.empty()) throw InputError(what + " is empty");
  return out;
}

// Fixed six decimals without trailing zeros: byte-stable CSV, exact for the µs times we print.
std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// Runs f(i) for i in [0, n) in parallel; the first InputError (by index) is rethrown.
template <class F>
void parallel_grid(std::size_t n, F f) {
  std::vector<std::string> error(n);
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
    try {
      f(i);
    } catch (const InputError& e) {
      error[i] = e.what();
    }
  });
  for (const auto& e : error)
    if (!e.empty()) throw InputError(e);
}

sim::Machine mesh_machine(const std::string& name, const Mesh& mesh) {
  sim::Machine m = sim::load_machine(name);
  if (m.kind != sim::ModelKind::mesh) throw InputError("--machine '" + name + "' is not a mesh profile");
  m.mesh.dims = {mesh.rows, mesh.cols};
  m.placement = sim::Placement{};  // row-major: rank = row·cols + col, as the plans assume
  return m;
}

struct C3Args {
  std::string op, algos, L, mesh = "16x16", machine = "delta", sends = "nb";
  int p = 256;
};

void run_c3(const C3Args& a) {
  const Mesh mesh = parse_mesh(a.mesh);
  if (mesh.p() != a.p) throw InputError("--mesh " + a.mesh + " does not have --p " + std::to_string(a.p) + " nodes");
  const auto algos = split(a.algos, ',');
  if (algos.empty()) throw InputError("--algos is empty");
  const auto sizes = parse_list("--L", a.L);
  sim::Machine m = mesh_machine(a.machine, mesh);
  C3Machine units = C3Machine::delta();
  if (a.sends == "nb") {
    m.send_mode = sim::SendMode::nonblocking;
    units.sends = SendMode::nonblocking;
  } else if (a.sends == "b") {
    m.send_mode = sim::SendMode::blocking;
    units.sends = SendMode::blocking;
  } else {
    throw InputError("--sends must be nb or b, got '" + a.sends + "'");
  }
  const std::size_t n = algos.size() * sizes.size();
  std::vector<C3Units> u(n);
  std::vector<double> t(n);
  parallel_grid(n, [&](std::size_t i) {
    const Plan plan = build_c3_plan(C3Request{a.op, algos[i / sizes.size()], a.p, sizes[i % sizes.size()], 0, mesh});
    u[i] = c3_units(plan, units, mesh);
    t[i] = sim::simulate(plan, m).time_us;
  });
  std::printf("algo,L,comm_units,comp_units,time_us\n");
  for (std::size_t i = 0; i < n; ++i)
    std::printf("%s,%llu,%s,%s,%s\n", algos[i / sizes.size()].c_str(),
                static_cast<unsigned long long>(sizes[i % sizes.size()]), num(u[i].comm_units).c_str(),
                num(u[i].comp_units).c_str(), num(t[i]).c_str());
}

struct S2PArgs {
  std::string machine = "paragon", meshes, algos, dists, sources, bytes;
  std::uint64_t seed = 1;
};

void run_s2p(const S2PArgs& a) {
  std::vector<Mesh> meshes;
  for (const auto& t : split(a.meshes, ',')) meshes.push_back(parse_mesh(t));
  const auto algos = split(a.algos, ',');
  const auto dists = split(a.dists, ',');
  const auto ss = parse_list("--sources", a.sources);
  const auto bs = parse_list("--bytes", a.bytes);
  if (meshes.empty() || algos.empty() || dists.empty()) throw InputError("--mesh, --algos and --dists must not be empty");
  struct Cell {
    std::size_t mesh, algo, dist, s, b;
  };
  std::vector<Cell> grid;
  for (std::size_t mi = 0; mi < meshes.size(); ++mi)
    for (std::size_t ai = 0; ai < algos.size(); ++ai)
      for (std::size_t di = 0; di < dists.size(); ++di)
        for (std::size_t si = 0; si < ss.size(); ++si)
          for (std::size_t bi = 0; bi < bs.size(); ++bi) grid.push_back({mi, ai, di, si, bi});
  std::vector<sim::Machine> machines;
  for (const auto& me : meshes) machines.push_back(mesh_machine(a.machine, me));
  std::vector<double> t(grid.size());
  parallel_grid(grid.size(), [&](std::size_t i) {
    const Cell& c = grid[i];
    const Mesh& me = meshes[c.mesh];
    const auto s = static_cast<int>(ss[c.s]);
    if (s < 1 || s > me.p())
      throw InputError("--sources " + std::to_string(s) + " is outside 1.." + std::to_string(me.p()));
    const auto sources = source_distribution(dists[c.dist], me, s, a.seed);
    const Plan plan = build_s2p_plan(S2PRequest{algos[c.algo], me, sources, bs[c.b]});
    t[i] = sim::simulate(plan, machines[c.mesh]).time_us;
  });
  std::printf("mesh,algo,dist,s,bytes,time_us\n");
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const Cell& c = grid[i];
    std::printf("%dx%d,%s,%s,%llu,%llu,%s\n", meshes[c.mesh].rows, meshes[c.mesh].cols, algos[c.algo].c_str(),
                dists[c.dist].c_str(), static_cast<unsigned long long>(ss[c.s]),
                static_cast<unsigned long long>(bs[c.b]), num(t[i]).c_str());
  }
}

struct PlotArgs {
  std::string csv, x, y, series, title, xlabel, ylabel, out;
  bool log2x = false;
  double yscale = 1;
  std::optional<double> xmin, xmax, ymin, ymax;
  std::string points;  // series drawn as markers only
};

void run_plot(const PlotArgs& a) {
  std::ifstream in(a.csv);
  if (!in) throw InputError("cannot read --csv " + a.csv);
  std::string line;
  if (!std::getline(in, line)) throw InputError("--csv " + a.csv + " is empty");
  const auto header = split(line, ',');
  const auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    throw InputError("--csv " + a.csv + " has no column '" + name + "'");
  };
  const std::size_t xc = col(a.x), yc = col(a.y);
  std::vector<std::size_t> sc;
  for (const auto& s : split(a.series, ',')) sc.push_back(col(s));
  svg::Plot plot;
  plot.title = a.title;
  plot.x_label = a.xlabel.empty() ? a.x : a.xlabel;
  plot.y_label = a.ylabel.empty() ? a.y : a.ylabel;
  plot.y_min = a.ymin;
  plot.y_max = a.ymax;
  plot.x_min = a.xmin;
  plot.x_max = a.xmax;
  const auto marker_only = split(a.points, ',');
  std::map<std::string, std::size_t> index;  // series key → position in plot.series (first appearance)
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::string cur;
    std::istringstream ls(line);
    while (std::getline(ls, cur, ',')) cells.push_back(cur);
    if (cells.size() != header.size()) throw InputError("--csv " + a.csv + ": a row has the wrong number of cells");
    std::string key;
    for (std::size_t k = 0; k < sc.size(); ++k) key += (k ? " " : "") + cells[sc[k]];
    auto [it, fresh] = index.emplace(key, plot.series.size());
    if (fresh) {
      svg::Series s;
      s.label = key;
      s.style = svg::Series::Style::line_points;
      for (const auto& m : marker_only)
        if (m == key) {
          s.style = svg::Series::Style::points;
          s.point_radius = 4.5;
        }
      plot.series.push_back(s);
    }
    double x = std::strtod(cells[xc].c_str(), nullptr);
    if (a.log2x) x = std::log2(x);
    plot.series[it->second].x.push_back(x);
    plot.series[it->second].y.push_back(a.yscale * std::strtod(cells[yc].c_str(), nullptr));
  }
  svg::write(plot, a.out);
}

int main_impl(int argc, char** argv) {
  CLI::App app{"postbox-repro: the C³ and s-to-p reproductions on the emulator (driver of tools/repro.sh)"};
  app.require_subcommand(1);
  C3Args c3;
  auto* c3c = app.add_subcommand("c3", "C³ units and emulated time of routing algorithms against message size L");
  c3c->add_option("--op", c3.op, "one-to-one, one-to-all, all-to-one or all-to-all")->required();
  c3c->add_option("--algos", c3.algos, "comma-separated algorithm names (postbox c3)")->required();
  c3c->add_option("--L", c3.L, "comma-separated message sizes in bytes")->required();
  c3c->add_option("--p", c3.p, "ranks (default 256)");
  c3c->add_option("--mesh", c3.mesh, "RxC, rows·cols = p; the emulated machine's mesh too (default 16x16)");
  c3c->add_option("--machine", c3.machine, "mesh profile for the emulated time (default delta)");
  c3c->add_option("--sends", c3.sends, "nb (isend, the paper's experiments) or b (csend); default nb");
  S2PArgs s2;
  auto* s2c = app.add_subcommand("s2p", "emulated time of s-to-p broadcasts over a grid of configurations");
  s2c->add_option("--machine", s2.machine, "mesh profile (default paragon)");
  s2c->add_option("--mesh", s2.meshes, "comma-separated RxC meshes")->required();
  s2c->add_option("--algos", s2.algos, "comma-separated s-to-p algorithms")->required();
  s2c->add_option("--dists", s2.dists, "comma-separated source distributions")->required();
  s2c->add_option("--sources", s2.sources, "comma-separated source counts s")->required();
  s2c->add_option("--bytes", s2.bytes, "comma-separated message sizes L in bytes")->required();
  s2c->add_option("--seed", s2.seed, "seed of the random distribution (default 1)");
  PlotArgs pl;
  auto* plc = app.add_subcommand("plot", "an SVG line plot of a CSV file, a series per value of --series");
  plc->add_option("--csv", pl.csv, "input CSV with a header row")->required();
  plc->add_option("--x", pl.x, "column for the x axis")->required();
  plc->add_option("--y", pl.y, "column for the y axis")->required();
  plc->add_option("--series", pl.series, "comma-separated columns whose values name a series");
  plc->add_flag("--log2x", pl.log2x, "plot log2 of x");
  plc->add_option("--yscale", pl.yscale, "multiply y by this factor (e.g. 0.001: µs to ms)");
  plc->add_option("--title", pl.title, "plot title");
  plc->add_option("--xlabel", pl.xlabel, "x axis label (default: the column name)");
  plc->add_option("--ylabel", pl.ylabel, "y axis label (default: the column name)");
  plc->add_option("--xmin", pl.xmin, "left end of the x axis (default: from the data)");
  plc->add_option("--xmax", pl.xmax, "right end of the x axis (default: from the data)");
  plc->add_option("--points", pl.points, "comma-separated series drawn as markers only (e.g. a paper's values)");
  plc->add_option("--ymin", pl.ymin, "lower end of the y axis (default: from the data)");
  plc->add_option("--ymax", pl.ymax, "upper end of the y axis; lines above it are clipped (default: from the data)");
  plc->add_option("--out", pl.out, "output SVG file")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*c3c) run_c3(c3);
    if (*s2c) run_s2p(s2);
    if (*plc) run_plot(pl);
  } catch (const InputError& e) {
    std::fprintf(stderr, "postbox-repro: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace postbox::internal

int main(int argc, char** argv) { return postbox::internal::main_impl(argc, argv); }
