// Pictures of distribution trees, drawn the way the papers draw them: Cordsen et al. Fig. 9
// (each node shows the step in which it receives the message) and Bruck et al. Figs. 1-2 (nodes
// labelled with the receive time, edges with the send step).
//
// Conventions shared by every renderer:
//  * Node label: the rank and its activation time t (Tree::time).
//  * Edge label: the time the send STARTS. Child i (from 1) of a node activated at a is sent
//    during [a + (i−1)·s, a + i·s] and is active at a + i·s + r, i.e. start + s + r; with λ
//    alone (s = 1) that is Bruck's "sent at t, received at t + λ".
//  * Times are exact (format_time): an integer, a terminating decimal of at most 3 fraction
//    digits ("2.6"), or p/q ("7/3") otherwise.
//  * Children appear in send order, left to right (ascii: top to bottom).
#pragma once

#include <string>

#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"

namespace postbox {

// Exact, short: "7", "2.6", "7/3".
std::string format_time(const Rational& t);

// Vertical placement in DOT and SVG pictures.
enum class TreeLayers {
  depth,  // one row per tree level, like the papers' figures (default)
  time,   // one row per distinct activation time, so the page reads top-down by time
};

// Who lays out the SVG picture.
enum class SvgLayout {
  automatic,  // graphviz when `dot` is on PATH and POSTBOX_NO_GRAPHVIZ is unset or "0"
  builtin,    // postbox's own layered tidy layout (x = leaf order, y = row)
  graphviz,   // `dot -Tsvg`; InputError when `dot` is not on PATH
};

struct RenderOptions {
  TreeLayers layers = TreeLayers::depth;
  SvgLayout svg_layout = SvgLayout::automatic;
  // render_ascii shows at most this many ranks: the ones activated first (ties: lower rank),
  // which always form a connected top of the tree; the rest is summarised per shown node.
  int ascii_max_nodes = 128;
};

// An indented tree, one line per rank: "<rank>  (t=<activation>)", each child line prefixed
// with "@<send start> -> ". Two header lines starting with '#' describe the tree and the key.
std::string render_ascii(const Tree& tree, const RenderOptions& options = {});

// Graphviz DOT: nodes "n<rank>" labelled "<rank>\nt=<time>", edges labelled with the send start,
// rows (rank=same) per depth or per activation time as options.layers says.
std::string render_dot(const Tree& tree, const RenderOptions& options = {});

// A standalone SVG document. With the built-in layout each rank is one <circle> and one
// <text class="node">; each edge one <line> and one <text class="edge">.
std::string render_svg(const Tree& tree, const RenderOptions& options = {});

// True when an executable `dot` is found on PATH (looked up at each call).
bool graphviz_available();

}  // namespace postbox
