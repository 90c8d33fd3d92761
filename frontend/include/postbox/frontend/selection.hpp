// One plan selection, the text face of PlanRequest: the options that choose a plan, parsed and
// validated by one function for `postbox run`, `sim`, `sweep`, `plan export`, `plan check`, the explorer's JSON
// API and the tests. Input is option name → text exactly as typed (an option given with an
// empty value is an error, never "not given"); the result is a PlanRequest for build_plan() /
// cached_plan(), or an InputError whose one-line message names the option ("--p", "--mesh").
//
// Options (name without "--"):
//   op, algo           required (unless the context gives defaults); unknown → the registry's message
//   p                  ranks, an integer >= 1 (build_plan() has the upper limit)
//   bytes              0..kMaxPlanBytes
//   root               0..p-1 (default 0); refused for ops without a root (allreduce, s2p, all-to-all,
//                      barrier)
//   lambda | s and r   exact decimals or p/q; λ >= 1, s > 0, r >= 0; λ excludes s and r
//   alpha              the λ-tree's split in (0, 1): algo "lambda" becomes "lambda:ALPHA"
//   mesh               s2p and C³ ops: the ranks as an RxC mesh, R·C = p
//   sources, dist, seed, source-list   s2p: S in 1..p, a distribution of s2p.hpp, its seed
//                      (dist random only; 0..2^64-1), or the sources themselves (distinct ranks)
//   elem-bytes         reduce and allreduce: 1, 2, 4 or 8 (default 8)
// Integers follow parse.hpp (decimal only: "010" is ten, "0x10" is refused).
//
// For s2p the sources are resolved here, once: the request carries PlanRequest::sources (the
// distribution's ranks in source order), so the builder and the oracle (verify.hpp) read the
// same list and neither re-derives it.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/emulator/machine.hpp"

namespace postbox {

struct SelectionOption {
  std::string name;   // "op", "source-list", ...
  std::string value;  // placeholder for --help: "OP", "N", "RxC", ...
  std::string help;   // one paragraph for --help
};

// Parses an explicit source list "3,17,42" (ranks, decimal, no empty element). Malformed →
// InputError naming --source-list.
std::vector<int> parse_source_list(std::string_view text);

// A mesh of ranks as text: "RxC", e.g. "10x10" (also "10X10"). Malformed, a side < 1 or more
// than kMaxMeshRanks ranks → InputError naming the text.
Mesh parse_mesh(std::string_view text);

// The sources of s2p on `mesh`, in source order, from the texts of --sources (S, default 1),
// --dist (default equal), --seed (dist random only, default 1) and --source-list (distinct
// ranks of the mesh; overrides dist, and S must match its length when given). Bad text →
// InputError naming the option.
std::vector<int> s2p_sources(const Mesh& mesh, const std::optional<std::string>& count,
                             const std::optional<std::string>& dist, const std::optional<std::string>& seed,
                             const std::optional<std::string>& list);

// Every option of the selection, in --help order.
const std::vector<SelectionOption>& plan_selection_options();

struct SelectionContext {
  // Text used for an option that was not given (e.g. sim: op bcast, algo binomial, p 2, bytes 8).
  std::map<std::string, std::string> defaults;
  // Options the caller also reads for itself (sim: "mesh" is the machine's mesh, "seed" the
  // placement's seed): given for an op that does not take them, they are not an error here.
  std::set<std::string> shared;
};

// run, plan export and plan check (and the Python module's plan_export): --bytes 0 unless given
// (a barrier or a notification carries no data).
inline const SelectionContext kRunSelectionDefaults{{{"bytes", "0"}}, {}};

// Parses and validates a selection; InputError naming the first problem, a plan too large for
// memory (check_plan_memory) included, before any work that grows with p. A name that is not a
// selection option is a programming error (PB_CHECK).
PlanRequest select_plan(const std::map<std::string, std::string>& given, const SelectionContext& context = {});

// An emulated run (postbox sim and sweep, the explorer's emulator page): the plan selection plus
// "machine" (postal:L[:C], sr:S:R[:C], logp:L:o:g:G[:C][:O=X][:S=N], a profile name or file; required) and "placement"
// (row-major, snake, random, list:N,N,...; mesh machines only). Defaults: op bcast, algo
// binomial, p 2, bytes 8. Two options also act on the machine: "mesh" replaces a mesh
// machine's dims (RxC or AxBxC; for s2p and the C³ ops it is the ranks' mesh as well, and when
// it is not given the machine takes the ranks' near-square mesh), and "seed" seeds a random
// placement as well as --dist random. The request's λ: the selection's (--lambda, or --s and
// --r), else the machine's at this message size (sim::nominal_lambda, on a mesh Bruck's
// experiment 1 in the emulator), rounded to 1/1000. A machine whose λ is below 1 (a send keeps
// it longer than a message takes to be usable: on LogGP, g above 2o + L) builds a shape that
// does not read λ (shape_reads_lambda) with λ = 1, and refuses one that reads it with an
// InputError saying why.
struct EmulatedRun {
  sim::Machine machine;
  PlanRequest request;
};
EmulatedRun select_emulated_run(const std::map<std::string, std::string>& given);

// The machine for a schedule of p ranks that comes with its own plan (sim --goal): "machine",
// "mesh" (a mesh machine's dims), "placement" and "seed" as select_emulated_run() applies them;
// any other option is an InputError naming it. ranks_mesh: the mesh the schedule's plan was built
// for (GOAL's `// postbox: mesh RxC`), which a mesh machine takes without "mesh", as
// select_emulated_run() gives it the ranks' mesh of an s2p or C³ plan.
sim::Machine select_schedule_machine(const std::map<std::string, std::string>& given, int p,
                                     const std::optional<Mesh>& ranks_mesh = std::nullopt);

// Whether the plan of (op, algo) depends on the postal latency λ it is built for: the λ-tree,
// greedy, fibo and a hier with such an inner shape; the postal allreduces; the combine and fibo
// barriers; an op registered outside postbox's built-in ones. False for every other built-in plan
// (flat, binary, kary, binomial, reduce, gather, recursive doubling, s2p, the C³ ops, ...), whose
// plan is the same for every λ.
bool shape_reads_lambda(const std::string& op, const std::string& algo);

// The options of select_emulated_run(), in --help order (machine, the plan selection with the
// emulator's wording for mesh and seed, placement).
const std::vector<SelectionOption>& emulated_run_options();

}  // namespace postbox
