#include "postbox/runtime/topology.hpp"

#include <fcntl.h>
#include <hwloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/internal/unique_id.hpp"

namespace postbox {
namespace internal {

// Owns the hwloc handle. Everything the API reports is extracted once at load time; the
// handle is kept for common_depth() and binding, which hwloc allows from many threads on a
// topology that is no longer modified.
struct TopologyImpl {
  hwloc_topology_t topo = nullptr;
  std::uint64_t id = next_unique_id();
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
  const bool digits = !item.empty() && item.find_first_not_of("0123456789") == std::string_view::npos;
  if (!digits || (ec != std::errc() && ec != std::errc::result_out_of_range) || ptr != last) {
    throw InputError("placement list '" + std::string(whole) + "': '" + std::string(item) +
                     "' is not a PU index (a non-negative integer)");
  }
  if (ec == std::errc::result_out_of_range || v > Placement::kMaxPu) {
    throw InputError("placement list '" + std::string(whole) + "': PU " + std::string(item) + " is above " +
                     std::to_string(Placement::kMaxPu));
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
      if (pus.size() >= Placement::kMaxPlaces) {
        throw InputError("placement list '" + std::string(text) + "' names more than " +
                         std::to_string(Placement::kMaxPlaces) + " places");
      }
      pus.push_back(parse_pu(item, text));
    } else {
      const int lo = parse_pu(item.substr(0, dash), text);
      const int hi = parse_pu(item.substr(dash + 1), text);
      if (hi < lo) {
        throw InputError("placement list '" + std::string(text) + "': range '" + std::string(item) + "' is backwards");
      }
      if (pus.size() + static_cast<std::size_t>(hi - lo) + 1 > Placement::kMaxPlaces) {
        throw InputError("placement list '" + std::string(text) + "' names more than " +
                         std::to_string(Placement::kMaxPlaces) + " places");
      }
      for (int v = lo; v <= hi; ++v) pus.push_back(v);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  Placement placement = list(std::move(pus));
  placement.text = text;
  return placement;
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

// hwloc 2.9 crashes on some malformed XML (an object without complete_cpuset, a Machine or
// NUMANode without complete_nodeset; 20 000 nested objects without libxml2), prints its own
// lines on stderr, and takes minutes on some synthetic descriptions (core:8192 pu:1). So a
// description or file from a user is loaded by hwloc in a child process, with a deadline and
// its stderr captured; the child hands back hwloc's own XML export, which this process loads.
constexpr int kLoadSeconds = 10;
constexpr std::size_t kMaxExportBytes = std::size_t{1} << 30;
enum ChildExit { kLoaded = 0, kNoInit = 10, kBadSource = 11, kLoadFailed = 12, kNoExport = 13, kWriteFailed = 14 };

[[noreturn]] void child_load(const std::function<int(hwloc_topology_t)>& set_source, int out_fd, int err_fd) {
  if (dup2(err_fd, 2) < 0) _exit(kWriteFailed);
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) _exit(kNoInit);
  if (set_source(t) != 0) _exit(kBadSource);
  if (hwloc_topology_load(t) != 0) _exit(kLoadFailed);
  char* buf = nullptr;
  int len = 0;
  if (hwloc_topology_export_xmlbuffer(t, &buf, &len, 0) != 0 || len < 1) _exit(kNoExport);
  // hwloc counts the terminating NUL in len; the parent gets the text without it.
  for (std::size_t done = 0, n = static_cast<std::size_t>(len) - 1; done < n;) {
    const ssize_t w = write(out_fd, buf + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(kWriteFailed);
    done += static_cast<std::size_t>(w);
  }
  _exit(kLoaded);
}

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// hwloc's XML export of the topology set_source describes, loaded in a child (see above).
// InputError "<what>: ..." when the source is malformed, the load fails, crashes or overruns.
std::string isolated_export(const std::function<int(hwloc_topology_t)>& set_source, const std::string& what,
                            const std::string& malformed) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    throw std::system_error(errno, std::generic_category(), "pipe");
  }
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    throw std::system_error(errno, std::generic_category(), "fork");
  }
  if (pid == 0) child_load(set_source, out[1], err[1]);
  close(out[1]);
  close(err[1]);
  std::string xml, messages;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kLoadSeconds);
  bool out_open = true, err_open = true, late = false, huge = false;
  char chunk[65536];
  while (out_open || err_open) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      late = true;
      break;
    }
    pollfd fds[2] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0}};
    const int n = poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t r = read(fds[i].fd, chunk, sizeof chunk);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        (i == 0 ? out_open : err_open) = false;
        continue;
      }
      std::string& dst = i == 0 ? xml : messages;
      if (i == 1 && messages.size() > 4096) continue;  // the first line is all that is shown
      dst.append(chunk, static_cast<std::size_t>(r));
      if (xml.size() > kMaxExportBytes) {
        huge = true;
        out_open = err_open = false;
      }
    }
  }
  close(out[0]);
  close(err[0]);
  if (late || huge) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (late) throw InputError(what + ": hwloc did not load it within " + std::to_string(kLoadSeconds) + " s (too many objects?)");
  if (huge) throw InputError(what + ": hwloc's export of it is larger than 1 GiB");
  if (WIFSIGNALED(status)) {
    throw InputError(what + " is malformed: hwloc crashed reading it (signal " + std::to_string(WTERMSIG(status)) + ")");
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const std::string hwloc = first_line(messages);
  const std::string said = hwloc.empty() ? "" : " (" + hwloc + ")";
  if (code == kBadSource) throw InputError(malformed + said);
  if (code == kLoadFailed) throw InputError(what + " is not a topology hwloc can load" + said);
  if (code != kLoaded) throw InputError(what + ": hwloc failed (child exit " + std::to_string(code) + ")" + said);
  return xml;
}

// Loads hwloc's own export (isolated_export()) into a fresh topology of `source`.
std::shared_ptr<TopologyImpl> load_export(Topology::Source source, const std::string& origin, const std::string& xml,
                                          const std::string& what) {
  auto impl = new_impl(source, origin);
  if (hwloc_topology_set_xmlbuffer(impl->topo, xml.data(), static_cast<int>(xml.size())) != 0) {
    throw InputError(what + ": hwloc refused its own export");
  }
  return finish_load(std::move(impl), what);
}

// The depth of an hwloc synthetic level type, outermost first, or -1 for a type that may sit at
// several depths (numa, group) or one postbox does not know (hwloc judges those).
int synthetic_depth(std::string_view type) {
  std::string t;
  for (const char c : type) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (t == "machine") return 0;
  if (t == "pack" || t == "package" || t == "socket") return 1;
  if (t == "die") return 2;
  if (t == "l3" || t == "l3cache" || t == "l3u" || t == "l3ucache") return 3;
  if (t == "l2" || t == "l2cache" || t == "l2u" || t == "l2ucache" || t == "l2d" || t == "l2dcache") return 4;
  if (t == "l1" || t == "l1cache" || t == "l1d" || t == "l1dcache" || t == "l1u" || t == "l1ucache") return 5;
  if (t == "core") return 6;
  if (t == "pu") return 7;
  return -1;
}

// The PUs a synthetic description names ("pack:2 core:4 pu:2" → 16), or 0 when a level is not
// of the plain TYPE:N form (hwloc then judges it; the deadline still applies). A level that lies
// inside the one after it (core:2 pack:2) → InputError.
std::uint64_t synthetic_pus(std::string_view desc) {
  std::uint64_t total = 1;
  std::size_t pos = 0;
  int depth = -1;
  std::string_view outer;
  bool plain = true;
  while (pos < desc.size()) {
    while (pos < desc.size() && desc[pos] == ' ') ++pos;
    if (pos >= desc.size()) break;
    const std::size_t end = std::min(desc.find(' ', pos), desc.size());
    const std::string_view level = desc.substr(pos, end - pos);
    pos = end;
    const std::size_t colon = level.find(':');
    if (colon == std::string_view::npos) {
      plain = false;
      continue;
    }
    if (const int d = synthetic_depth(level.substr(0, colon)); d >= 0) {
      if (d <= depth) {
        throw InputError("synthetic topology '" + std::string(desc) + "': level '" + std::string(level) + "' lies inside '" +
                         std::string(outer) + "' before it (levels go from the outermost, pack, to the innermost, pu)");
      }
      depth = d;
      outer = level;
    }
    std::string_view count = level.substr(colon + 1);
    count = count.substr(0, count.find('('));
    std::uint64_t n = 0;
    const auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec == std::errc::result_out_of_range) {
      total = UINT64_MAX;
      continue;
    }
    if (ec != std::errc() || ptr != count.data() + count.size()) {
      plain = false;
      continue;
    }
    total = n != 0 && total > UINT64_MAX / n ? UINT64_MAX : total * n;
  }
  return plain ? total : 0;
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
  const std::string malformed = "malformed synthetic topology '" + desc + "' (hwloc syntax, e.g. \"pack:2 core:4 pu:2\")";
  if (desc.find_first_not_of(" \t") == std::string::npos) throw InputError(malformed);
  if (const std::uint64_t pus = synthetic_pus(desc); pus > kMaxSyntheticPus) {
    throw InputError("synthetic topology '" + desc + "' has " + (pus == UINT64_MAX ? std::string("more than 2^64") : std::to_string(pus)) +
                     " PUs, more than " + std::to_string(kMaxSyntheticPus));
  }
  const std::string what = "synthetic topology '" + desc + "'";
  const std::string xml = isolated_export([&](hwloc_topology_t t) { return hwloc_topology_set_synthetic(t, desc.c_str()); },
                                          what, malformed);
  return Topology(load_export(Source::synthetic, desc, xml, what));
}

Topology Topology::from_xml(const std::string& path) {
  {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError("topology XML file '" + path + "' is a directory");
    // A FIFO or a device would block the open below (and hwloc's read) until a writer came:
    // only a regular file is read.
    if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
      throw InputError("topology XML file '" + path + "' is not a regular file");
    }
    std::ifstream probe(path);
    if (!probe) throw InputError("cannot read topology XML file '" + path + "'");
  }
  const std::string what = "topology XML file '" + path + "'";
  const std::string xml = isolated_export([&](hwloc_topology_t t) { return hwloc_topology_set_xml(t, path.c_str()); }, what,
                                          "'" + path + "' is not a valid hwloc topology XML file");
  return Topology(load_export(Source::xml, path, xml, what));
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
std::uint64_t Topology::id() const noexcept { return impl_->id; }
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
          throw InputError("placement list '" + (placement.text.empty() ? placement.to_string() : placement.text) +
                           "' names PU " + std::to_string(v) + " but the topology has PUs 0.." +
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
