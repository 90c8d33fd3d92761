// One tree selection, the text face of build_tree(): the options that choose a tree, parsed and
// validated by one function for `postbox tree`, `postbox tree --compare` and the Python module.
// Input is option name (without "--") → text exactly as typed; errors are InputErrors whose
// one-line message names the options ("--p", "--lambda 9/5").
//
// Options:
//   shape              required for one tree (ShapeSpec::parse's grammar)
//   p                  ranks, 1..kMaxTreeRanks, required
//   root               0..p-1 (default 0)
//   lambda | s and r   exact decimals or p/q; λ >= 1, s > 0, r >= 0; λ excludes s and r;
//                      none: s = 1, r = 1 (λ = 2, Bruck's running example)
//   alpha              shape lambda only: 'auto' or a fixed split strictly between 0 and 1
//   synthetic, places  shape hier only: an hwloc synthetic topology (default: this machine) and
//                      a placement policy (default compact)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "postbox/collectives/rational.hpp"
#include "postbox/collectives/tree.hpp"

namespace postbox {

// A tree of p ranks is drawn or listed node by node: 2^20 ranks print about 150 MB of JSON.
inline constexpr int kMaxTreeRanks = 1 << 20;

struct TreeSelection {
  ShapeSpec spec;
  int p = 0;
  int root = 0;
  SendRecv model;
  std::optional<std::string> synthetic;  // hier only
  std::optional<std::string> places;     // hier only
  // The options as typed, for errors found while building: "--p 1000 with --s 1 and --r 3".
  std::string p_text;
  std::string model_options;  // "" for the default model
};

// The option names above, in that order (front ends that take options by name check them
// against this list).
const std::vector<std::string>& tree_selection_options();

// The model alone: lambda, or s and r, from `given` (other names are ignored), checked as
// above; none gives s = 1, r = 1. InputError naming the option.
SendRecv select_model(const std::map<std::string, std::string>& given);

// Parses and validates one tree's options; InputError naming the first problem. A name that is
// not one of the options above is a programming error (PB_CHECK).
TreeSelection select_tree(const std::map<std::string, std::string>& given);

// Builds the selected tree (hier: on the topology and placement selected). What only building
// finds (exact times beyond 64 bits, too long a table) → InputError prefixed with the options
// that caused it ("--p 1000 with --s ... and --r ...: ...").
Tree build_selected_tree(const TreeSelection& selection);

// The shapes `tree --compare` lists, in its order: Cordsen's Fig. 4 and §4.3 (binary,
// binomial, 8-ary, Fibo) plus the rest of the family.
const std::vector<std::string>& compare_tree_shapes();

// The options of a comparison: p and the model (lambda | s and r) only; shape, root, alpha,
// synthetic or places → InputError "--NAME does not apply to --compare". spec and root of the
// result are unused.
TreeSelection select_tree_comparison(const std::map<std::string, std::string>& given);

struct TreeComparison {
  struct Row {
    std::string shape;
    Rational completion;  // time until the last rank is active, rooted at 0
  };
  int p = 0;
  SendRecv model;
  Rational lambda;
  std::vector<Row> rows;  // compare_tree_shapes() order
  Rational best;          // the least completion
  // completion / best as a double (1 when best is 0, i.e. p = 1).
  [[nodiscard]] double ratio(const Rational& completion) const;
};

// Every shape of compare_tree_shapes() built for the selection; InputError as build_selected_tree.
TreeComparison compare_trees(const TreeSelection& selection);

}  // namespace postbox
