// s-to-p broadcasting (Hambrusch, Khokhar, et al., "Scalable S-To-P Broadcasting on
// Message-Passing MPPs"; docs/s-to-p.md): s of the p ranks each hold a message; every rank
// ends with all s messages. Messages that meet at a rank are combined and travel on together.
// Every algorithm is a Plan (runtime/plan.hpp).
//
// Ranks form an r×c mesh, row-major: rank = row·c + col. Buffer contract of the plans: every
// rank's user buffer holds s·bytes; the i-th source (in the order of S2PRequest::sources) has
// its message at offset i·bytes before the run, and after the run every rank holds source i's
// message at offset i·bytes. The interpretation of the paper's garbled definitions is in
// docs/s-to-p.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/collectives/mesh.hpp"
#include "postbox/runtime/plan.hpp"

namespace postbox {

struct PlanRequest;


// The mesh closest to square with rows <= cols and rows·cols = p (p >= 1).
Mesh near_square_mesh(int p);

// Snake-like row-major order (Br_Lin's linear array): position k → rank.
std::vector<int> snake_order(const Mesh& mesh);

// Source distributions of §4. Names: row, col, equal, diag-right, diag-left, band, cross,
// block, random. The result lists s distinct ranks in ascending order. s outside 1..p or an
// unknown name → InputError. `seed` is used by `random` only.
std::vector<int> source_distribution(std::string_view name, const Mesh& mesh, int s, std::uint64_t seed = 1);
const std::vector<std::string>& source_distribution_names();

// Algorithms of §2 and §3: br-lin, br-xy-source, br-xy-dim, xor, 2-step, repos-lin,
// repos-xy-source, part-lin, part-xy-source.
const std::vector<std::string>& s2p_algorithm_names();

struct S2PRequest {
  std::string algo;
  Mesh mesh;
  std::vector<int> sources;  // distinct ranks; source order = this order
  std::uint64_t bytes = 0;   // message size at each source
};

// The plan (op "s2p"). Unknown algorithm, an empty mesh, sources outside 0..p-1 or given twice
// → InputError.
Plan build_s2p_plan(const S2PRequest& req);
// The most blocks (source messages) one message of build_s2p_plan(req) carries, from its
// schedule alone (plans.hpp: oversized_message); the same InputErrors as build_s2p_plan().
std::uint64_t s2p_largest_message_blocks(const S2PRequest& req);

// Registers op "s2p" (every algorithm above) with the plan registry (plans.hpp). The request's
// mesh (none: closest to square) and sources (empty: one source, the "equal" distribution's)
// name the S2PRequest. Idempotent.
void register_s2p_plans();

// The mesh of an s2p or C³ request: PlanRequest::mesh (rows and columns >= 1, rows·cols = p)
// or near_square_mesh(p). Another mesh → InputError naming the mesh and p.
Mesh s2p_request_mesh(const PlanRequest& request);

// The sources of an s2p request on `mesh`, in source order: PlanRequest::sources (distinct ranks
// of the mesh), or when empty the one source of source_distribution("equal", mesh, 1). The one
// definition the s2p builder, the plan limits and the oracle use. A rank outside the mesh or
// given twice → InputError naming it.
std::vector<int> s2p_request_sources(const PlanRequest& request, const Mesh& mesh);

}  // namespace postbox
