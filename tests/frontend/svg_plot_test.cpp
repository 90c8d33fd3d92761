#include "postbox/frontend/svg_plot.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "postbox/runtime/check.hpp"

namespace postbox::svg {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(NiceTicks, UseOneTwoFiveSteps) {
  EXPECT_EQ(nice_ticks(0.0, 1.0), (std::vector<double>{0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0}));
  const auto t = nice_ticks(0.0, 250.0);
  ASSERT_GE(t.size(), 4U);
  EXPECT_DOUBLE_EQ(t[1] - t[0], 50.0);
  EXPECT_DOUBLE_EQ(t.back(), 250.0);
}

TEST(SvgPlot, DrawsSeriesLegendAndEscapesText) {
  Plot p{"a < b & c", "alpha", "n", 720, 480, std::nullopt, std::nullopt, std::nullopt, std::nullopt, {}, true};
  p.series.push_back({"line", {0, 1, 2}, {0, 1, 4}, Series::Style::line, "", 2.5});
  p.series.push_back({"dots", {0.5, 1.5}, {1, 2}, Series::Style::points, "#123456", 2.0});
  p.series.push_back({"", {0, std::numeric_limits<double>::quiet_NaN(), 2}, {1, 1, 1}, Series::Style::line, "", 2.5});
  const std::string svg = render(p);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0U);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("a &lt; b &amp; c"), std::string::npos);
  EXPECT_EQ(count(svg, "<circle"), 2U);
  // The NaN breaks the third series into two polylines (of one point each).
  EXPECT_EQ(count(svg, "<polyline"), 3U);
  EXPECT_EQ(count(svg, "#123456"), 2U);  // points and legend
  EXPECT_NE(svg.find(">dots</text>"), std::string::npos);
  EXPECT_EQ(render(p), svg);  // deterministic
}

TEST(SvgPlot, EmptyPlotStillHasAxes) {
  const std::string svg = render(Plot{});
  EXPECT_NE(svg.find("<rect"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 0U);
}

TEST(SvgPlot, UnwritablePathIsInputError) {
  EXPECT_THROW(write(Plot{}, "/nonexistent-dir/x.svg"), InputError);
}

TEST(SvgPlot, XmlEscapeWritesMarkupCharactersAsEntities) {
  EXPECT_EQ(xml_escape("a<b & \"c\">d"), "a&lt;b &amp; &quot;c&quot;&gt;d");
  EXPECT_EQ(xml_escape("plain 7/3"), "plain 7/3");
  Plot p;
  p.title = "p<8 & q";
  const std::string svg = render(p);
  EXPECT_NE(svg.find("p&lt;8 &amp; q"), std::string::npos);
  EXPECT_EQ(svg.find("p<8"), std::string::npos);
}

}  // namespace
}  // namespace postbox::svg
