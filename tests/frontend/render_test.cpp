// Renderers are tested on hand-made trees (a Tree is plain data), so these tests do not depend on
// the builders: each case states children in send order and the times follow from a + i·s + r.
#include "postbox/frontend/render.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "scoped_env.hpp"

namespace postbox {
namespace {

// Tree from children lists (send order); parent, time and completion derived here.
Tree make_tree(const std::string& shape, int root, SendRecv model, std::vector<std::vector<int>> children) {
  Tree t;
  t.shape = shape;
  t.p = static_cast<int>(children.size());
  t.root = root;
  t.model = model;
  t.children = std::move(children);
  t.parent.assign(static_cast<std::size_t>(t.p), -1);
  t.time.assign(static_cast<std::size_t>(t.p), Rational(0));
  std::vector<int> queue{root};
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const auto v = static_cast<std::size_t>(queue[q]);
    for (std::size_t i = 0; i < t.children[v].size(); ++i) {
      const int c = t.children[v][i];
      t.parent[static_cast<std::size_t>(c)] = queue[q];
      t.time[static_cast<std::size_t>(c)] =
          t.time[v] + Rational(static_cast<std::int64_t>(i + 1)) * model.s + model.r;
      queue.push_back(c);
    }
  }
  t.completion = *std::max_element(t.time.begin(), t.time.end());
  return t;
}

// k-ary heap: children of v are k·v+1 .. k·v+k (root 0).
Tree heap_tree(int p, int k, SendRecv model) {
  std::vector<std::vector<int>> ch(static_cast<std::size_t>(p));
  for (int v = 0; v < p; ++v) {
    for (int j = 1; j <= k && k * v + j < p; ++j) ch[static_cast<std::size_t>(v)].push_back(k * v + j);
  }
  return make_tree("kary:" + std::to_string(k), 0, model, std::move(ch));
}

// Bruck et al. Fig. 2: the λ-tree for n = 8, λ = 2 (s = 1, r = 1), finishing at t = 5.
Tree bruck_fig2() {
  return make_tree("lambda", 0, SendRecv{Rational(1), Rational(1)},
                   {{1, 2, 3, 4}, {5, 6}, {7}, {}, {}, {}, {}, {}});
}

struct Case {
  const char* name;
  Tree tree;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"bruck_fig2", bruck_fig2()});
  c.push_back({"single", make_tree("flat", 0, SendRecv{}, {{}})});
  c.push_back({"flat10_root3", make_tree("flat", 3, SendRecv{Rational(1), Rational(3)},
                                         {{}, {}, {}, {0, 1, 2, 4, 5, 6, 7, 8, 9}, {}, {}, {}, {}, {}, {}})});
  c.push_back({"binary31_manna", heap_tree(31, 2, SendRecv{Rational(27), Rational(88)})});
  c.push_back({"kary8_p73_lambda1_8", heap_tree(73, 8, SendRecv{Rational(1), Rational(4, 5)})});
  c.push_back({"binary128_thirds", heap_tree(128, 2, SendRecv{Rational(1, 3), Rational(2)})});
  return c;
}

class RenderCase : public testing::TestWithParam<Case> {};

// ---------------------------------------------------------------------------------------------
// format_time

struct TimeRow {
  Rational t;
  const char* text;
};
class FormatTime : public testing::TestWithParam<TimeRow> {};
TEST_P(FormatTime, ExactAndShort) { EXPECT_EQ(format_time(GetParam().t), GetParam().text); }
INSTANTIATE_TEST_SUITE_P(Rows, FormatTime,
                         testing::Values(TimeRow{Rational(0), "0"}, TimeRow{Rational(115), "115"},
                                         TimeRow{Rational(-4), "-4"}, TimeRow{Rational(13, 5), "2.6"},
                                         TimeRow{Rational(1, 8), "0.125"}, TimeRow{Rational(-1, 2), "-0.5"},
                                         TimeRow{Rational(201, 20), "10.05"}, TimeRow{Rational(7, 3), "7/3"},
                                         TimeRow{Rational(1, 16), "1/16"}, TimeRow{Rational(-7, 3), "-7/3"}));

// ---------------------------------------------------------------------------------------------
// ascii

// One parsed rank line: rank, its t, and the "@x" of its edge ("" for the root).
struct AsciiLine {
  int rank;
  std::string time;
  std::string edge;
};

std::vector<AsciiLine> parse_ascii(const std::string& text, int* summaries) {
  static const std::regex rank_line(R"(^[|` ]*(?:[|`]-- @(\S+) -> )?(\d+)  \(t=(\S+)\)$)");
  static const std::regex summary_line(R"(^[|` ]*`-- \.\.\. \d+ more child(ren)? from @\S+: (\d+) ranks? not shown, last active t=\S+$)");
  std::vector<AsciiLine> out;
  std::istringstream in(text);
  std::string line;
  *summaries = 0;
  while (std::getline(in, line)) {
    if (line.rfind('#', 0) == 0) continue;
    std::smatch m;
    if (std::regex_match(line, m, rank_line)) {
      out.push_back({std::stoi(m[2]), m[3], m[1]});
    } else if (std::regex_match(line, m, summary_line)) {
      *summaries += std::stoi(m[2]);
    } else {
      ADD_FAILURE() << "unexpected ascii line: '" << line << "'";
    }
  }
  return out;
}

TEST_P(RenderCase, AsciiShowsEveryRankOnceWithItsTimeAndSendStart) {
  const Tree& t = GetParam().tree;
  int hidden = 0;
  const auto lines = parse_ascii(render_ascii(t), &hidden);
  EXPECT_EQ(hidden, 0);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(t.p));
  std::set<int> seen;
  for (const auto& l : lines) {
    EXPECT_TRUE(seen.insert(l.rank).second) << "rank " << l.rank << " twice";
    const auto v = static_cast<std::size_t>(l.rank);
    EXPECT_EQ(l.time, format_time(t.time[v]));
    if (l.rank == t.root) {
      EXPECT_EQ(l.edge, "");
    } else {
      const auto parent = static_cast<std::size_t>(t.parent[v]);
      const auto& sib = t.children[parent];
      const auto i = static_cast<std::int64_t>(std::find(sib.begin(), sib.end(), l.rank) - sib.begin());
      EXPECT_EQ(l.edge, format_time(t.time[parent] + Rational(i) * t.model.s)) << "rank " << l.rank;
    }
  }
  EXPECT_EQ(lines.front().rank, t.root);
}

TEST(RenderAscii, BruckFig2Exactly) {
  EXPECT_EQ(render_ascii(bruck_fig2()),
            "# lambda tree, p=8, root 0, s=1, r=1 (lambda=2): last rank active at t=5\n"
            "# each line: rank  (t=activation time); '@x ->' = the send to that child starts at time x"
            " (child active at x + s + r); children in send order\n"
            "0  (t=0)\n"
            "|-- @0 -> 1  (t=2)\n"
            "|   |-- @2 -> 5  (t=4)\n"
            "|   `-- @3 -> 6  (t=5)\n"
            "|-- @1 -> 2  (t=3)\n"
            "|   `-- @3 -> 7  (t=5)\n"
            "|-- @2 -> 3  (t=4)\n"
            "`-- @3 -> 4  (t=5)\n");
}

TEST(RenderAscii, LargeTreeShowsTheFirstActivatedRanksAndCountsTheRest) {
  const Tree t = heap_tree(300, 2, SendRecv{Rational(1), Rational(3)});
  RenderOptions o;
  o.ascii_max_nodes = 128;
  const std::string text = render_ascii(t, o);
  EXPECT_NE(text.find("# showing the 128 ranks activated first of p=300"), std::string::npos);
  int hidden = 0;
  const auto lines = parse_ascii(text, &hidden);
  ASSERT_EQ(lines.size(), 128u);
  EXPECT_EQ(hidden, 300 - 128);
  // Shown = the 128 smallest (time, rank).
  std::vector<std::pair<Rational, int>> order;
  for (int v = 0; v < t.p; ++v) order.emplace_back(t.time[static_cast<std::size_t>(v)], v);
  std::sort(order.begin(), order.end());
  std::set<int> expected, got;
  for (std::size_t i = 0; i < 128; ++i) expected.insert(order[i].second);
  for (const auto& l : lines) got.insert(l.rank);
  EXPECT_EQ(got, expected);
}

// ---------------------------------------------------------------------------------------------
// DOT

TEST_P(RenderCase, DotNamesEveryNodeAndEdgeWithTheirTimes) {
  const Tree& t = GetParam().tree;
  const std::string dot = render_dot(t);
  EXPECT_EQ(dot.rfind("digraph postbox_tree {\n", 0), 0u);
  EXPECT_EQ(std::count(dot.begin(), dot.end(), '{'), std::count(dot.begin(), dot.end(), '}'));
  for (int v = 0; v < t.p; ++v) {
    const auto i = static_cast<std::size_t>(v);
    EXPECT_NE(dot.find("  n" + std::to_string(v) + " [label=\"" + std::to_string(v) + "\\nt=" +
                       format_time(t.time[i]) + "\""),
              std::string::npos)
        << "node " << v;
    for (std::size_t k = 0; k < t.children[i].size(); ++k) {
      const std::string edge = "  n" + std::to_string(v) + " -> n" + std::to_string(t.children[i][k]) +
                               " [label=\"" + format_time(t.time[i] + Rational(static_cast<std::int64_t>(k)) * t.model.s) +
                               "\"];\n";
      EXPECT_NE(dot.find(edge), std::string::npos) << edge;
    }
  }
  const std::regex edge_re(R"(n\d+ -> n\d+ \[label)");
  EXPECT_EQ(std::distance(std::sregex_iterator(dot.begin(), dot.end(), edge_re), std::sregex_iterator()), t.p - 1);
}

TEST(RenderDot, TimeLayersGroupEqualTimesBesideARuler) {
  RenderOptions o;
  o.layers = TreeLayers::time;
  const std::string dot = render_dot(bruck_fig2(), o);
  // Times 0, 2, 3, 4, 5: five rows, the t=5 row holds ranks 4, 6 and 7.
  EXPECT_NE(dot.find("time4 [label=\"t=5\"]"), std::string::npos);
  EXPECT_EQ(dot.find("time5 "), std::string::npos);
  EXPECT_NE(dot.find("{ rank=same; time4; n4; n6; n7; }"), std::string::npos);
  EXPECT_NE(dot.find("time3 -> time4 [style=invis]"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// SVG

// Balanced, properly nested tags; declarations, comments and DOCTYPE skipped; '&' only as an entity.
testing::AssertionResult well_formed(const std::string& xml) {
  std::vector<std::string> open;
  std::size_t i = 0;
  int roots = 0;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      const std::size_t semi = xml.find(';', i);
      if (semi == std::string::npos || semi - i > 10) return testing::AssertionFailure() << "bare & at " << i;
      i = semi + 1;
      continue;
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    if (xml.compare(i, 4, "<!--") == 0) {
      const std::size_t end = xml.find("-->", i);
      if (end == std::string::npos) return testing::AssertionFailure() << "unclosed comment";
      i = end + 3;
      continue;
    }
    const std::size_t end = xml.find('>', i);
    if (end == std::string::npos) return testing::AssertionFailure() << "unclosed tag at " << i;
    const std::string tag = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return testing::AssertionFailure() << "empty tag";
    if (tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) {
        return testing::AssertionFailure() << "</" << name << "> closes " << (open.empty() ? "nothing" : open.back());
      }
      open.pop_back();
      continue;
    }
    if (open.empty()) ++roots;
    if (tag.back() == '/') {
      continue;
    }
    open.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
  }
  if (!open.empty()) return testing::AssertionFailure() << "<" << open.back() << "> never closed";
  if (roots != 1) return testing::AssertionFailure() << roots << " root elements";
  return testing::AssertionSuccess();
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

double attr(const std::string& element, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t at = element.find(key);
  EXPECT_NE(at, std::string::npos) << name << " in " << element;
  return std::stod(element.substr(at + key.size()));
}

std::vector<std::string> elements(const std::string& svg, const std::string& open_tag) {
  std::vector<std::string> out;
  for (std::size_t at = svg.find(open_tag); at != std::string::npos; at = svg.find(open_tag, at + 1)) {
    out.push_back(svg.substr(at, svg.find('>', at) - at + 1));
  }
  return out;
}

TEST_P(RenderCase, BuiltinSvgHasOneCircleAndLabelPerRankAndNoOverlaps) {
  const Tree& t = GetParam().tree;
  RenderOptions o;
  o.svg_layout = SvgLayout::builtin;
  const std::string svg = render_svg(t, o);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_NE(svg.find("built-in layered layout"), std::string::npos);
  EXPECT_EQ(count(svg, "<circle "), static_cast<std::size_t>(t.p));
  EXPECT_EQ(count(svg, "<text class=\"node\""), static_cast<std::size_t>(t.p));
  EXPECT_EQ(count(svg, "<line "), static_cast<std::size_t>(t.p - 1));
  EXPECT_EQ(count(svg, "<text class=\"edge\""), static_cast<std::size_t>(t.p - 1));
  for (int v = 0; v < t.p; ++v) {
    EXPECT_NE(svg.find(">" + std::to_string(v) + "</tspan><tspan"), std::string::npos) << v;
    EXPECT_NE(svg.find("font-weight=\"bold\">" + format_time(t.time[static_cast<std::size_t>(v)]) + "</tspan>"),
              std::string::npos);
  }
  // Circles are written in rank order; none overlaps another, children sit below parents.
  const auto circles = elements(svg, "<circle ");
  ASSERT_EQ(circles.size(), static_cast<std::size_t>(t.p));
  std::vector<double> cx, cy;
  for (const auto& c : circles) {
    cx.push_back(attr(c, "cx"));
    cy.push_back(attr(c, "cy"));
  }
  const double r = attr(circles.front(), "r");
  for (std::size_t a = 0; a < cx.size(); ++a) {
    for (std::size_t b = a + 1; b < cx.size(); ++b) {
      ASSERT_GE(std::hypot(cx[a] - cx[b], cy[a] - cy[b]), 2.0 * r) << "ranks " << a << " and " << b << " overlap";
    }
    if (t.parent[a] >= 0) {
      EXPECT_GT(cy[a], cy[static_cast<std::size_t>(t.parent[a])]);
    }
  }
}

TEST(RenderSvg, TimeLayersPutEqualTimesOnOneRow) {
  const Tree t = heap_tree(40, 3, SendRecv{Rational(1), Rational(2)});
  RenderOptions o;
  o.svg_layout = SvgLayout::builtin;
  o.layers = TreeLayers::time;
  const std::string svg = render_svg(t, o);
  EXPECT_TRUE(well_formed(svg));
  const auto circles = elements(svg, "<circle ");
  ASSERT_EQ(circles.size(), 40u);
  for (std::size_t a = 0; a < circles.size(); ++a) {
    for (std::size_t b = 0; b < circles.size(); ++b) {
      const double ya = attr(circles[a], "cy"), yb = attr(circles[b], "cy");
      EXPECT_EQ(ya < yb, t.time[a] < t.time[b]) << a << " " << b;
    }
  }
}

using testing_support::ScopedEnv;

TEST_P(RenderCase, GraphvizSvgParsesOurDotAndDrawsEveryRank) {
  if (!graphviz_available()) {
    GTEST_SKIP() << "no 'dot' on PATH";
  }
  const Tree& t = GetParam().tree;
  RenderOptions o;
  o.svg_layout = SvgLayout::graphviz;
  const std::string svg = render_svg(t, o);  // InputError if dot rejects the DOT text
  EXPECT_TRUE(well_formed(svg));
  EXPECT_EQ(count(svg, "<g id=\"node"), static_cast<std::size_t>(t.p));
  EXPECT_EQ(count(svg, "<g id=\"edge"), static_cast<std::size_t>(t.p - 1));
  EXPECT_EQ(svg.find("built-in layered layout"), std::string::npos);
  EXPECT_NE(svg.find(">t=" + format_time(t.completion) + "</text>"), std::string::npos);
}

TEST(RenderSvg, EnvironmentForcesTheBuiltinLayout) {
  const ScopedEnv env("POSTBOX_NO_GRAPHVIZ", "1");
  const std::string svg = render_svg(bruck_fig2());
  EXPECT_NE(svg.find("built-in layered layout"), std::string::npos);
}

TEST(RenderSvg, AutomaticUsesGraphvizWhenPresent) {
  const ScopedEnv env("POSTBOX_NO_GRAPHVIZ", "0");
  const std::string svg = render_svg(bruck_fig2());
  EXPECT_EQ(svg.find("built-in layered layout") == std::string::npos, graphviz_available());
}

TEST(RenderSvg, GraphvizWithoutDotOnPathIsAnInputError) {
  const ScopedEnv env("PATH", "/nonexistent-postbox-dir");
  EXPECT_FALSE(graphviz_available());
  RenderOptions o;
  o.svg_layout = SvgLayout::graphviz;
  EXPECT_THROW((void)render_svg(bruck_fig2(), o), InputError);
  o.svg_layout = SvgLayout::automatic;
  EXPECT_NE(render_svg(bruck_fig2(), o).find("built-in layered layout"), std::string::npos);
}

TEST(RenderDeathTest, InconsistentTreeFailsFast) {
  Tree t = bruck_fig2();
  t.parent[5] = 2;  // children[1] still lists 5
  EXPECT_DEATH((void)render_ascii(t), "children\\[\\] and parent\\[\\] disagree");
}

INSTANTIATE_TEST_SUITE_P(Trees, RenderCase, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

}  // namespace
}  // namespace postbox
