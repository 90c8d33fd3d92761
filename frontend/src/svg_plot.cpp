#include "postbox/frontend/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "postbox/runtime/check.hpp"

namespace postbox::svg {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string tick_label(double v, double step) {
  char buf[32];
  const int decimals = step >= 1.0 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return buf;
}

double tick_step(double lo, double hi, int target) {
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * mag;
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double step = tick_step(lo, hi, target);
  std::vector<double> t;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
  return t;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render(const Plot& plot) {
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const Series& s : plot.series) {
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      xlo = std::min(xlo, s.x[i]);
      xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]);
      yhi = std::max(yhi, s.y[i]);
    }
  }
  if (!std::isfinite(xlo)) xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  auto widen = [](double& lo, double& hi) {
    if (hi <= lo) {
      const double d = lo == 0.0 ? 1.0 : std::fabs(lo) * 0.1;
      lo -= d;
      hi += d;
    }
  };
  widen(xlo, xhi);
  widen(ylo, yhi);
  // Snap unset bounds outwards to the tick grid.
  const double xs = tick_step(xlo, xhi, 6), ys = tick_step(ylo, yhi, 6);
  const double x0 = plot.x_min.value_or(std::floor(xlo / xs) * xs), x1 = plot.x_max.value_or(std::ceil(xhi / xs) * xs);
  const double y0 = plot.y_min.value_or(std::floor(ylo / ys) * ys), y1 = plot.y_max.value_or(std::ceil(yhi / ys) * ys);
  PB_CHECK(x1 > x0 && y1 > y0, "plot ranges must be non-empty");

  const double left = 70, right = 20 + (plot.legend ? 150.0 : 0.0), top = plot.title.empty() ? 20 : 44, bottom = 56;
  const double W = plot.width, H = plot.height;
  const double pw = W - left - right, ph = H - top - bottom;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return top + ph - (y - y0) / (y1 - y0) * ph; };

  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << plot.width << "\" height=\"" << plot.height
    << "\" viewBox=\"0 0 " << plot.width << ' ' << plot.height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!plot.title.empty()) {
    o << "<text x=\"" << num(left + pw / 2) << "\" y=\"26\" text-anchor=\"middle\" font-size=\"15\">" << xml_escape(plot.title)
      << "</text>\n";
  }
  // Grid and ticks.
  o << "<g stroke=\"#dddddd\" stroke-width=\"1\">\n";
  const auto xt = nice_ticks(x0, x1), yt = nice_ticks(y0, y1);
  for (double v : xt) o << "<line x1=\"" << num(px(v)) << "\" y1=\"" << num(top) << "\" x2=\"" << num(px(v)) << "\" y2=\"" << num(top + ph) << "\"/>\n";
  for (double v : yt) o << "<line x1=\"" << num(left) << "\" y1=\"" << num(py(v)) << "\" x2=\"" << num(left + pw) << "\" y2=\"" << num(py(v)) << "\"/>\n";
  o << "</g>\n<g fill=\"black\">\n";
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1.0, ystep = yt.size() > 1 ? yt[1] - yt[0] : 1.0;
  for (double v : xt) {
    o << "<text x=\"" << num(px(v)) << "\" y=\"" << num(top + ph + 16) << "\" text-anchor=\"middle\">" << tick_label(v, xstep) << "</text>\n";
  }
  for (double v : yt) {
    o << "<text x=\"" << num(left - 6) << "\" y=\"" << num(py(v) + 4) << "\" text-anchor=\"end\">" << tick_label(v, ystep) << "</text>\n";
  }
  o << "</g>\n";
  o << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(pw) << "\" height=\"" << num(ph)
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  if (!plot.x_label.empty()) {
    o << "<text x=\"" << num(left + pw / 2) << "\" y=\"" << num(H - 14) << "\" text-anchor=\"middle\">" << xml_escape(plot.x_label) << "</text>\n";
  }
  if (!plot.y_label.empty()) {
    o << "<text transform=\"translate(18 " << num(top + ph / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
      << xml_escape(plot.y_label) << "</text>\n";
  }
  // Series, clipped to the plot area.
  o << "<clipPath id=\"area\"><rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(pw)
    << "\" height=\"" << num(ph) << "\"/></clipPath>\n<g clip-path=\"url(#area)\">\n";
  std::size_t idx = 0;
  for (const Series& s : plot.series) {
    const std::string color = s.color.empty() ? kPalette[idx % std::size(kPalette)] : s.color;
    ++idx;
    const std::size_t n = std::min(s.x.size(), s.y.size());
    if (s.style != Series::Style::points) {
      std::string pts;
      auto flush = [&] {
        if (!pts.empty()) o << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\" points=\"" << pts << "\"/>\n";
        pts.clear();
      };
      for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
          flush();
          continue;
        }
        if (!pts.empty()) pts.push_back(' ');
        pts.append(num(px(s.x[i])));
        pts.push_back(',');
        pts.append(num(py(s.y[i])));
      }
      flush();
    }
    if (s.style != Series::Style::line) {
      o << "<g fill=\"" << color << "\">\n";
      for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
        o << "<circle cx=\"" << num(px(s.x[i])) << "\" cy=\"" << num(py(s.y[i])) << "\" r=\"" << num(s.point_radius) << "\"/>\n";
      }
      o << "</g>\n";
    }
  }
  o << "</g>\n";
  if (plot.legend) {
    double ly = top + 10;
    idx = 0;
    for (const Series& s : plot.series) {
      const std::string color = s.color.empty() ? kPalette[idx % std::size(kPalette)] : s.color;
      ++idx;
      if (s.label.empty()) continue;
      const double lx = left + pw + 14;
      o << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(lx + 20) << "\" y2=\"" << num(ly)
        << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>\n"
        << "<text x=\"" << num(lx + 26) << "\" y=\"" << num(ly + 4) << "\">" << xml_escape(s.label) << "</text>\n";
      ly += 18;
    }
  }
  o << "</svg>\n";
  return o.str();
}

void write(const Plot& plot, const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw InputError("cannot write SVG file '" + path + "'");
  f << render(plot);
  if (!f.flush()) throw InputError("cannot write SVG file '" + path + "'");
}

}  // namespace postbox::svg
