#include "postbox/frontend/render.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "postbox/frontend/svg_plot.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/file.hpp"

extern char** environ;  // NOLINT: POSIX, for posix_spawnp

namespace postbox {
namespace internal {
namespace {

// Above this many ranks `automatic` lays SVG out itself: dot's layout time grows quickly and
// such a picture is not read node by node anyway.
constexpr int kGraphvizMaxRanks = 2000;

void check_tree(const Tree& t) {
  PB_CHECK(t.p >= 1, "tree with p < 1");
  const auto n = static_cast<std::size_t>(t.p);
  PB_CHECK(t.parent.size() == n && t.children.size() == n && t.time.size() == n,
           "tree arrays do not have p entries");
  PB_CHECK(t.root >= 0 && t.root < t.p, "tree root outside 0..p-1");
  PB_CHECK(t.parent[static_cast<std::size_t>(t.root)] == -1, "tree root has a parent");
  for (std::size_t v = 0; v < n; ++v) {
    for (const int c : t.children[v]) {
      PB_CHECK(c >= 0 && c < t.p && t.parent[static_cast<std::size_t>(c)] == static_cast<int>(v),
               "tree children[] and parent[] disagree at rank " + std::to_string(v));
    }
  }
}

// Preorder from the root, children in send order; every rank must be reached exactly once.
std::vector<int> preorder(const Tree& t) {
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(t.p));
  std::vector<int> stack{t.root};
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    order.push_back(v);
    const auto& ch = t.children[static_cast<std::size_t>(v)];
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  PB_CHECK(order.size() == static_cast<std::size_t>(t.p), "tree does not span ranks 0..p-1");
  return order;
}

std::vector<int> depths(const Tree& t, const std::vector<int>& pre) {
  std::vector<int> d(static_cast<std::size_t>(t.p), 0);
  for (const int v : pre) {
    for (const int c : t.children[static_cast<std::size_t>(v)]) {
      d[static_cast<std::size_t>(c)] = d[static_cast<std::size_t>(v)] + 1;
    }
  }
  return d;
}

// The time the send to child number i (from 0) of v starts: a + i·s.
Rational send_start(const Tree& t, int v, std::size_t i) {
  return t.time[static_cast<std::size_t>(v)] + Rational(static_cast<std::int64_t>(i)) * t.model.s;
}

// Row of each rank: its depth, or the index of its activation time among the distinct times.
std::vector<int> rows(const Tree& t, const std::vector<int>& depth, TreeLayers layers, int* row_count) {
  if (layers == TreeLayers::depth) {
    *row_count = 1 + *std::max_element(depth.begin(), depth.end());
    return depth;
  }
  std::vector<Rational> distinct = t.time;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<int> row(static_cast<std::size_t>(t.p));
  for (std::size_t v = 0; v < row.size(); ++v) {
    row[v] = static_cast<int>(std::lower_bound(distinct.begin(), distinct.end(), t.time[v]) - distinct.begin());
  }
  *row_count = static_cast<int>(distinct.size());
  return row;
}

std::string model_text(const Tree& t) {
  return "s=" + format_time(t.model.s) + ", r=" + format_time(t.model.r) +
         " (lambda=" + format_time(t.model.lambda()) + ")";
}

std::string title_text(const Tree& t) {
  return t.shape + " tree, p=" + std::to_string(t.p) + ", root " + std::to_string(t.root) + ", " +
         model_text(t) + ": last rank active at t=" + format_time(t.completion);
}

using svg::xml_escape;

std::string dot_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

bool graphviz_disabled_by_env() {
  const char* v = std::getenv("POSTBOX_NO_GRAPHVIZ");
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

// Runs `dot -Tsvg` on `dot_text` without a shell (posix_spawnp, temporary files). Returns the
// SVG, or an empty string with *why set when dot could not be run or failed.
std::string run_graphviz(const std::string& dot_text, std::string* why) {
  const char* tmpdir = std::getenv("TMPDIR");
  const bool from_env = tmpdir != nullptr && *tmpdir != '\0';
  const std::string dir = from_env ? tmpdir : "/tmp";
  const std::string base = dir + "/postbox-tree-XXXXXX";
  std::vector<char> in_path(base.begin(), base.end());
  in_path.push_back('\0');
  const int fd = mkstemp(in_path.data());
  if (fd < 0) {
    *why = "cannot create a temporary file in " + (from_env ? "TMPDIR '" + dir + "'" : "'" + dir + "'") + ": " +
           std::strerror(errno);
    return {};
  }
  const std::string in_name(in_path.data());
  const std::string out_name = in_name + ".svg";
  const bool wrote = ::write(fd, dot_text.data(), dot_text.size()) == static_cast<ssize_t>(dot_text.size());
  ::close(fd);
  std::string svg;
  if (!wrote) {
    *why = "cannot write the temporary DOT file";
  } else {
    std::vector<std::string> args{"dot", "-Tsvg", "-o", out_name, in_name};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ);
    if (rc != 0) {
      *why = std::string("cannot start dot: ") + std::strerror(rc);
    } else {
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        // run_graphviz reports through *why and never throws: its caller falls back to the
        // built-in layout, so a missing or unreadable output file is a reason, not an error.
        try {
          svg = read_regular_file(out_name, "dot's SVG output '" + out_name + "'");
          if (svg.empty()) *why = "dot wrote no SVG";
        } catch (const InputError& e) {
          *why = e.what();
        }
      } else {
        *why = "dot failed (status " + std::to_string(status) + ")";
      }
    }
  }
  std::remove(in_name.c_str());
  std::remove(out_name.c_str());
  return svg;
}

std::string render_svg_builtin(const Tree& t, const RenderOptions& o) {
  const std::vector<int> pre = preorder(t);
  const std::vector<int> depth = depths(t, pre);
  int row_count = 0;
  const std::vector<int> row = rows(t, depth, o.layers, &row_count);
  const auto n = static_cast<std::size_t>(t.p);

  // Layered tidy layout: leaves take consecutive columns in preorder (children in send order),
  // a parent sits midway between its first and last child, so subtrees never overlap.
  std::vector<double> col(n, 0.0);
  double next_leaf = 0.0;
  for (const int v : pre) {
    if (t.children[static_cast<std::size_t>(v)].empty()) col[static_cast<std::size_t>(v)] = next_leaf++;
  }
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const auto& ch = t.children[static_cast<std::size_t>(*it)];
    if (!ch.empty()) {
      col[static_cast<std::size_t>(*it)] =
          0.5 * (col[static_cast<std::size_t>(ch.front())] + col[static_cast<std::size_t>(ch.back())]);
    }
  }

  std::vector<std::string> rank_label(n), time_label(n);
  std::size_t widest = 1;
  for (std::size_t v = 0; v < n; ++v) {
    rank_label[v] = std::to_string(v);
    time_label[v] = format_time(t.time[v]);
    widest = std::max({widest, rank_label[v].size(), time_label[v].size()});
  }
  // Glyph width ~0.62 em at the 11 px time font; the circle holds the wider of two lines.
  const double radius = std::max(15.0, 0.5 * 0.62 * 11.0 * static_cast<double>(widest) + 5.0);
  const double dx = 2.0 * radius + 12.0;
  const double dy = 2.0 * radius + 52.0;
  const double margin = 20.0;
  const double top = 92.0;  // room for the title and the key
  const double leaves = std::max(1.0, next_leaf);
  // Bold 14 px title: about 0.6 em per glyph.
  const double title_width = 8.4 * static_cast<double>(title_text(t).size());
  const double width = std::max({2.0 * margin + leaves * dx, 2.0 * margin + title_width, 480.0});
  const double height = top + static_cast<double>(row_count - 1) * dy + 2.0 * radius + margin;
  const double x0 = margin + 0.5 * dx + 0.5 * (width - 2.0 * margin - leaves * dx);
  auto x_of = [&](std::size_t v) { return x0 + col[v] * dx; };
  auto y_of = [&](std::size_t v) { return top + radius + static_cast<double>(row[v]) * dy; };

  std::ostringstream s;
  s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
    << "\" viewBox=\"0 0 " << num(width) << ' ' << num(height) << "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
    << "<!-- postbox render_svg, built-in layered layout (rows = "
    << (o.layers == TreeLayers::depth ? "depth" : "activation time") << ", columns = leaf order) -->\n"
    << "<rect x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\"" << num(height) << "\" fill=\"white\"/>\n"
    << "<text class=\"title\" x=\"" << num(margin) << "\" y=\"22\" font-size=\"14\" font-weight=\"bold\">"
    << xml_escape(title_text(t)) << "</text>\n"
    << "<text class=\"title\" x=\"" << num(margin) << "\" y=\"42\" font-size=\"11\" fill=\"#444\">"
    << "circle: rank (small) over activation time t (bold); red ring: last rank(s) active</text>\n"
    << "<text class=\"title\" x=\"" << num(margin) << "\" y=\"57\" font-size=\"11\" fill=\"#444\">"
    << "edge label: time the send starts; the child is active at start + s + r</text>\n"
    << "<text class=\"title\" x=\"" << num(margin) << "\" y=\"72\" font-size=\"11\" fill=\"#444\">"
    << "times exact (integers, short decimals, p/q); children left to right in send order</text>\n";

  s << "<g class=\"edges\" stroke=\"#555\" stroke-width=\"1.2\">\n";
  for (const int v : pre) {
    const auto& ch = t.children[static_cast<std::size_t>(v)];
    for (std::size_t i = 0; i < ch.size(); ++i) {
      const auto a = static_cast<std::size_t>(v);
      const auto b = static_cast<std::size_t>(ch[i]);
      s << "<line x1=\"" << num(x_of(a)) << "\" y1=\"" << num(y_of(a) + radius) << "\" x2=\"" << num(x_of(b))
        << "\" y2=\"" << num(y_of(b) - radius) << "\"/>\n";
    }
  }
  s << "</g>\n<g class=\"edge-labels\" font-size=\"10\" fill=\"#1a5276\" text-anchor=\"middle\" "
       "stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">\n";
  for (const int v : pre) {
    const auto& ch = t.children[static_cast<std::size_t>(v)];
    for (std::size_t i = 0; i < ch.size(); ++i) {
      const auto a = static_cast<std::size_t>(v);
      const auto b = static_cast<std::size_t>(ch[i]);
      // Nearer the child than the parent: sibling labels spread apart as the edges fan out.
      const double f = 0.72;
      const double lx = x_of(a) + f * (x_of(b) - x_of(a));
      const double ly = (y_of(a) + radius) + f * ((y_of(b) - radius) - (y_of(a) + radius)) + 3.5;
      s << "<text class=\"edge\" x=\"" << num(lx) << "\" y=\"" << num(ly) << "\">"
        << xml_escape(format_time(send_start(t, v, i))) << "</text>\n";
    }
  }
  s << "</g>\n<g class=\"nodes\">\n";
  const double completion = t.completion.to_double();
  for (std::size_t v = 0; v < n; ++v) {
    // Fill from pale blue (t = 0) to pale orange (t = completion): who is late is visible at once.
    const double u = completion > 0.0 ? t.time[v].to_double() / completion : 0.0;
    const int red = static_cast<int>(214.0 + u * (253.0 - 214.0));
    const int green = static_cast<int>(234.0 + u * (208.0 - 234.0));
    const int blue = static_cast<int>(248.0 + u * (162.0 - 248.0));
    const bool last = t.time[v] == t.completion;
    s << "<circle cx=\"" << num(x_of(v)) << "\" cy=\"" << num(y_of(v)) << "\" r=\"" << num(radius) << "\" fill=\"rgb("
      << red << ',' << green << ',' << blue << ")\" stroke=\"" << (last ? "#c0392b" : "#333") << "\" stroke-width=\""
      << (last ? "2.5" : "1.2") << "\"/>\n";
  }
  for (std::size_t v = 0; v < n; ++v) {
    s << "<text class=\"node\" x=\"" << num(x_of(v)) << "\" y=\"" << num(y_of(v) - 3.0)
      << "\" text-anchor=\"middle\"><tspan font-size=\"9\" fill=\"#555\">" << rank_label[v] << "</tspan><tspan x=\""
      << num(x_of(v)) << "\" dy=\"12\" font-size=\"11\" font-weight=\"bold\">" << xml_escape(time_label[v])
      << "</tspan></text>\n";
  }
  s << "</g>\n</svg>\n";
  return s.str();
}

}  // namespace
}  // namespace internal

std::string format_time(const Rational& t) { return t.decimal_str(3); }

std::string render_ascii(const Tree& tree, const RenderOptions& options) {
  using internal::send_start;
  internal::check_tree(tree);
  PB_CHECK(options.ascii_max_nodes >= 1, "ascii_max_nodes must be positive");
  const auto n = static_cast<std::size_t>(tree.p);
  const std::vector<int> pre = internal::preorder(tree);

  // Show the ranks activated first. A child is active strictly after its parent (s > 0), so
  // this set contains every shown rank's parent, and shown children are a prefix of each send
  // order (the i-th child's time a + i·s + r grows with i).
  std::vector<int> by_time(n);
  for (std::size_t v = 0; v < n; ++v) by_time[v] = static_cast<int>(v);
  std::sort(by_time.begin(), by_time.end(), [&](int a, int b) {
    const auto& ta = tree.time[static_cast<std::size_t>(a)];
    const auto& tb = tree.time[static_cast<std::size_t>(b)];
    return ta != tb ? ta < tb : a < b;
  });
  const std::size_t limit = std::min(n, static_cast<std::size_t>(options.ascii_max_nodes));
  std::vector<char> shown(n, 0);
  for (std::size_t i = 0; i < limit; ++i) shown[static_cast<std::size_t>(by_time[i])] = 1;
  shown[static_cast<std::size_t>(tree.root)] = 1;

  // Subtree sizes and latest activation time, for the summaries of what is not shown.
  std::vector<std::int64_t> size(n, 1);
  std::vector<Rational> latest(tree.time);
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const auto v = static_cast<std::size_t>(*it);
    for (const int c : tree.children[v]) {
      size[v] += size[static_cast<std::size_t>(c)];
      latest[v] = std::max(latest[v], latest[static_cast<std::size_t>(c)]);
    }
  }

  std::ostringstream out;
  out << "# " << internal::title_text(tree) << '\n'
      << "# each line: rank  (t=activation time); '@x ->' = the send to that child starts at time x"
      << " (child active at x + s + r); children in send order\n";
  if (limit < n) {
    out << "# showing the " << limit << " ranks activated first of p=" << tree.p
        << "; '...' lines summarise the rest (json, dot or svg show every rank)\n";
  }

  struct Frame {
    int v;
    std::string prefix;   // drawn before this node's own connector
    std::string edge;     // "@x -> " or "" for the root
    bool last;            // last sibling shown
    bool is_root;
  };
  std::vector<Frame> stack{{tree.root, "", "", true, true}};
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    if (f.v == -1) {  // a summary line of hidden children, printed after the shown ones
      out << f.prefix;
      continue;
    }
    const auto v = static_cast<std::size_t>(f.v);
    std::string child_prefix;
    if (f.is_root) {
      out << f.v << "  (t=" << format_time(tree.time[v]) << ")\n";
    } else {
      out << f.prefix << (f.last ? "`-- " : "|-- ") << f.edge << f.v << "  (t=" << format_time(tree.time[v]) << ")\n";
      child_prefix = f.prefix + (f.last ? "    " : "|   ");
    }
    const auto& ch = tree.children[v];
    std::size_t visible = 0;
    while (visible < ch.size() && shown[static_cast<std::size_t>(ch[visible])] != 0) ++visible;
    std::vector<Frame> kids;
    for (std::size_t i = 0; i < visible; ++i) {
      std::string edge(1, '@');
      edge.append(format_time(send_start(tree, f.v, i))).append(" -> ");
      kids.push_back({ch[i], child_prefix, std::move(edge), i + 1 == ch.size(), false});
    }
    if (visible < ch.size()) {
      std::int64_t ranks = 0;
      Rational last_time = tree.time[static_cast<std::size_t>(ch[visible])];
      for (std::size_t i = visible; i < ch.size(); ++i) {
        ranks += size[static_cast<std::size_t>(ch[i])];
        last_time = std::max(last_time, latest[static_cast<std::size_t>(ch[i])]);
      }
      // Pushed below the shown children, so it pops after their subtrees.
      std::ostringstream note;
      note << child_prefix << "`-- ... " << (ch.size() - visible) << " more child"
           << (ch.size() - visible == 1 ? "" : "ren") << " from @" << format_time(send_start(tree, f.v, visible))
           << ": " << ranks << " rank" << (ranks == 1 ? "" : "s") << " not shown, last active t="
           << format_time(last_time) << '\n';
      stack.push_back({-1, note.str(), "", true, false});
    }
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(std::move(*it));
  }
  return out.str();
}

std::string render_dot(const Tree& tree, const RenderOptions& options) {
  internal::check_tree(tree);
  const std::vector<int> pre = internal::preorder(tree);
  const std::vector<int> depth = internal::depths(tree, pre);
  int row_count = 0;
  const std::vector<int> row = internal::rows(tree, depth, options.layers, &row_count);
  const auto n = static_cast<std::size_t>(tree.p);

  std::ostringstream d;
  d << "digraph postbox_tree {\n"
    << "  graph [label=\"" << internal::dot_escape(internal::title_text(tree))
    << "\\nnode: rank and activation time t; edge: time the send starts (child active at start + s + r)"
    << "\\ntimes exact: integers, short decimals or p/q; children left to right in send order\", labelloc=t, "
       "fontname=\"Helvetica\", fontsize=12, ordering=out, nodesep=0.12, ranksep=0.45];\n"
    << "  node [shape=circle, fontname=\"Helvetica\", fontsize=10, margin=0.02, style=filled, fillcolor=\"#d6eaf8\"];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=9, fontcolor=\"#1a5276\", arrowsize=0.5];\n";
  for (std::size_t v = 0; v < n; ++v) {
    d << "  n" << v << " [label=\"" << v << "\\nt=" << internal::dot_escape(format_time(tree.time[v])) << "\"";
    if (tree.time[v] == tree.completion) d << ", color=\"#c0392b\", penwidth=2";
    d << "];\n";
  }
  for (const int v : pre) {
    const auto& ch = tree.children[static_cast<std::size_t>(v)];
    for (std::size_t i = 0; i < ch.size(); ++i) {
      d << "  n" << v << " -> n" << ch[i] << " [label=\""
        << internal::dot_escape(format_time(internal::send_start(tree, v, i))) << "\"];\n";
    }
  }
  std::vector<std::vector<std::size_t>> members(static_cast<std::size_t>(row_count));
  for (std::size_t v = 0; v < n; ++v) members[static_cast<std::size_t>(row[v])].push_back(v);
  if (options.layers == TreeLayers::time) {
    // A time ruler down the left: invisible edges order the rows by activation time, since
    // rows of different subtrees are otherwise unconstrained.
    d << "  node [shape=plaintext, style=\"\", fontcolor=\"#666666\"];\n";
    for (std::size_t r = 0; r < members.size(); ++r) {
      d << "  time" << r << " [label=\"t=" << internal::dot_escape(format_time(tree.time[members[r].front()]))
        << "\"];\n";
    }
    for (std::size_t r = 1; r < members.size(); ++r) {
      d << "  time" << (r - 1) << " -> time" << r << " [style=invis];\n";
    }
  }
  for (std::size_t r = 0; r < members.size(); ++r) {
    d << "  { rank=same;";
    if (options.layers == TreeLayers::time) d << " time" << r << ";";
    for (const std::size_t v : members[r]) d << " n" << v << ";";
    d << " }\n";
  }
  d << "}\n";
  return d.str();
}

bool graphviz_available() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view rest(path);
  while (true) {
    const std::size_t colon = rest.find(':');
    std::string exe(rest.substr(0, colon));
    if (exe.empty()) exe.push_back('.');
    exe.append("/dot");
    if (::access(exe.c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    rest.remove_prefix(colon + 1);
  }
}

std::string render_svg(const Tree& tree, const RenderOptions& options) {
  internal::check_tree(tree);
  SvgLayout layout = options.svg_layout;
  if (layout == SvgLayout::automatic) {
    layout = (!internal::graphviz_disabled_by_env() && tree.p <= internal::kGraphvizMaxRanks && graphviz_available())
                 ? SvgLayout::graphviz
                 : SvgLayout::builtin;
  }
  if (layout == SvgLayout::builtin) return internal::render_svg_builtin(tree, options);
  if (!graphviz_available()) throw InputError("graphviz layout requested but no 'dot' executable is on PATH");
  std::string why;
  std::string svg = internal::run_graphviz(render_dot(tree, options), &why);
  if (!svg.empty()) return svg;
  if (options.svg_layout == SvgLayout::graphviz) throw InputError("the graphviz layout failed: " + why);
  svg = internal::render_svg_builtin(tree, options);
  const std::size_t after_decl = svg.find('\n') + 1;
  svg.insert(after_decl, "<!-- graphviz failed (" + internal::xml_escape(why) + "); built-in layout instead -->\n");
  return svg;
}

}  // namespace postbox
