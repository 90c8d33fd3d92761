// A small, self-contained SVG line/scatter plot: axes with "nice" ticks, axis labels, a title,
// a legend, and any number of series drawn as polylines, points or both. No dependencies; the
// output is deterministic (same plot → byte-identical SVG), so figures in docs/ can be diffed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace postbox::svg {

struct Series {
  enum class Style { line, points, line_points };
  std::string label;        // legend text; empty = not in the legend
  std::vector<double> x, y; // same length; non-finite points are skipped (and break a line)
  Style style = Style::line;
  std::string color;        // any SVG colour; empty = from the default palette
  double point_radius = 2.5;
};

struct Plot {
  std::string title;
  std::string x_label, y_label;
  int width = 720, height = 480;  // pixels
  // Axis ranges; unset = the data range (padded a little, and snapped to ticks).
  std::optional<double> x_min, x_max, y_min, y_max;
  std::vector<Series> series;
  bool legend = true;
};

// Text escaped for SVG/XML character data and attribute values (& < > " as entities); the
// tree pictures (render.hpp) use it too.
std::string xml_escape(std::string_view text);

// The plot as a standalone SVG document. An empty plot draws empty axes over [0, 1].
std::string render(const Plot& plot);
// Writes render(plot) to path; an unwritable path → InputError.
void write(const Plot& plot, const std::string& path);

// "Nice" tick positions (1, 2, 5 × 10^k steps) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 6);

}  // namespace postbox::svg
