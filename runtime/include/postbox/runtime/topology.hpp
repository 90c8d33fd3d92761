// Machine topology (from hwloc 2.x) and rank placement.
//
// A Topology is the real machine, an hwloc synthetic description ("pack:2 core:4 pu:2") or an
// hwloc XML export. It is immutable once loaded; copies share one hwloc handle, so copying is
// cheap and every const member may be called from any thread.
//
// PUs are named by their hwloc *logical* index 0..pus()-1 everywhere in this API (placements,
// distances, binding); the OS index is in pu(i).os_index.
//
// Levels: core, L3 cache, NUMA node and package. Where a level is absent above a PU (a
// synthetic "pack:2 pu:4" has no cores; many synthetic and virtual machines have no L3), that
// PU's index at that level is -1, the level's count is the number of objects hwloc has (0 when
// absent), and distance() never reports that level as shared. Nothing is invented: a missing
// L3 is not assumed to be shared by anyone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace postbox {

namespace internal {
struct TopologyImpl;
}

// Where one PU sits. Indices are hwloc logical indices of the enclosing object of each kind,
// -1 where the PU has no such ancestor.
struct PuInfo {
  int os_index = -1;
  int core = -1;
  int l3 = -1;
  int numa = -1;  // the most local NUMA node whose cpuset holds the PU
  int package = -1;
};

// A placement policy: which PU rank r runs on.
//  * compact: rank r on PU r (logical order fills the PUs of a core, then the next core...).
//  * scatter: ranks spread over the tree breadth-first: consecutive ranks go to different
//    packages, then to different L3 groups / cores inside a package, and only once every core
//    holds a rank do cores get their second PU (round-robin over the children at every level).
//  * list: rank r on PU pus[r] (logical indices), repeating the list when p exceeds it.
// In every policy, ranks beyond the available places wrap around: rank r uses place r mod n.
struct Placement {
  enum class Policy { compact, scatter, list };
  Policy policy = Policy::compact;
  std::vector<int> pus;  // only for Policy::list
  std::string text;      // as parse() was given it, quoted by Topology::place()'s errors

  static Placement compact() { return {}; }
  static Placement scatter() { return Placement{Policy::scatter, {}, {}}; }
  static Placement list(std::vector<int> pu_list) { return Placement{Policy::list, std::move(pu_list), {}}; }

  // Bounds of parse(): PU indices 0..kMaxPu (an XML topology may hold more PUs than a synthetic one) and
  // at most kMaxPlaces places once ranges are expanded.
  static constexpr int kMaxPu = 65535;
  static constexpr std::size_t kMaxPlaces = std::size_t{1} << 20;

  // "compact" | "scatter" | a comma-separated list of PU logical indices and ranges "0,2,5-7".
  // Throws InputError naming the problem (unknown policy, empty or malformed list, negative
  // PU, a PU above kMaxPu, more than kMaxPlaces places). Whether the PUs exist is checked
  // against a topology by Topology::place().
  static Placement parse(std::string_view text);
  // The text parse() accepts for this placement.
  [[nodiscard]] std::string to_string() const;
};

// The number of CPUs the calling process may run on: the union of the affinity masks
// (sched_getaffinity) of the calling thread and of the process's main thread, so taskset,
// cgroup cpusets and batch schedulers (Slurm) count, while a worker thread that pinned itself to
// one PU still sees the process's set; hwloc's allowed cpuset where sched_getaffinity is
// unavailable. At least 1. Read afresh on every call (a few microseconds): the set can change.
// Judge oversubscription by this, never by std::thread::hardware_concurrency(), which counts
// every CPU of the host.
int allowed_cpu_count();

class Topology {
 public:
  enum class Source { machine, synthetic, xml };

  // Distance scale of distance(): the innermost level the two PUs share.
  static constexpr int kSamePu = 0;
  static constexpr int kSameCore = 1;
  static constexpr int kSameL3 = 2;
  static constexpr int kSameNuma = 3;
  static constexpr int kSamePackage = 4;
  static constexpr int kMachine = 5;

  // The machine this process runs on, restricted to the PUs it may use. Loaded once per
  // process and shared. Throws InputError when hwloc cannot load it.
  static Topology machine();
  // Synthetic descriptions and XML files are loaded by hwloc in a child process (hwloc 2.9
  // crashes on some malformed files and takes minutes on some descriptions): a crash, a load
  // past 10 s, or hwloc's own error becomes one InputError line, and nothing is printed.
  // hwloc's time grows with the square of a level's objects: at 2048 PUs the slowest shape
  // (seven levels of 2048 objects) loads in about 1.3 s, at 4096 a flat one takes 1 s and three
  // levels 3 s, at 65536 none loads within 10 s; so at most 2048.
  static constexpr std::uint64_t kMaxSyntheticPus = 2048;
  // An hwloc synthetic description, e.g. "pack:2 core:4 pu:2", of at most kMaxSyntheticPus PUs,
  // its levels from the outermost to the innermost (pack, die, l3, l2, l1, core, pu; numa and
  // group anywhere). Malformed, out of order, too large or too slow to build → InputError.
  static Topology synthetic(std::string_view description);
  // An hwloc XML export (lstopo foo.xml). Unreadable, a directory, invalid, or crashing hwloc →
  // InputError.
  static Topology from_xml(const std::string& path);

  [[nodiscard]] Source source() const noexcept;
  // "machine" | "synthetic" | "xml".
  [[nodiscard]] const char* source_name() const noexcept;
  // The synthetic description or the XML path; empty for the machine.
  [[nodiscard]] const std::string& origin() const noexcept;
  // Process-unique, never reused: copies share it (they are the same topology); every load
  // (machine() once per process, each synthetic() or from_xml() call) makes a new one. Caches
  // of what depends on a topology key on it, never on a Topology's address.
  [[nodiscard]] std::uint64_t id() const noexcept;

  [[nodiscard]] int pus() const noexcept;
  [[nodiscard]] int cores() const noexcept;
  [[nodiscard]] int packages() const noexcept;
  [[nodiscard]] int numa_nodes() const noexcept;
  [[nodiscard]] int l3_groups() const noexcept;
  // pu in 0..pus()-1 (PB_CHECK otherwise).
  [[nodiscard]] const PuInfo& pu(int pu) const;

  // PU (logical index) of each of p ranks. p < 1, or a listed PU that does not exist →
  // InputError.
  [[nodiscard]] std::vector<int> place(const Placement& placement, int p) const;
  // True when p ranks under this placement need more places than it has, so that place()
  // puts several ranks on one place.
  [[nodiscard]] bool wraps(const Placement& placement, int p) const;
  // Every PU in scatter order (place(scatter(), pus())).
  [[nodiscard]] const std::vector<int>& scatter_order() const noexcept;

  // hwloc depth of the deepest common ancestor of the two PUs in the object tree: 0 is the
  // machine, larger is closer; common_depth(a, a) is the depth of the PU level.
  [[nodiscard]] int common_depth(int pu_a, int pu_b) const;
  // kSamePu .. kMachine: the first of (PU, core, L3, NUMA node, package) that both PUs share,
  // else kMachine. Levels absent above a PU are never shared. A NUMA node counts only when it
  // lies inside one package, and an L3 only when it lies inside one such NUMA node and one
  // package: the single node of a one-node machine (or of a synthetic topology without numa)
  // spans the packages and would hide them, and an L3 holding several NUMA nodes (sub-NUMA
  // clustering) would hide the nodes. So the counted levels nest, the smallest shared group is
  // the first shared level, and "distance(a, b) <= k" is an equivalence relation for every k:
  // grouping ranks by it gives a partition (the hier tree shape relies on this).
  [[nodiscard]] int distance(int pu_a, int pu_b) const;

  // Whether bind_thread() can work: true only for a topology of this system (the machine;
  // synthetic and XML topologies are not, unless hwloc is told otherwise with HWLOC_THISSYSTEM=1).
  [[nodiscard]] bool can_bind() const noexcept;
  // Pins the calling thread to the PU (hwloc_set_cpubind, HWLOC_CPUBIND_THREAD). Returns false,
  // doing nothing, when !can_bind(); false also when the OS refuses.
  bool bind_thread(int pu) const;

  // The hierarchy as a pre-order list, for printing: machine, packages, NUMA nodes (listed
  // under the object they are attached to, before its children), L3 caches, cores and PUs.
  // Other hwloc objects (L1/L2 caches, dies, groups) are skipped; level counts shown ancestors.
  struct Node {
    int level = 0;
    std::string kind;  // "Machine", "Package", "NUMANode", "L3", "Core", "PU"
    int logical_index = -1;
    int os_index = -1;           // -1 where hwloc has none
    std::uint64_t bytes = 0;     // L3 size or NUMA local memory as hwloc reports it; 0 when unknown
    int first_pu = -1;           // PU logical indices covered: first_pu..last_pu
    int last_pu = -1;            // (logical order keeps every object's PUs contiguous)
  };
  [[nodiscard]] std::vector<Node> tree() const;

 private:
  explicit Topology(std::shared_ptr<const internal::TopologyImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const internal::TopologyImpl> impl_;
};

}  // namespace postbox
