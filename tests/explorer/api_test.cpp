#include "postbox/explorer/api.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/frontend/plan_export.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/postal.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::explorer {
namespace {

using nlohmann::json;

json ok(const Api& api, const std::string& name, const Query& q) {
  const Reply r = api.handle(name, q);
  EXPECT_EQ(r.status, 200) << name << ": " << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  return r.status == 200 ? json::parse(r.body) : json();
}

// A planner for the tests, from the library alone: the profile's machine and a plan built for its
// nominal λ (the CLI passes `postbox sim`'s own selection instead; the browser test compares that
// one with the CLI's output).
SimSetup test_planner(const SimRequest& r) {
  SimSetup s;
  s.machine = sim::load_machine(r.machine);
  if (!r.mesh.empty()) s.machine.mesh.dims = sim::parse_dims(r.mesh, "--mesh");
  PlanRequest req;
  req.op = r.op;
  req.algo = r.algo;
  req.p = r.p;
  req.bytes = r.bytes;
  const double l = s.machine.kind == sim::ModelKind::mesh ? 2.0 : sim::nominal_lambda(s.machine, 8);
  req.lambda = Rational(static_cast<std::int64_t>(std::llround(l * 1000)), 1000);
  s.plan = build_plan(req);
  return s;
}

Api& api() {
  static Api a = [] {
    Api x;
    x.set_sim_planner(test_planner);
    return x;
  }();
  return a;
}

// ---- trees ----------------------------------------------------------------------------------------

TEST(ExplorerTree, CordsenFig9AndBinomial) {
  // Cordsen §4.3: p = 64, s = 1, r = 3: the Fibo-tree finishes at 15, binomial at 24.
  const json fibo = ok(api(), "tree", {{"shape", "fibo"}, {"p", "64"}, {"s", "1"}, {"r", "3"}});
  EXPECT_EQ(fibo["completion"], 15);
  EXPECT_EQ(fibo["nodes"].size(), 64u);
  EXPECT_EQ(fibo["optimum"]["value"], 15);
  EXPECT_EQ(fibo["lambda"], 4);
  const json bin = ok(api(), "tree", {{"shape", "binomial"}, {"p", "64"}, {"s", "1"}, {"r", "3"}});
  EXPECT_EQ(bin["completion"], 24);
  EXPECT_EQ(bin["optimum"]["value"], 15);
  // The complete 2-level 8-ary tree of 73 ranks: the paper's 22.
  EXPECT_EQ(ok(api(), "tree", {{"shape", "kary:8"}, {"p", "73"}, {"s", "1"}, {"r", "3"}})["completion"], 22);
  // Bruck Fig. 2: the λ-tree for n = 8, λ = 2, five steps.
  EXPECT_EQ(ok(api(), "tree", {{"shape", "lambda"}, {"p", "8"}, {"lambda", "2"}})["completion"], 5);
}

TEST(ExplorerTree, NodesAreTheLibrarysTree) {
  struct Row {
    const char* shape;
    int p;
    int root;
    const char* s;
    const char* r;
  };
  for (const Row& row : {Row{"fibo", 19, 0, "27", "88"}, Row{"lambda:0.4", 50, 7, "1", "0.8"},
                         Row{"greedy", 100, 99, "2", "3"}, Row{"kary:3", 40, 5, "1.5", "0"}}) {
    SCOPED_TRACE(row.shape);
    const json j = ok(api(), "tree", {{"shape", row.shape}, {"p", std::to_string(row.p)}, {"root", std::to_string(row.root)},
                                      {"s", row.s}, {"r", row.r}});
    const SendRecv m{Rational::parse(row.s), Rational::parse(row.r)};
    const Tree t = build_tree(ShapeSpec::parse(row.shape), row.p, row.root, m);
    EXPECT_EQ(j["completion_exact"], t.completion.str());
    EXPECT_EQ(j["root"], row.root);
    ASSERT_EQ(j["nodes"].size(), static_cast<std::size_t>(row.p));
    for (int v = 0; v < row.p; ++v) {
      const json& n = j["nodes"][static_cast<std::size_t>(v)];
      const auto i = static_cast<std::size_t>(v);
      EXPECT_EQ(n["parent"], t.parent[i]);
      EXPECT_EQ(n["children"], t.children[i]);
      EXPECT_DOUBLE_EQ(n["time"].get<double>(), t.time[i].to_double());
      if (t.parent[i] < 0) {
        EXPECT_TRUE(n["send_start"].is_null());
      } else {
        // The edge label is when the parent starts this send: s + r before the child is active.
        EXPECT_DOUBLE_EQ(n["send_start"].get<double>(), (t.time[i] - m.s - m.r).to_double());
      }
    }
  }
}

TEST(ExplorerTree, AlphaAndHierAsTheCliTakesThem) {
  const json a = ok(api(), "tree", {{"shape", "lambda"}, {"p", "30"}, {"lambda", "2"}, {"alpha", "0.25"}});
  EXPECT_EQ(a["shape"], ShapeSpec::parse("lambda:0.25").name());
  const json h = ok(api(), "tree", {{"shape", "hier:fibo,binomial"}, {"p", "8"}, {"synthetic", "pack:2 core:2 pu:2"},
                                    {"places", "scatter"}});
  EXPECT_EQ(h["topology"], "pack:2 core:2 pu:2");
  EXPECT_EQ(h["nodes"].size(), 8u);
}

TEST(ExplorerTree, CompareAndScaling) {
  const json c = ok(api(), "compare", {{"p", "64"}, {"s", "1"}, {"r", "3"}});
  ASSERT_EQ(c["rows"].size(), 8u);
  EXPECT_EQ(c["best"]["value"], 15);
  for (const json& row : c["rows"]) {
    const Tree t = build_tree(ShapeSpec::parse(row["shape"].get<std::string>()), 64, 0, SendRecv{1, 3});
    EXPECT_EQ(row["exact"], t.completion.str()) << row["shape"];
    EXPECT_EQ(row["best"], t.completion == Rational(15));
  }
  const json s = ok(api(), "scaling", {{"shapes", "binomial;fibo"}, {"p-max", "600"}, {"lambda", "2"}});
  const auto& ps = s["p"];
  EXPECT_LE(ps.size(), 257u);
  EXPECT_EQ(ps.front(), 1);
  EXPECT_EQ(ps.back(), 600);
  for (std::size_t i = 0; i < ps.size(); i += 37) {
    const int p = ps[i];
    EXPECT_DOUBLE_EQ(s["series"][1]["completion"][i].get<double>(),
                     build_tree(ShapeSpec::parse("fibo"), p, 0, SendRecv::from_lambda(2)).completion.to_double());
    EXPECT_DOUBLE_EQ(s["optimum"][i].get<double>(), T_lambda(Rational(2), p).to_double());
  }
}

// ---- the postal model -----------------------------------------------------------------------------

TEST(ExplorerPostal, BruckNumbers) {
  const json p = ok(api(), "postal", {{"lambda", "2"}, {"n", "8"}});
  EXPECT_EQ(p["T"]["value"], 5);
  EXPECT_EQ(p["N"], json({1, 2, 3, 5, 8}));
  const json p13 = ok(api(), "postal", {{"lambda", "2"}, {"n", "13"}});
  EXPECT_EQ(p13["range"]["n_min"], 8);  // n = 13: the only optimal split is (8, 5)
  EXPECT_EQ(p13["range"]["n_max"], 8);
  EXPECT_EQ(ok(api(), "postal", {{"lambda", "9/5"}, {"n", "100"}})["T"]["exact"], "51/5");
  EXPECT_TRUE(ok(api(), "postal", {{"lambda", "2"}, {"n", "1"}})["range"].is_null());

  const json a = ok(api(), "alpha-ranges", {{"lambda", "2"}, {"n-max", "250"}});
  ASSERT_EQ(a["ranges"].size(), 249u);
  EXPECT_EQ(a["ranges"][12]["n"], 14);
  EXPECT_EQ(a["ranges"][12]["n_min"], 6);
  EXPECT_EQ(a["ranges"][12]["n_max"], 13);
  EXPECT_EQ(a["lookup_table"].size(), 1u);  // Fig. 6: for λ = 2 one α serves every n <= 250
  for (const json& t : a["tops"]) EXPECT_LE(t["n"].get<int>(), 250);
  EXPECT_GT(ok(api(), "alpha-ranges", {{"lambda", "1.95"}, {"n-max", "250"}})["lookup_table"].size(), 1u);  // Fig. 7

  const json b = ok(api(), "breakeven", {});
  ASSERT_EQ(b["rows"].size(), 9u);  // the CLI's default, Table 2's rows
  EXPECT_NEAR(b["rows"][0]["break_even"].get<double>(), 1.440420, 1e-6);
  EXPECT_NEAR(b["rows"][1]["gamma"].get<double>(), 1.618034, 1e-6);
}

TEST(ExplorerPostal, CombineIsTheAllreducesSchedule) {
  for (const char* lambda : {"2", "2.5", "1.2", "3.9"}) {
    SCOPED_TRACE(lambda);
    const json c = ok(api(), "combine", {{"lambda", lambda}, {"n", "37"}});
    const Rational l = Rational::parse(lambda);
    const PostalChoice choice = choose_postal(l, 37);
    const PostalSchedule sched = postal_schedule(37, choice.L);
    EXPECT_EQ(c["variant"], choice.variant);
    EXPECT_EQ(c["L"], choice.L);
    EXPECT_EQ(c["rounds"], sched.t);
    EXPECT_EQ(c["N"], json(sched.N));
    EXPECT_EQ(c["N"].back(), 37);
    EXPECT_EQ(c["delay_receive"]["exact"], T_delay_receive(l, 37).str());
    EXPECT_EQ(c["delay_send"]["exact"], T_delay_send(l, 37).str());
  }
}

// ---- this machine and the emulator ------------------------------------------------------------------

TEST(ExplorerMachine, TopologyCalibrationMachines) {
  const json t = ok(api(), "topo", {});
  EXPECT_EQ(t["pus"], Topology::machine().pus());
  EXPECT_EQ(t["tree"][0]["kind"], "Machine");
  const json c = ok(api(), "calibration", {});
  EXPECT_GT(c["s_ns"].get<double>(), 0);
  EXPECT_EQ(c["tree_query"]["p"], Topology::machine().pus());
  // The tree query is one the tree endpoint takes.
  ok(api(), "tree", {{"shape", "fibo"}, {"p", "16"}, {"s", c["tree_query"]["s"]}, {"r", c["tree_query"]["r"]}});
  const json m = ok(api(), "machines", {});
  std::vector<std::string> names;
  for (const json& p : m["profiles"]) names.push_back(p["name"]);
  for (const char* want : {"delta", "manna", "paragon", "t3d"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  EXPECT_EQ(m["measured"].get<std::string>().rfind("sr:", 0), 0u);
  EXPECT_NO_THROW(sim::load_machine(m["measured"].get<std::string>()));
  EXPECT_EQ(m["algorithms"].size(), list_plan_builders().size());
}

TEST(ExplorerSim, RunIsTheEmulatorsRun) {
  const json j = ok(api(), "sim", {{"machine", "manna"}, {"op", "bcast"}, {"algo", "fibo"}, {"p", "19"}, {"bytes", "4"}});
  const SimRequest r = parse_sim_request({{"machine", "manna"}, {"op", "bcast"}, {"algo", "fibo"}, {"p", "19"}, {"bytes", "4"}});
  const SimSetup s = test_planner(r);
  const sim::SimResult res = sim::simulate(s.plan, s.machine);
  EXPECT_DOUBLE_EQ(j["time_us"].get<double>(), res.time_us);
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", res.time_us);
  EXPECT_EQ(j["time_text"], text);
  EXPECT_EQ(j["time_unit"], "us");
  EXPECT_EQ(j["messages"], 18);
  EXPECT_EQ(j["per_rank_us"].size(), 19u);
  EXPECT_TRUE(j["mesh"].is_null());
  EXPECT_EQ(j["command"], "postbox sim --machine manna --op bcast --algo fibo --p 19 --bytes 4");
  EXPECT_FALSE(j["rank_spans"].empty());
  EXPECT_EQ(ok(api(), "sim", {{"machine", "postal:2"}, {"p", "8"}})["time_unit"], "units of one send");
}

TEST(ExplorerSim, MeshHeatMapSumsTheLinkSpans) {
  const Query q{{"machine", "delta"}, {"op", "bcast"}, {"algo", "binomial"}, {"p", "16"}, {"bytes", "2048"}, {"mesh", "4x4"}};
  const json j = ok(api(), "sim", q);
  ASSERT_TRUE(j["mesh"].is_object());
  EXPECT_EQ(j["mesh"]["dims"], json({4, 4}));
  EXPECT_EQ(j["mesh"]["rank_nodes"].size(), 16u);
  const json& links = j["mesh"]["links"];
  ASSERT_FALSE(links.empty());
  std::vector<double> busy(links.size(), 0.0);
  for (const json& s : j["link_spans"]) busy[s[0].get<std::size_t>()] += s[2].get<double>() - s[1].get<double>();
  for (std::size_t i = 0; i < links.size(); ++i) {
    EXPECT_NEAR(links[i]["busy_us"].get<double>(), busy[i], 1e-9) << links[i]["name"];
    EXPECT_GE(links[i]["occupancy"].get<double>(), 0.0);
    EXPECT_LE(links[i]["occupancy"].get<double>(), 1.0 + 1e-12);
    EXPECT_GE(links[i]["node"].get<int>(), 0);
    EXPECT_LT(links[i]["node"].get<int>(), 16);
    const std::string kind = links[i]["kind"];
    EXPECT_TRUE(kind == "link" || kind == "inject" || kind == "eject") << kind;
    if (kind == "link") {
      EXPECT_EQ(links[i]["dir"].get<std::string>().size(), 2u);
    }
  }
  // Spans beyond the budget are left out and said so.
  SimRequest r = parse_sim_request(q);
  const json cut = emulated_run_json(r, test_planner(r), 10);
  EXPECT_EQ(cut["rank_spans"].size() + cut["link_spans"].size(), 10u);
  EXPECT_TRUE(cut["spans_truncated"]);
  EXPECT_FALSE(j["spans_truncated"]);
}

TEST(ExplorerSim, MessageLimit) {
  // No request the parser lets through reaches it today, so the plan is given directly.
  SimRequest r;
  r.machine = "postal:2";
  r.op = "allreduce";
  r.algo = "recursive-doubling";
  r.p = 16384;
  SimSetup s;
  s.machine = sim::load_machine(r.machine);
  PlanRequest req;
  req.op = r.op;
  req.algo = r.algo;
  req.p = r.p;
  req.bytes = 8;
  req.elem_bytes = 8;
  s.plan = build_plan(req);
  try {
    (void)emulated_run_json(r, s);
    FAIL() << "a plan of " << r.p << " ranks' recursive doubling went through";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("the plan sends 229376 messages, more than the explorer's 100000", 0), 0u)
        << e.what();
  }
}

TEST(ExplorerSim, TraceIsAChromeTraceDownload) {
  const Reply r = api().handle("trace", {{"machine", "delta"}, {"p", "4"}, {"mesh", "2x2"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.download_name, "postbox-delta-bcast-binomial-p4.json");
  EXPECT_FALSE(json::parse(r.body)["traceEvents"].empty());
}

TEST(ExplorerSim, CommandLineQuotesWhatAShellWouldSplit) {
  SimRequest r;
  r.machine = "it's";
  r.p = 4;
  r.alpha = Rational(1, 4);
  r.mesh = "2x2";
  r.seed = 7;
  EXPECT_EQ(sim_command_line(r),
            "postbox sim --machine 'it'\\''s' --op bcast --algo binomial --p 4 --bytes 8 --alpha 0.25 --mesh 2x2 --seed 7");
}

// λ and α typed in the explorer reach the plan exactly: 10/3 stays 10/3 (a double would make it
// 3333333333333/10^12 on its way through text), α = 1/3 names the λ-tree lambda:1/3, and the
// default planner's plan is the one `postbox sim` builds from the same exact request.
TEST(ExplorerSim, LambdaAndAlphaReachThePlanExactly) {
  const SimRequest r = parse_sim_request(
      {{"machine", "postal:2"}, {"algo", "lambda"}, {"p", "40"}, {"lambda", "10/3"}, {"alpha", "1/3"}});
  ASSERT_TRUE(r.lambda && r.alpha);
  EXPECT_EQ(*r.lambda, Rational(10, 3));
  EXPECT_EQ(*r.alpha, Rational(1, 3));
  const EmulatedRun run = emulated_run(r);
  ASSERT_TRUE(run.request.lambda.has_value());
  EXPECT_EQ(*run.request.lambda, Rational(10, 3));
  EXPECT_EQ(run.request.algo, "lambda:1/3");
  EXPECT_EQ(sim_command_line(r),
            "postbox sim --machine postal:2 --op bcast --algo lambda --p 40 --bytes 8 --alpha 1/3 --lambda 10/3");
  // A terminating decimal is written back as typed.
  const SimRequest d = parse_sim_request({{"machine", "postal:2"}, {"lambda", "2.125"}});
  EXPECT_EQ(sim_command_line(d), "postbox sim --machine postal:2 --op bcast --algo binomial --p 2 --bytes 8 --lambda 2.125");
  // The default planner builds the plan of that exact request.
  EXPECT_TRUE(plan_to_json(plan_emulated_run(r).plan) == plan_to_json(build_plan(run.request)));
}

// A fresh Api answers /api/sim with its own planner (postbox sim's selection), no set-up needed.
TEST(ExplorerSim, DefaultPlannerIsPostboxSims) {
  Api fresh;
  const Reply r = fresh.handle("sim", {{"machine", "postal:2"}, {"p", "8"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["algo"], "binomial");
}

// ---- bad input: the CLI's line, HTTP 400 --------------------------------------------------------------

struct BadRow {
  const char* file;
  int line;
  const char* endpoint;
  Query query;
  const char* message;  // the whole line after "postbox: error: "
};

class ExplorerBadInput : public ::testing::TestWithParam<BadRow> {};

TEST_P(ExplorerBadInput, Is400WithOneLine) {
  const BadRow& row = GetParam();
  SCOPED_TRACE(std::string(row.file) + ":" + std::to_string(row.line));
  const Reply r = api().handle(row.endpoint, row.query);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(r.body, std::string("postbox: error: ") + row.message + "\n");
}

#define ROW(...) BadRow{__FILE__, __LINE__, __VA_ARGS__}
INSTANTIATE_TEST_SUITE_P(
    Rows, ExplorerBadInput,
    ::testing::Values(
        // The CLI's messages (tools/cmd_tree.cpp, cmd_model.cpp, cmd_sim.cpp; the browser test
        // compares these with the CLI's stderr).
        ROW("tree", {{"p", "8"}}, "--shape is required (or use --compare)"),
        ROW("tree", {{"shape", "fibo"}}, "--p is required"),
        ROW("tree", {{"shape", "fibo"}, {"p", "0"}}, "--p must be at least 1, got 0"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8x"}}, "--p must be an integer, got '8x'"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"lambda", "0.5"}}, "--lambda must be at least 1, got 0.5"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"s", "0"}, {"r", "1"}}, "--s must be positive, got 0"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"s", "1"}, {"r", "-1"}}, "--r must not be negative, got -1"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"r", "1"}}, "--r needs --s"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"lambda", "2"}, {"s", "1"}},
            "give either --lambda or --s and --r, not both"),
        ROW("tree", {{"shape", "lambda"}, {"p", "8"}, {"alpha", "0"}},
            "--alpha must be 'auto' or strictly between 0 and 1, got 0"),
        ROW("tree", {{"shape", "lambda:0.5"}, {"p", "8"}, {"alpha", "0.4"}},
            "alpha given twice: in --shape lambda:0.5 and in --alpha"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"root", "8"}}, "--root must be in 0..7, got 8"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"synthetic", "pu:2"}}, "--synthetic applies only to --shape hier"),
        ROW("postal", {{"lambda", "0.5"}, {"n", "4"}}, "--lambda must be >= 1, got 0.5"),
        ROW("postal", {{"lambda", "2"}, {"n", "0"}}, "--n must be at least 1, got 0"),
        ROW("alpha-ranges", {{"lambda", "2"}, {"n-max", "1"}}, "--n-max must be at least 2, got 1"),
        ROW("alpha-ranges", {{"lambda", "2"}, {"n-max", "100001"}}, "--n-max must be at most 100000, got 100001"),
        ROW("breakeven", {{"max-floor", "1001"}}, "--max-floor must be at most 1000, got 1001"),
        ROW("sim", {{"p", "4"}}, "--machine is required"),
        ROW("sim", {{"machine", "manna"}, {"bytes", "-8"}}, "--bytes must not be negative, got -8"),
        // The explorer's own limits.
        ROW("tree", {{"shape", "fibo"}, {"p", "4097"}}, "--p must be at most 4096 in the explorer, got 4097"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"s", "0.0001"}, {"r", "1"}},
            "--s may have at most 3 decimals (or a denominator up to 1000) in the explorer, got 0.0001"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"lambda", "10001"}}, "--lambda must be at most 10000 in the explorer, got 10001"),
        ROW("tree", {{"shape", "hier"}, {"p", "8"}, {"synthetic", "core:65536 pu:1"}},
            "--synthetic 'core:65536 pu:1': more than 2048 PUs"),
        ROW("alpha-ranges", {{"lambda", "2"}, {"n-max", "2001"}}, "--n-max must be at most 2000 in the explorer, got 2001"),
        ROW("scaling", {{"p-max", "1025"}}, "--p-max must be at most 1024 in the explorer, got 1025"),
        ROW("postal", {{"lambda", "2"}, {"n", "1000000001"}}, "--n is too large: 1000000001"),
        ROW("combine", {{"lambda", "2"}, {"n", "999999999999"}}, "--n is too large: 999999999999"),
        ROW("sim", {{"machine", "manna"}, {"p", "1025"}}, "--p must be at most 1024 in the explorer, got 1025"),
        ROW("sim", {{"machine", "manna"}, {"bytes", "1048577"}}, "--bytes must be at most 1048576 in the explorer, got 1048577"),
        ROW("sim", {{"machine", "../profiles/delta.toml"}},
            "--machine: the explorer takes a profile name or a model string, not a file ('../profiles/delta.toml')"),
        ROW("sim", {{"machine", "postal:2"}, {"op", "all-to-all"}, {"algo", "1-lev-dir"}, {"p", "129"}},
            "--p must be at most 128 for all-to-all in the explorer, got 129"),
        ROW("sim", {{"machine", "delta"}, {"mesh", "65x64"}}, "--mesh 65x64 has more than 4096 nodes, the explorer's limit"),
        ROW("sim", {{"machine", "delta"}, {"op", "bcast"}, {"algo", "flat"}, {"p", "64"}, {"bytes", "1048576"}},
            "the plan sends 129024 packets, more than the explorer's 50000 (run it with: postbox sim --machine delta --op "
            "bcast --algo flat --p 64 --bytes 1048576)"),
        ROW("tree", {{"shape", "fibo"}, {"p", "8"}, {"colour", "red"}},
            "/api/tree takes no parameter 'colour' (it takes shape, p, root, lambda, s, r, alpha, synthetic, places)"),
        ROW("calibration", {{"measure", "yes"}}, "--measure must be 0 or 1, got 'yes'")));
#undef ROW

TEST(ExplorerApi, NeverThrows) {
  Api a;
  a.add("boom", "throws", {}, [](const Query&) -> Reply { throw std::runtime_error("kaput"); });
  a.add("oom", "throws", {}, [](const Query&) -> Reply { throw std::bad_alloc(); });
  a.add("odd", "throws", {}, [](const Query&) -> Reply { throw 42; });
  const Reply boom = a.handle("boom", {});
  EXPECT_EQ(boom.status, 500);
  EXPECT_EQ(boom.body, "postbox: error: internal error in /api/boom: kaput\n");
  EXPECT_EQ(a.handle("oom", {}).status, 500);
  EXPECT_EQ(a.handle("odd", {}).status, 500);
  const Reply missing = a.handle("nothing", {});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "postbox: error: no endpoint /api/nothing (see /api)\n");
  // A message with a line break stays one line.
  a.add("lines", "throws", {}, [](const Query&) -> Reply { throw InputError("one\ntwo"); });
  EXPECT_EQ(a.handle("lines", {}).body, "postbox: error: one two\n");
  // The CLI's echo rule: a terminal escape in a value is written out, a pasted value is cut.
  const Reply esc = a.handle("tree", {{"shape", "\x1b[31mfibo"}, {"p", "8"}});
  EXPECT_EQ(esc.status, 400);
  EXPECT_EQ(esc.body.find('\x1b'), std::string::npos) << esc.body;
  EXPECT_NE(esc.body.find("\\x1b[31mfibo"), std::string::npos) << esc.body;
  const Reply big = a.handle("tree", {{"shape", "fibo"}, {"p", std::string(100'000, '7')}});
  EXPECT_EQ(big.status, 400);
  EXPECT_LE(big.body.size(), 200U) << big.body.substr(0, 300);
}

TEST(ExplorerApi, IndexListsEveryEndpoint) {
  const json j = ok(api(), "", {});
  std::vector<std::string> paths;
  for (const json& e : j["endpoints"]) paths.push_back(e["path"]);
  for (const char* want : {"/api/tree", "/api/compare", "/api/scaling", "/api/postal", "/api/alpha-ranges",
                           "/api/breakeven", "/api/combine", "/api/topo", "/api/calibration", "/api/machines",
                           "/api/sim", "/api/trace"}) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), want), paths.end()) << want;
  }
}

TEST(ExplorerApi, InvalidUtf8IsReplacedNotThrown) {
  const Reply r = json_reply({{"name", std::string("\xff\xfe")}});
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD
  const Reply bad = api().handle("tree", {{"shape", "\xff"}, {"p", "8"}});
  EXPECT_EQ(bad.status, 400);
}

// Hostile but well-formed models on every shape: an answer or a 400, never an abort (the server
// lives in this process), and an answer is never better than the optimum.
TEST(ExplorerApi, ExtremeModelsAnswerOrRefuse) {
  int answered = 0, refused = 0;
  for (const char* shape : {"flat", "binary", "kary:7", "binomial", "lambda", "lambda:0.001", "greedy", "fibo"}) {
    for (const auto& [s, r] : std::vector<std::pair<const char*, const char*>>{
             {"0.001", "10000"}, {"0.007", "9999.993"}, {"10000", "0"}, {"1/999", "1/997"}, {"9999.999", "0.001"},
             {"3.333", "0.013"}, {"1", "0"}}) {
      for (const char* p : {"1", "2", "97", "4096"}) {
        SCOPED_TRACE(std::string(shape) + " s=" + s + " r=" + r + " p=" + p);
        const Reply rep = api().handle("tree", {{"shape", shape}, {"p", p}, {"s", s}, {"r", r}});
        ASSERT_TRUE(rep.status == 200 || rep.status == 400) << rep.status << " " << rep.body;
        if (rep.status == 400) {
          ++refused;
          continue;
        }
        ++answered;
        const json j = json::parse(rep.body);
        EXPECT_GE(j["completion"].get<double>(), j["optimum"]["value"].get<double>() * (1 - 1e-12));
      }
    }
  }
  EXPECT_GT(answered, 100);
  RecordProperty("refused", refused);
}

}  // namespace
}  // namespace postbox::explorer
