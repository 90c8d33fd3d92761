// postbox._postbox: the library's text face for Python. Every function takes its options as the
// CLI's text (python/postbox/__init__.py turns Python numbers into that text) and calls the
// library as tools/cmd_*.cpp do, so results and error messages are the CLI's: an InputError
// becomes a ValueError carrying the one line the CLI prints after "postbox: error: ".
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/emulator/schedule.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/model_report.hpp"
#include "postbox/frontend/noise_parse.hpp"
#include "postbox/frontend/plan_export.hpp"
#include "postbox/frontend/render.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/frontend/sweep.hpp"
#include "postbox/frontend/tree_select.hpp"
#include "postbox/frontend/writers.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

namespace py = pybind11;
using Options = std::map<std::string, std::string>;

namespace postbox {
namespace {

py::object fraction(const Rational& x) {
  return py::module_::import("fractions").attr("Fraction")(x.num(), x.den());
}

template <class T>
py::array_t<T> array(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

template <class T, class F>
auto column(const std::vector<T>& rows, F&& get) {
  using V = decltype(get(rows.front()));
  std::vector<V> out;
  out.reserve(rows.size());
  for (const T& row : rows) out.push_back(get(row));
  return array(out);
}

std::vector<std::string> option_names(const std::vector<SelectionOption>& options) {
  std::vector<std::string> names;
  for (const auto& o : options) names.push_back(o.name);
  return names;
}

// An emulated run (sim): the schedule's names with the simulator's figures.
struct SimRun {
  std::string machine, op, algo;
  int p = 0;
  std::uint64_t bytes = 0;
  sim::SimResult result;
};

SimRun run_sim(const Options& options) {
  Options given = options;
  const std::optional<sim::Noise> noise = sim::take_noise_options(given);
  EmulatedRun run = select_emulated_run(given);
  const sim::Schedule schedule = sim::schedule_of(build_plan(run.request));
  SimRun out;
  out.machine = given.count("machine") != 0 ? given.at("machine") : std::string();
  out.op = schedule.op;
  out.algo = schedule.algo;
  out.p = schedule.p;
  out.bytes = schedule.bytes;
  {
    py::gil_scoped_release release;
    sim::SimOptions opt;
    if (noise) opt.noise = &*noise;
    out.result = sim::simulate(schedule, run.machine, opt);
  }
  return out;
}

struct SweepRun {
  SweepGrid grid;
  SweepResult result;
};

SweepRun run_sweep_text(const Options& base, const std::vector<std::string>& params) {
  SweepRun out;
  out.grid = sweep_grid(base, params);
  py::gil_scoped_release release;
  out.result = run_sweep(out.grid);
  return out;
}

}  // namespace
}  // namespace postbox

PYBIND11_MODULE(_postbox, m) {
  using namespace postbox;
  m.doc() = "postbox's library through its text face (see the postbox package for the documented API)";

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, frontend::error_line(e).c_str());
    }
  });

  m.def("tree_options", [] { return tree_selection_options(); });
  m.def("plan_options", [] { return option_names(plan_selection_options()); });
  m.def("emulated_run_options", [] { return option_names(emulated_run_options()); });

  // ---- trees ----------------------------------------------------------------------------------
  py::class_<Tree>(m, "Tree", "A distribution tree (tree.hpp): who sends to whom, in which order, and when.")
      .def_readonly("shape", &Tree::shape)
      .def_readonly("p", &Tree::p)
      .def_readonly("root", &Tree::root)
      .def_property_readonly("s", [](const Tree& t) { return fraction(t.model.s); })
      .def_property_readonly("r", [](const Tree& t) { return fraction(t.model.r); })
      .def_property_readonly("lambda_", [](const Tree& t) { return fraction(t.model.lambda()); })
      .def_property_readonly("completion", [](const Tree& t) { return fraction(t.completion); })
      .def_property_readonly("parent", [](const Tree& t) { return array(std::vector<std::int64_t>(t.parent.begin(), t.parent.end())); })
      .def_property_readonly("children", [](const Tree& t) { return t.children; })
      .def_property_readonly("time", [](const Tree& t) { return column(t.time, [](const Rational& x) { return x.to_double(); }); })
      .def_property_readonly("time_exact", [](const Tree& t) {
        py::list out;
        for (const Rational& x : t.time) out.append(fraction(x));
        return out;
      })
      .def("ascii", [](const Tree& t) { return render_ascii(t); })
      .def("dot", [](const Tree& t, bool time_layers) {
        RenderOptions ro;
        if (time_layers) ro.layers = TreeLayers::time;
        return render_dot(t, ro);
      }, py::arg("time_layers") = false)
      .def("svg", [](const Tree& t, bool time_layers) {
        RenderOptions ro;
        ro.svg_layout = SvgLayout::builtin;
        if (time_layers) ro.layers = TreeLayers::time;
        return render_svg(t, ro);
      }, py::arg("time_layers") = false)
      .def("json", [](const Tree& t) { return frontend::tree_json(t).dump(2) + "\n"; })
      .def("__repr__", [](const Tree& t) {
        return "Tree(shape='" + t.shape + "', p=" + std::to_string(t.p) + ", root=" + std::to_string(t.root) +
               ", s=" + t.model.s.str() + ", r=" + t.model.r.str() + ", completion=" + t.completion.str() + ")";
      });
  m.def("tree", [](const Options& given) {
    const TreeSelection sel = select_tree(given);
    return build_selected_tree(sel);
  });

  py::class_<TreeComparison>(m, "TreeComparison", "Completion time of every shape for one p and model (tree --compare).")
      .def_readonly("p", &TreeComparison::p)
      .def_property_readonly("s", [](const TreeComparison& c) { return fraction(c.model.s); })
      .def_property_readonly("r", [](const TreeComparison& c) { return fraction(c.model.r); })
      .def_property_readonly("lambda_", [](const TreeComparison& c) { return fraction(c.lambda); })
      .def_property_readonly("shapes", [](const TreeComparison& c) {
        std::vector<std::string> out;
        for (const auto& row : c.rows) out.push_back(row.shape);
        return out;
      })
      .def_property_readonly("completion", [](const TreeComparison& c) {
        return column(c.rows, [](const TreeComparison::Row& row) { return row.completion.to_double(); });
      })
      .def_property_readonly("completion_exact", [](const TreeComparison& c) {
        py::list out;
        for (const auto& row : c.rows) out.append(fraction(row.completion));
        return out;
      })
      .def_property_readonly("ratio", [](const TreeComparison& c) {
        return column(c.rows, [&](const TreeComparison::Row& row) { return c.ratio(row.completion); });
      })
      .def_property_readonly("best", [](const TreeComparison& c) { return fraction(c.best); })
      .def("__repr__", [](const TreeComparison& c) {
        std::string rows;
        for (const auto& row : c.rows) rows += (rows.empty() ? "" : ", ") + row.shape + "=" + row.completion.str();
        return "TreeComparison(p=" + std::to_string(c.p) + ", s=" + c.model.s.str() + ", r=" + c.model.r.str() + ": " + rows + ")";
      });
  m.def("compare_trees", [](const Options& given) { return compare_trees(select_tree_comparison(given)); });

  // ---- the postal and send/receive models -------------------------------------------------------
  py::class_<PostalReport>(m, "PostalReport", "model postal: T_lambda(n), gamma, the legal alpha range, N_lambda's steps.")
      .def_property_readonly("lambda_", [](const PostalReport& r) { return fraction(r.lambda); })
      .def_readonly("n", &PostalReport::n)
      .def_property_readonly("T", [](const PostalReport& r) { return fraction(r.T); })
      .def_readonly("gamma", &PostalReport::gamma)
      .def_property_readonly("lcm", [](const PostalReport& r) { return r.scale.u; })
      .def_property_readonly("f", [](const PostalReport& r) { return r.scale.f; })
      .def_property_readonly("n_min", [](const PostalReport& r) { return r.range ? py::cast(r.range->n_min) : py::none(); })
      .def_property_readonly("n_max", [](const PostalReport& r) { return r.range ? py::cast(r.range->n_max) : py::none(); })
      .def_property_readonly("alpha_min", [](const PostalReport& r) { return r.range ? fraction(r.range->alpha_min()) : py::none(); })
      .def_property_readonly("alpha_max", [](const PostalReport& r) { return r.range ? fraction(r.range->alpha_max()) : py::none(); })
      .def_property_readonly("N_times", [](const PostalReport& r) { return column(r.steps, [](const NStep& s) { return s.t.to_double(); }); })
      .def_property_readonly("N", [](const PostalReport& r) { return column(r.steps, [](const NStep& s) { return s.N; }); })
      .def("__repr__", [](const PostalReport& r) {
        return "PostalReport(lambda_=" + r.lambda.str() + ", n=" + std::to_string(r.n) + ", T=" + r.T.str() + ")";
      });
  m.def("postal", [](const std::string& lambda, const std::string& n) { return postal_report(select_postal(lambda, n)); });

  py::class_<FiboReport>(m, "FiboReport", "model fibo: Cordsen's f(t) at t = 0, 1, ..., and the step that reaches p.")
      .def_property_readonly("s", [](const FiboReport& r) { return fraction(r.s); })
      .def_property_readonly("r", [](const FiboReport& r) { return fraction(r.r); })
      .def_property_readonly("f", [](const FiboReport& r) { return array(r.f); })
      .def_readonly("p", &FiboReport::p)
      .def_property_readonly("steps", [](const FiboReport& r) { return r.p ? py::cast(r.steps) : py::none(); })
      .def_property_readonly("time", [](const FiboReport& r) { return r.p ? fraction(r.time) : py::none(); })
      .def("__repr__", [](const FiboReport& r) {
        return "FiboReport(s=" + r.s.str() + ", r=" + r.r.str() + ", t=0.." + std::to_string(r.f.size() - 1) +
               (r.p ? ", p=" + std::to_string(*r.p) + ", steps=" + std::to_string(r.steps) : std::string()) + ")";
      });
  m.def("fibo", [](const std::string& s, const std::string& r, const std::optional<std::string>& p,
                   const std::optional<std::string>& t) { return fibo_report(select_fibo(s, r, p, t)); });

  py::class_<AlphaRangesReport>(m, "AlphaRanges", "model alpha-ranges: the legal alpha per n and the look-up table.")
      .def_property_readonly("lambda_", [](const AlphaRangesReport& r) { return fraction(r.lambda); })
      .def_property_readonly("n", [](const AlphaRangesReport& r) { return column(r.ranges, [](const AlphaRange& a) { return a.n; }); })
      .def_property_readonly("n_min", [](const AlphaRangesReport& r) { return column(r.ranges, [](const AlphaRange& a) { return a.n_min; }); })
      .def_property_readonly("n_max", [](const AlphaRangesReport& r) { return column(r.ranges, [](const AlphaRange& a) { return a.n_max; }); })
      .def_property_readonly("alpha_min", [](const AlphaRangesReport& r) {
        return column(r.ranges, [](const AlphaRange& a) { return a.alpha_min().to_double(); });
      })
      .def_property_readonly("alpha_max", [](const AlphaRangesReport& r) {
        return column(r.ranges, [](const AlphaRange& a) { return a.alpha_max().to_double(); });
      })
      .def_property_readonly("lookup_n_upper", [](const AlphaRangesReport& r) {
        return column(r.table, [](const AlphaTableEntry& e) { return e.n_upper; });
      })
      .def_property_readonly("lookup_alpha", [](const AlphaRangesReport& r) {
        py::list out;
        for (const auto& e : r.table) out.append(fraction(e.alpha));
        return out;
      })
      .def_property_readonly("top_n", [](const AlphaRangesReport& r) { return column(r.tops, [](const TriangleTop& t) { return t.n; }); })
      .def_property_readonly("top_alpha", [](const AlphaRangesReport& r) {
        return column(r.tops, [](const TriangleTop& t) { return t.alpha().to_double(); });
      });
  m.def("alpha_ranges", [](const std::string& lambda, const std::string& n_max) {
    return alpha_ranges_report(select_alpha_ranges(lambda, n_max));
  });

  m.def("breakeven", [](const std::string& max_floor) {
    const std::vector<BreakevenRow> rows = breakeven_report(select_breakeven(max_floor));
    py::dict out;
    out["floor"] = column(rows, [](const BreakevenRow& r) { return static_cast<std::int64_t>(r.floor_lambda); });
    out["gamma"] = column(rows, [](const BreakevenRow& r) { return r.gamma; });
    out["break_even"] = column(rows, [](const BreakevenRow& r) { return r.break_even; });
    return out;
  });

  // The bare functions of postal.hpp, their arguments named as the CLI's options.
  m.def("N_lambda", [](const std::string& lambda, const std::string& t) {
    return N_lambda(parse_lambda_option(lambda), Rational::parse(t, "--t"));
  });
  m.def("T_lambda", [](const std::string& lambda, const std::string& n) {
    return fraction(T_lambda(parse_lambda_option(lambda), parse_int(n, "--n", 1)));
  });
  m.def("gamma", [](const std::string& lambda) { return gamma_lambda(parse_lambda_option(lambda).to_double()); });
  m.def("fibo_f", [](const std::string& s, const std::string& r, const std::string& t) {
    return fibo_f(parse_s_option(s), parse_r_option(r), Rational::parse(t, "--t"));
  });

  // ---- plans and the emulator -------------------------------------------------------------------
  m.def("plan_export", [](const Options& given, const std::string& format, const std::optional<std::string>& machine) {
    return export_plan(select_plan_export(given, format, machine));
  });

  py::class_<SimRun>(m, "SimResult", "An emulated run (sim): the schedule and the simulator's figures.")
      .def_readonly("machine", &SimRun::machine)
      .def_readonly("op", &SimRun::op)
      .def_readonly("algo", &SimRun::algo)
      .def_readonly("p", &SimRun::p)
      .def_readonly("bytes", &SimRun::bytes)
      .def_property_readonly("time_us", [](const SimRun& s) { return s.result.time_us; })
      .def_property_readonly("time_ticks", [](const SimRun& s) { return static_cast<std::int64_t>(s.result.time_ticks); })
      .def_property_readonly("messages", [](const SimRun& s) { return s.result.messages; })
      .def_property_readonly("events", [](const SimRun& s) { return s.result.events; })
      .def_property_readonly("max_waiting_events", [](const SimRun& s) { return s.result.max_waiting_events; })
      .def_property_readonly("packets", [](const SimRun& s) { return s.result.packets; })
      .def_property_readonly("inline_steps", [](const SimRun& s) { return s.result.inline_steps; })
      .def_property_readonly("channel_waits", [](const SimRun& s) { return s.result.channel_waits; })
      .def_property_readonly("channel_ties", [](const SimRun& s) { return s.result.channel_ties; })
      .def_property_readonly("per_rank_us", [](const SimRun& s) { return array(s.result.per_rank_us); })
      .def_property_readonly("noise_us", [](const SimRun& s) { return s.result.noise_us; })
      .def("__repr__", [](const SimRun& s) {
        return "SimResult(machine='" + s.machine + "', op='" + s.op + "', algo='" + s.algo + "', p=" + std::to_string(s.p) +
               ", bytes=" + std::to_string(s.bytes) + ", time_us=" + py::repr(py::float_(s.result.time_us)).cast<std::string>() + ")";
      });
  m.def("sim", &run_sim);

  py::class_<SweepRun>(m, "SweepResult", "The emulated run over a grid of options (sweep).")
      .def_property_readonly("machine", [](const SweepRun& s) { return s.grid.base.at("machine"); })
      .def_property_readonly("options", [](const SweepRun& s) { return s.grid.base; })
      .def_property_readonly("op", [](const SweepRun& s) { return s.result.first.op; })
      .def_property_readonly("p", [](const SweepRun& s) { return s.result.first.p; })
      .def_property_readonly("bytes", [](const SweepRun& s) { return s.result.first.bytes; })
      .def_property_readonly("names", [](const SweepRun& s) {
        std::vector<std::string> out;
        for (const auto& param : s.grid.params) out.push_back(param.name);
        return out;
      })
      .def_property_readonly("values_text", [](const SweepRun& s) {
        std::vector<std::vector<std::string>> out(s.grid.size());
        for (std::size_t i = 0; i < out.size(); ++i)
          for (std::size_t k = 0; k < s.grid.params.size(); ++k) out[i].push_back(s.grid.value(i, k));
        return out;
      })
      .def_property_readonly("values", [](const SweepRun& s) {
        const auto rows = static_cast<py::ssize_t>(s.grid.size());
        const auto cols = static_cast<py::ssize_t>(s.grid.params.size());
        py::array_t<double> a({rows, cols});
        auto v = a.mutable_unchecked<2>();
        for (py::ssize_t i = 0; i < rows; ++i)
          for (py::ssize_t k = 0; k < cols; ++k)
            v(i, k) = parse_real(s.grid.value(static_cast<std::size_t>(i), static_cast<std::size_t>(k)), "value");
        return a;
      })
      .def_property_readonly("time_us", [](const SweepRun& s) { return array(s.result.time_us); })
      .def_property_readonly("events", [](const SweepRun& s) { return array(s.result.events); })
      .def("__repr__", [](const SweepRun& s) {
        std::string names;
        for (const auto& param : s.grid.params) names += (names.empty() ? "" : ", ") + param.name;
        return "SweepResult(machine='" + s.grid.base.at("machine") + "', " + std::to_string(s.grid.size()) +
               " configurations over " + names + ")";
      });
  m.def("sweep", &run_sweep_text);
}
