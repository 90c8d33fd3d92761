#include "postbox/runtime/topology.hpp"

#include <hwloc.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace internal {

// Owns the hwloc handle. Everything the API reports is extracted once at load time; the
// handle is kept for common_depth() and binding, which hwloc allows from many threads on a
// topology that is no longer modified.
struct TopologyImpl {
  hwloc_topology_t topo = nullptr;
  Topology::Source source = Topology::Source::machine;
  std::string origin;
  std::vector<hwloc_obj_t> pu_objs;
  std::vector<PuInfo> pu_info;
  std::vector<int> scatter;
  // L3 and NUMA indices used by distance(): -1 where the group does not nest inside the next
  // level out (see distance() in the header).
  std::vector<int> l3_level;
  std::vector<int> numa_level;
  int cores = 0;
  int packages = 0;
  int numa_nodes = 0;
  int l3_groups = 0;
  bool thissystem = false;

  TopologyImpl() = default;
  TopologyImpl(const TopologyImpl&) = delete;
  TopologyImpl& operator=(const TopologyImpl&) = delete;
  ~TopologyImpl() {
    if (topo != nullptr) hwloc_topology_destroy(topo);
  }
};

}  // namespace internal

namespace {

using internal::TopologyImpl;

int count_type(hwloc_topology_t topo, hwloc_obj_type_t type) {
  const int n = hwloc_get_nbobjs_by_type(topo, type);
  return n < 0 ? 0 : n;
}

int ancestor_index(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_obj_t pu) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(topo, type, pu);
  return a == nullptr ? -1 : static_cast<int>(a->logical_index);
}

// The most local NUMA node holding the PU: the covering node with the smallest cpuset (ties:
// lowest logical index). NUMA cpusets equal their parent object's, so the choice nests.
int numa_index(hwloc_topology_t topo, hwloc_obj_t pu) {
  int best = -1;
  int best_weight = 0;
  const int n = count_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (node == nullptr || node->cpuset == nullptr || !hwloc_bitmap_isset(node->cpuset, pu->os_index)) continue;
    const int w = hwloc_bitmap_weight(node->cpuset);
    if (best < 0 || w < best_weight) {
      best = static_cast<int>(node->logical_index);
      best_weight = w;
    }
  }
  return best;
}

// Round-robin over the children at every level: one PU from each child in turn, so
// consecutive entries differ at the highest level where they can.
std::vector<int> scatter_of(hwloc_obj_t obj) {
  if (obj->type == HWLOC_OBJ_PU) return {static_cast<int>(obj->logical_index)};
  std::vector<std::vector<int>> parts;
  std::size_t total = 0;
  for (hwloc_obj_t c = obj->first_child; c != nullptr; c = c->next_sibling) {
    parts.push_back(scatter_of(c));
    total += parts.back().size();
  }
  std::vector<int> out;
  out.reserve(total);
  for (std::size_t k = 0; out.size() < total; ++k) {
    for (const auto& part : parts) {
      if (k < part.size()) out.push_back(part[k]);
    }
  }
  return out;
}

// Keeps a PU's group index at some level only when the group nests: every PU in the group has
// the same `outer` key (the groups of the levels further out). Others become -1.
template <class Key, class Outer>
std::vector<int> nested(const std::vector<PuInfo>& info, Key key, Outer outer) {
  using OuterKey = decltype(outer(info.front()));
  std::map<int, std::optional<OuterKey>> seen;  // group → its outer key; nullopt when mixed
  for (const PuInfo& pu : info) {
    const int g = key(pu);
    if (g < 0) continue;
    auto [it, fresh] = seen.try_emplace(g, outer(pu));
    if (!fresh && it->second && *it->second != outer(pu)) it->second.reset();
  }
  std::vector<int> out;
  out.reserve(info.size());
  for (const PuInfo& pu : info) {
    const int g = key(pu);
    out.push_back(g >= 0 && seen.at(g).has_value() ? g : -1);
  }
  return out;
}

void nest_levels(TopologyImpl& impl) {
  const auto& info = impl.pu_info;
  impl.numa_level = nested(info, [](const PuInfo& p) { return p.numa; }, [](const PuInfo& p) { return p.package; });
  // An L3 must sit inside one distance-level NUMA node and one package.
  std::vector<PuInfo> keyed = info;
  for (std::size_t i = 0; i < keyed.size(); ++i) keyed[i].numa = impl.numa_level[i];
  impl.l3_level = nested(keyed, [](const PuInfo& p) { return p.l3; },
                         [](const PuInfo& p) { return std::pair<int, int>(p.numa, p.package); });
}

std::shared_ptr<TopologyImpl> finish_load(std::unique_ptr<TopologyImpl> impl, const std::string& what) {
  if (hwloc_topology_load(impl->topo) != 0) throw InputError("hwloc could not load the " + what);
  hwloc_topology_t topo = impl->topo;
  const int n = count_type(topo, HWLOC_OBJ_PU);
  if (n < 1) throw InputError("the " + what + " has no PUs");
  impl->pu_objs.resize(static_cast<std::size_t>(n));
  impl->pu_info.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, static_cast<unsigned>(i));
    PB_CHECK(pu != nullptr, "hwloc PU " + std::to_string(i) + " missing");
    impl->pu_objs[static_cast<std::size_t>(i)] = pu;
    PuInfo& info = impl->pu_info[static_cast<std::size_t>(i)];
    info.os_index = static_cast<int>(pu->os_index);
    info.core = ancestor_index(topo, HWLOC_OBJ_CORE, pu);
    info.l3 = ancestor_index(topo, HWLOC_OBJ_L3CACHE, pu);
    info.package = ancestor_index(topo, HWLOC_OBJ_PACKAGE, pu);
    info.numa = numa_index(topo, pu);
  }
  impl->cores = count_type(topo, HWLOC_OBJ_CORE);
  impl->packages = count_type(topo, HWLOC_OBJ_PACKAGE);
  impl->numa_nodes = count_type(topo, HWLOC_OBJ_NUMANODE);
  impl->l3_groups = count_type(topo, HWLOC_OBJ_L3CACHE);
  nest_levels(*impl);
  impl->scatter = scatter_of(hwloc_get_root_obj(topo));
  PB_CHECK(static_cast<int>(impl->scatter.size()) == n, "scatter order must hold every PU once");
  impl->thissystem = hwloc_topology_is_thissystem(topo) != 0;
  return std::shared_ptr<TopologyImpl>(std::move(impl));
}

std::unique_ptr<TopologyImpl> new_impl(Topology::Source source, std::string origin) {
  auto impl = std::make_unique<TopologyImpl>();
  if (hwloc_topology_init(&impl->topo) != 0) {
    impl->topo = nullptr;
    throw InputError("hwloc could not initialise a topology");
  }
  impl->source = source;
  impl->origin = std::move(origin);
  return impl;
}

int parse_pu(std::string_view item, std::string_view whole) {
  int v = 0;
  const auto* first = item.data();
  const auto* last = item.data() + item.size();
  const auto [ptr, ec] = std::from_chars(first, last, v);
  if (item.empty() || ec != std::errc() || ptr != last || v < 0) {
    throw InputError("placement list '" + std::string(whole) + "': '" + std::string(item) +
                     "' is not a PU index (a non-negative integer)");
  }
  return v;
}

}  // namespace

// ---- Placement ---------------------------------------------------------------------------

Placement Placement::parse(std::string_view text) {
  if (text == "compact") return compact();
  if (text == "scatter") return scatter();
  if (text.empty()) throw InputError("placement is empty: use compact, scatter or a PU list like 0,2,5");
  const bool looks_like_list = text.find(',') != std::string_view::npos ||
                               text.find_first_not_of("0123456789- ") == std::string_view::npos;
  if (!looks_like_list) {
    throw InputError("unknown placement '" + std::string(text) + "': use compact, scatter or a PU list like 0,2,5");
  }
  std::vector<int> pus;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos || dash == 0) {
      pus.push_back(parse_pu(item, text));
    } else {
      const int lo = parse_pu(item.substr(0, dash), text);
      const int hi = parse_pu(item.substr(dash + 1), text);
      if (hi < lo) {
        throw InputError("placement list '" + std::string(text) + "': range '" + std::string(item) + "' is backwards");
      }
      for (int v = lo; v <= hi; ++v) pus.push_back(v);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return list(std::move(pus));
}

std::string Placement::to_string() const {
  switch (policy) {
    case Policy::compact:
      return "compact";
    case Policy::scatter:
      return "scatter";
    case Policy::list:
      break;
  }
  std::string s;
  for (std::size_t i = 0; i < pus.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(pus[i]);
  }
  return s;
}

// ---- Topology ----------------------------------------------------------------------------

namespace {

// Loaded once: hwloc discovery reads sysfs and takes milliseconds; the machine does not change
// under a running process in any way postbox cares about.
const std::shared_ptr<const TopologyImpl>& machine_impl() {
  static const std::shared_ptr<const TopologyImpl> shared = [] {
    auto impl = new_impl(Topology::Source::machine, "");
    return std::shared_ptr<const TopologyImpl>(finish_load(std::move(impl), "machine topology"));
  }();
  return shared;
}

// The CPUs in the affinity mask of thread `tid` (0: the caller), appended to out. False when
// the kernel refuses. The mask is sized up until it holds the kernel's cpumask (EINVAL below).
bool append_affinity(pid_t tid, std::vector<int>& out) {
  for (int n = 1024; n <= (1 << 22); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(static_cast<std::size_t>(n));
    if (set == nullptr) return false;
    const std::size_t bytes = CPU_ALLOC_SIZE(static_cast<std::size_t>(n));
    CPU_ZERO_S(bytes, set);
    if (::sched_getaffinity(tid, bytes, set) == 0) {
      for (int c = 0; c < n; ++c) {
        if (CPU_ISSET_S(static_cast<std::size_t>(c), bytes, set)) out.push_back(c);
      }
      CPU_FREE(set);
      return true;
    }
    const int err = errno;
    CPU_FREE(set);
    if (err != EINVAL) return false;
  }
  return false;
}

}  // namespace

int allowed_cpu_count() {
  std::vector<int> cpus;
  const bool caller = append_affinity(0, cpus);
  // The main thread's id is the process id (Linux); it fails harmlessly once main has exited.
  const bool main_thread = append_affinity(::getpid(), cpus);
  if (caller || main_thread) {
    std::sort(cpus.begin(), cpus.end());
    const auto n = std::unique(cpus.begin(), cpus.end()) - cpus.begin();
    if (n > 0) return static_cast<int>(n);
  }
  try {
    const int w = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(machine_impl()->topo));
    return std::max(1, w);
  } catch (const InputError&) {
    return 1;  // no hwloc either: nothing says more than one CPU
  }
}

Topology Topology::machine() { return Topology(machine_impl()); }

Topology Topology::synthetic(std::string_view description) {
  const std::string desc(description);
  auto impl = new_impl(Source::synthetic, desc);
  if (desc.find_first_not_of(" \t") == std::string::npos ||
      hwloc_topology_set_synthetic(impl->topo, desc.c_str()) != 0) {
    throw InputError("malformed synthetic topology '" + desc + "' (hwloc syntax, e.g. \"pack:2 core:4 pu:2\")");
  }
  return Topology(finish_load(std::move(impl), "synthetic topology '" + desc + "'"));
}

Topology Topology::from_xml(const std::string& path) {
  {
    std::ifstream probe(path);
    if (!probe) throw InputError("cannot read topology XML file '" + path + "'");
  }
  auto impl = new_impl(Source::xml, path);
  if (hwloc_topology_set_xml(impl->topo, path.c_str()) != 0) {
    throw InputError("'" + path + "' is not a valid hwloc topology XML file");
  }
  // set_xml only records the path; the XML is parsed by the load.
  try {
    return Topology(finish_load(std::move(impl), "topology XML file '" + path + "'"));
  } catch (const InputError&) {
    throw InputError("'" + path + "' is not a valid hwloc topology XML file");
  }
}

Topology::Source Topology::source() const noexcept { return impl_->source; }

const char* Topology::source_name() const noexcept {
  switch (impl_->source) {
    case Source::machine:
      return "machine";
    case Source::synthetic:
      return "synthetic";
    case Source::xml:
      return "xml";
  }
  return "?";
}

const std::string& Topology::origin() const noexcept { return impl_->origin; }
int Topology::pus() const noexcept { return static_cast<int>(impl_->pu_info.size()); }
int Topology::cores() const noexcept { return impl_->cores; }
int Topology::packages() const noexcept { return impl_->packages; }
int Topology::numa_nodes() const noexcept { return impl_->numa_nodes; }
int Topology::l3_groups() const noexcept { return impl_->l3_groups; }

const PuInfo& Topology::pu(int pu) const {
  PB_CHECK(pu >= 0 && pu < pus(), "PU " + std::to_string(pu) + " outside 0.." + std::to_string(pus() - 1));
  return impl_->pu_info[static_cast<std::size_t>(pu)];
}

const std::vector<int>& Topology::scatter_order() const noexcept { return impl_->scatter; }

bool Topology::wraps(const Placement& placement, int p) const {
  const std::size_t places = placement.policy == Placement::Policy::list ? placement.pus.size()
                                                                          : static_cast<std::size_t>(pus());
  return p > 0 && static_cast<std::size_t>(p) > places;
}

std::vector<int> Topology::place(const Placement& placement, int p) const {
  if (p < 1) throw InputError("the number of ranks must be at least 1, got " + std::to_string(p));
  std::vector<int> out(static_cast<std::size_t>(p));
  const auto n = static_cast<std::size_t>(pus());
  switch (placement.policy) {
    case Placement::Policy::compact:
      for (std::size_t r = 0; r < out.size(); ++r) out[r] = static_cast<int>(r % n);
      break;
    case Placement::Policy::scatter:
      for (std::size_t r = 0; r < out.size(); ++r) out[r] = impl_->scatter[r % n];
      break;
    case Placement::Policy::list: {
      const auto& l = placement.pus;
      if (l.empty()) throw InputError("placement list is empty");
      for (int v : l) {
        if (v < 0 || v >= pus()) {
          throw InputError("placement list names PU " + std::to_string(v) + " but the topology has PUs 0.." +
                           std::to_string(pus() - 1));
        }
      }
      for (std::size_t r = 0; r < out.size(); ++r) out[r] = l[r % l.size()];
      break;
    }
  }
  return out;
}

int Topology::common_depth(int pu_a, int pu_b) const {
  (void)pu(pu_a);
  (void)pu(pu_b);
  hwloc_obj_t a = impl_->pu_objs[static_cast<std::size_t>(pu_a)];
  hwloc_obj_t b = impl_->pu_objs[static_cast<std::size_t>(pu_b)];
  hwloc_obj_t c = hwloc_get_common_ancestor_obj(impl_->topo, a, b);
  PB_CHECK(c != nullptr, "two PUs without a common ancestor");
  return c->depth;
}

int Topology::distance(int pu_a, int pu_b) const {
  const PuInfo& a = pu(pu_a);
  const PuInfo& b = pu(pu_b);
  const auto shared = [](int x, int y) { return x >= 0 && x == y; };
  if (pu_a == pu_b) return kSamePu;
  if (shared(a.core, b.core)) return kSameCore;
  const auto ia = static_cast<std::size_t>(pu_a);
  const auto ib = static_cast<std::size_t>(pu_b);
  if (shared(impl_->l3_level[ia], impl_->l3_level[ib])) return kSameL3;
  if (shared(impl_->numa_level[ia], impl_->numa_level[ib])) return kSameNuma;
  if (shared(a.package, b.package)) return kSamePackage;
  return kMachine;
}

bool Topology::can_bind() const noexcept { return impl_->thissystem; }

bool Topology::bind_thread(int pu_index) const {
  (void)pu(pu_index);
  if (!impl_->thissystem) return false;
  hwloc_obj_t obj = impl_->pu_objs[static_cast<std::size_t>(pu_index)];
  return hwloc_set_cpubind(impl_->topo, obj->cpuset, HWLOC_CPUBIND_THREAD) == 0;
}

namespace {

Topology::Node node_of(hwloc_obj_t obj, int level, const char* kind) {
  Topology::Node n;
  n.level = level;
  n.kind = kind;
  n.logical_index = static_cast<int>(obj->logical_index);
  n.os_index = obj->os_index == HWLOC_UNKNOWN_INDEX ? -1 : static_cast<int>(obj->os_index);
  if (obj->type == HWLOC_OBJ_L3CACHE && obj->attr != nullptr) n.bytes = obj->attr->cache.size;
  if (obj->type == HWLOC_OBJ_NUMANODE && obj->attr != nullptr) n.bytes = obj->attr->numanode.local_memory;
  return n;
}

void walk_memory(hwloc_obj_t mem, int level, std::vector<Topology::Node>& out) {
  for (; mem != nullptr; mem = mem->next_sibling) {
    if (mem->type == HWLOC_OBJ_NUMANODE) {
      out.push_back(node_of(mem, level, "NUMANode"));
    } else {
      walk_memory(mem->memory_first_child, level, out);  // memory-side caches in front of nodes
    }
  }
}

void walk(hwloc_obj_t obj, int level, std::vector<Topology::Node>& out) {
  const char* kind = nullptr;
  switch (obj->type) {
    case HWLOC_OBJ_MACHINE:
      kind = "Machine";
      break;
    case HWLOC_OBJ_PACKAGE:
      kind = "Package";
      break;
    case HWLOC_OBJ_L3CACHE:
      kind = "L3";
      break;
    case HWLOC_OBJ_CORE:
      kind = "Core";
      break;
    case HWLOC_OBJ_PU:
      kind = "PU";
      break;
    default:
      break;
  }
  std::size_t self = out.size();
  int child_level = level;
  if (kind != nullptr) {
    out.push_back(node_of(obj, level, kind));
    child_level = level + 1;
  }
  walk_memory(obj->memory_first_child, child_level, out);
  for (hwloc_obj_t c = obj->first_child; c != nullptr; c = c->next_sibling) walk(c, child_level, out);
  if (kind != nullptr) {
    // PU logical indices of a subtree are contiguous: the first and last PU below it.
    int first = -1;
    int last = -1;
    for (std::size_t i = self; i < out.size(); ++i) {
      if (out[i].kind == "PU") {
        if (first < 0) first = out[i].logical_index;
        last = out[i].logical_index;
      }
    }
    out[self].first_pu = first;
    out[self].last_pu = last;
  }
}

}  // namespace

std::vector<Topology::Node> Topology::tree() const {
  std::vector<Node> out;
  walk(hwloc_get_root_obj(impl_->topo), 0, out);
  // NUMA nodes cover the PUs of the object they hang from (the next shown entry's parent).
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].kind != "NUMANode") continue;
    hwloc_obj_t node = hwloc_get_obj_by_type(impl_->topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(out[i].logical_index));
    if (node == nullptr || node->cpuset == nullptr) continue;
    for (int p = 0; p < pus(); ++p) {
      if (hwloc_bitmap_isset(node->cpuset, impl_->pu_objs[static_cast<std::size_t>(p)]->os_index)) {
        if (out[i].first_pu < 0) out[i].first_pu = p;
        out[i].last_pu = p;
      }
    }
  }
  return out;
}

}  // namespace postbox
