// The C³ model (Hambrusch & Khokhar, "C³: An architecture-independent model for coarse-grained
// parallel machines"; docs/c3.md): the §4 routing algorithms as plans, and the unit calculator
// of §2 for ANY plan.
//
// Buffer contract of the plans (block = L bytes, ranks on a near-square mesh, row-major):
//   one-to-one: every rank's user buffer is 2·L: its message at 0, the message it gets (from
//               one_to_one_source()) at L.
//   one-to-all: root's user buffer p·L, block j (for rank j) at j·L; every other rank L bytes,
//               its block at 0.
//   all-to-one: the inverse — rank j's block at 0 of its L-byte buffer; the root's p·L buffer
//               gets block j at j·L (its own block is there from the start).
//   all-to-all: every rank's user buffer is 2·p·L: [0, p·L) outgoing, block for j at j·L;
//               [p·L, 2·p·L) incoming, block from j at p·L + j·L.
// Algorithms (§3, §4.1–4.3): one-to-one 1-lev-dir (rank i sends to one_to_one_destination());
// one-to-all 1-lev-dir, 1-lev-our-br, 1-lev-sys-br, 2-lev-rec, 3-lev-sq, logp-lev-sq,
// logp-lev-rec:G (γ in (0, 1)); all-to-one 1-lev-dir, 2-lev-rec, 3-lev-sq, logp-lev-sq;
// all-to-all 1-lev-dir, 1-lev-perm:linear|xor|balanced, 2-lev-sq, 2-lev-rc, logp-lev-bfly.
// Every superstep boundary of the paper is a dependency in the plan (a rank's sends of superstep
// k wait for its sends and receives of superstep k − 1), so the unit calculator can find the
// supersteps again from the plan alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/collectives/s2p.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/runtime/plan.hpp"

namespace postbox {

struct PlanRequest;

const std::vector<std::string>& c3_ops();  // one-to-one, one-to-all, all-to-one, all-to-all
// Whether op is one of c3_ops().
bool is_c3_op(std::string_view op);
const std::vector<std::string>& c3_algorithm_names(std::string_view op);  // unknown op → InputError

struct C3Request {
  std::string op;
  std::string algo;
  int p = 0;
  std::uint64_t bytes = 0;  // L, the actual message size
  int root = 0;             // one-to-all / all-to-one
  std::optional<Mesh> mesh;  // rows·cols must equal p; none = near_square_mesh(p)
  // 1-lev-sys-br: the model "the system's broadcast" (bcast's default_bcast_shape() tree,
  // plans.hpp) is built for; none = model_of() of an empty request (POSTBOX_S_NS/R_NS, else λ = 2).
  std::optional<SendRecv> model = std::nullopt;
};

// The permutation of one-to-one (§3: "every processor sends L bytes to a unique destination"):
// i → p − 1 − i, which spans the whole mesh (so the machine is one submachine); for odd p > 1 the
// middle rank m = (p − 1)/2 and ranks 0, p − 1 form the cycle 0 → m → p − 1 → 0, so no rank
// keeps its message (p = 1: rank 0 to itself). one_to_one_source() is its inverse. Rank
// outside 0..p−1 → PB_CHECK.
int one_to_one_destination(int p, int i);
int one_to_one_source(int p, int j);

// Unknown op/algorithm, p < 1, root outside 0..p-1, mesh ≠ p, logp-lev-bfly with p not a power
// of two, γ outside (0, 1) → InputError.
Plan build_c3_plan(const C3Request& req);
// The most blocks (of L bytes) one message of build_c3_plan(req) carries, from its rounds
// alone (plans.hpp: oversized_message); the same InputErrors as build_c3_plan().
std::uint64_t c3_largest_message_blocks(const C3Request& req);

// Registers ops one-to-one, one-to-all, all-to-one, all-to-all (the algorithms above) with the plan registry
// (plans.hpp); the request's mesh is optional. Idempotent.
void register_c3_plans();
// The C3Request the registry builds for a plan request: its op, algo, p, bytes, root (0 for
// all-to-all and one-to-one), mesh and model_of().
C3Request c3_request(const PlanRequest& req);

enum class Switching { wormhole, store_and_forward };
enum class SendMode { nonblocking, blocking };

// Machine parameters of §2, in units: s the set-up cost of a message, l the packet length in
// bytes, b the bisection width, h the average distance (latency) of the whole p-rank machine.
struct C3Machine {
  double s = 8;
  double l = 512;
  double b = 16;
  double h = 10;
  Switching switching = Switching::wormhole;
  SendMode sends = SendMode::nonblocking;
  // The 256-processor Intel Touchstone Delta of §4: h = 10, l = 512, b = 16, one set-up = 8 units.
  static C3Machine delta();
  // The p-processor machines of §3, s and l of the Delta: "mesh" (square: b = √p, h = ⅔√p; p a
  // perfect square), "hypercube" (b = p/2, h = log2(p)/2; p a power of two), "tree" (b = 1,
  // h = log2 p). p < 2, another p or kind → InputError.
  static C3Machine network(std::string_view kind, int p);
};

// s and h in [0, 1e9], l and b in (0, 1e9], all finite, or InputError naming the parameter.
void validate_c3_machine(const C3Machine& machine);

// validate_c3_machine's rule for one parameter (param 's', 'l', 'b' or 'h'; another is a PB_CHECK
// failure), with the InputError "WHAT must be in (0, 1e9], got TEXT" naming the option and quoting
// the value as the user typed it (the CLI: what "--l", text "1e308").
void validate_c3_parameter(char param, double value, std::string_view what, std::string_view text);

struct C3Superstep {
  int messages = 0;   // send operations
  int cong = 0;       // communicating processor pairs
  int submachines = 0;
  double S_max = 0, R_max = 0, SR_max = 0, C_l = 0, C_p = 0, comm_units = 0, comp_units = 0;
};

struct C3Units {
  double comm_units = 0;  // Σ over supersteps of max over submachines of (max(S_i+R_i) + C_l + C_p)
  double comp_units = 0;  // Σ over supersteps of max_i ⌈t_i / l⌉
  double S_max = 0, R_max = 0, C_l = 0, C_p = 0;  // Σ over supersteps of the superstep's maxima
  std::vector<C3Superstep> supersteps;
};

// Charges a plan (§2, Fig. 1). Supersteps come from the plan's dependencies: a send belongs to
// superstep 1 + the largest superstep among the sends and receives it depends on (transitively
// through copies and reduces); a receive to its send's. In each superstep, L_{i,j} is the bytes
// i sends j, n_s / n_r count distinct peers, and the communicating pairs split into independent
// submachines (connected components, merged while their bounding boxes on `mesh` overlap); a
// submachine with n members and bounding box a×c' is charged with p' = n, b' = b·min(a,c')/min(R,C)
// and h' = h·(mean distance between two of its members)/(mean distance between two ranks of
// the R×C mesh). t_i = bytes P_i receives plus bytes it reduces.
// mesh {0,0} = near_square_mesh(plan.p); rows·cols ≠ p or a machine validate_c3_machine()
// refuses → InputError.
C3Units c3_units(const Plan& plan, const C3Machine& machine, Mesh mesh = Mesh{0, 0});

// Mean Manhattan distance between two ranks of an a×c mesh, over all ordered pairs (self included).
double mesh_mean_distance(int a, int c);

}  // namespace postbox
