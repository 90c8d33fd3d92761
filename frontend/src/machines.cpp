// Machine descriptions as text: model strings, TOML profiles, mesh extents, placements.
#include "postbox/frontend/machines.hpp"

#include "postbox/runtime/calibrate.hpp"

#include <dlfcn.h>
#include <toml++/toml.h>  // header-only mode (TOML_HEADER_ONLY defaults to 1)

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/file.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox::sim {
namespace {

[[noreturn]] void bad(std::string_view origin, const std::string& what) {
  throw InputError("profile " + std::string(origin) + ": " + what);
}

// Every number of a machine (µs, MB/s, bytes) is at most this, so that no time computed from
// them overflows (a profile with router_delay_us = 1e300 gave "time inf us").
constexpr double kMaxNumber = 1e9;

double parse_number(std::string_view text, const std::string& what) {
  const double v = parse_real(text, what);
  if (v < 0) throw InputError(what + " must not be negative, got '" + std::string(text) + "'");
  if (v > kMaxNumber) throw InputError(what + " must be at most 1e9, got '" + std::string(text) + "'");
  return v;
}

// A mesh of at most kMaxMeshNodes nodes (the product of dims, checked without overflow).
void check_dims(const std::vector<int>& dims, const std::string& what) {
  std::int64_t n = 1;
  for (int d : dims) {
    if (d < 1 || n > kMaxMeshNodes / d) {
      throw InputError(what + " must have between 1 and " + std::to_string(kMaxMeshNodes) + " nodes");
    }
    n *= d;
  }
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

// Reads a TOML table strictly: every key must be known and of the right type; numbers are
// finite and non-negative. Errors name the dotted field.
class Reader {
 public:
  Reader(const toml::table& t, std::string prefix, std::string_view origin)
      : t_(t), prefix_(std::move(prefix)), origin_(origin) {}

  void allow(std::initializer_list<std::string_view> keys) const { allow(std::vector<std::string_view>(keys)); }
  void allow(const std::vector<std::string_view>& keys) const {
    for (const auto& [k, v] : t_) {
      (void)v;
      if (std::find(keys.begin(), keys.end(), k.str()) == keys.end())
        bad(origin_, "unknown field '" + field(k.str()) + "'");
    }
  }
  [[nodiscard]] bool has(std::string_view key) const { return t_.contains(key); }

  double number(std::string_view key) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) bad(origin_, "missing field '" + field(key) + "'");
    std::optional<double> v;
    if (const auto* i = n->as_integer()) v = static_cast<double>(i->get());
    if (const auto* f = n->as_floating_point()) v = f->get();
    if (!v) bad(origin_, "field '" + field(key) + "' must be a number");
    if (!std::isfinite(*v)) bad(origin_, "field '" + field(key) + "' must be finite");
    if (*v < 0) bad(origin_, "field '" + field(key) + "' must not be negative");
    if (*v > kMaxNumber) bad(origin_, "field '" + field(key) + "' must be at most 1e9");
    return *v;
  }
  double number_or(std::string_view key, double dflt) const { return has(key) ? number(key) : dflt; }
  std::int64_t integer(std::string_view key) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) bad(origin_, "missing field '" + field(key) + "'");
    const auto* i = n->as_integer();
    if (i == nullptr) bad(origin_, "field '" + field(key) + "' must be an integer");
    if (i->get() < 0) bad(origin_, "field '" + field(key) + "' must not be negative");
    if (static_cast<double>(i->get()) > kMaxNumber) bad(origin_, "field '" + field(key) + "' must be at most 1e9");
    return i->get();
  }
  std::string string(std::string_view key) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) bad(origin_, "missing field '" + field(key) + "'");
    const auto* s = n->as_string();
    if (s == nullptr) bad(origin_, "field '" + field(key) + "' must be a string");
    return s->get();
  }
  bool boolean(std::string_view key) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) bad(origin_, "missing field '" + field(key) + "'");
    const auto* b = n->as_boolean();
    if (b == nullptr) bad(origin_, "field '" + field(key) + "' must be true or false");
    return b->get();
  }
  std::vector<int> ints(std::string_view key) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) bad(origin_, "missing field '" + field(key) + "'");
    const auto* a = n->as_array();
    if (a == nullptr) bad(origin_, "field '" + field(key) + "' must be an array of integers");
    std::vector<int> out;
    for (const auto& e : *a) {
      const auto* i = e.as_integer();
      if (i == nullptr || i->get() < 0 || i->get() > std::numeric_limits<int>::max())
        bad(origin_, "field '" + field(key) + "' must be an array of non-negative integers");
      out.push_back(static_cast<int>(i->get()));
    }
    return out;
  }
  Reader table(std::string_view key) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) bad(origin_, "missing table '" + field(key) + "'");
    const auto* t = n->as_table();
    if (t == nullptr) bad(origin_, "field '" + field(key) + "' must be a table");
    return Reader(*t, field(key), origin_);
  }
  Cost cost(std::string_view key) const {
    Reader r = table(key);
    r.allow({"base_us", "per_byte_us", "per_packet_us"});
    return Cost{r.number("base_us"), r.number_or("per_byte_us", 0), r.number_or("per_packet_us", 0)};
  }
  [[nodiscard]] std::string field(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  }
  [[nodiscard]] std::string_view origin() const { return origin_; }

 private:
  const toml::table& t_;
  std::string prefix_;
  std::string_view origin_;
};

bool looks_like_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

}  // namespace

std::vector<std::string> profile_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("POSTBOX_PROFILE_PATH"); env != nullptr && *env != '\0')
    for (auto part : split(env, ':'))
      if (!part.empty()) dirs.emplace_back(part);
  // `postbox calibrate --save` writes the `local` profile here.
  if (const auto cal = calibration_profile_dir()) dirs.push_back(cal->string());
#ifdef POSTBOX_SOURCE_PROFILE_DIR
  dirs.emplace_back(POSTBOX_SOURCE_PROFILE_DIR);
#endif
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share" / "postbox" / "profiles").string());
  // The shared library's own prefix (lib/ or lib/<multiarch>/ under it), so that a program
  // anywhere finds the profiles of the package it links; the main program has no path here.
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&profile_dirs), &self) != 0 && self.dli_fname != nullptr &&
      self.dli_fname[0] == '/') {
    auto dir = std::filesystem::path(self.dli_fname).parent_path();
    for (int up = 0; up < 2 && dir.has_parent_path() && dir != dir.root_path(); ++up) {
      dir = dir.parent_path();
      const auto candidate = dir / "share" / "postbox" / "profiles";
      if (std::filesystem::is_directory(candidate, ec)) {
        dirs.push_back(candidate.string());
        break;
      }
    }
  }
#ifdef POSTBOX_INSTALL_PROFILE_DIR
  dirs.emplace_back(POSTBOX_INSTALL_PROFILE_DIR);
#endif
  return dirs;
}

std::vector<int> parse_dims(std::string_view text, std::string_view what) {
  std::vector<int> dims;
  for (auto part : split(text, 'x')) {
    const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos;
    if (!digits || dims.size() == 6)
      throw InputError(std::string(what) + " must look like 8x8 or 4x4x4 (at most 6 extents), got '" + std::string(text) + "'");
    dims.push_back(static_cast<int>(parse_int(part, std::string(what) + " extent", 1, kMaxMeshNodes)));
  }
  check_dims(dims, std::string(what) + " " + std::string(text));
  return dims;
}

Placement parse_placement(std::string_view text, std::uint64_t seed) {
  Placement pl;
  pl.seed = seed;
  if (text == "row-major") {
    pl.kind = PlacementKind::row_major;
  } else if (text == "snake") {
    pl.kind = PlacementKind::snake;
  } else if (text == "random") {
    pl.kind = PlacementKind::random;
  } else if (text.starts_with("list:")) {
    pl.kind = PlacementKind::list;
    for (auto part : split(text.substr(5), ',')) {
      const std::string s(part);
      std::int64_t v = -1;
      try {
        v = parse_int(s, "placement", 0, std::numeric_limits<int>::max());  // parse.hpp's grammar
      } catch (const InputError&) {
        throw FieldError({FieldError::field("placement"), {" list: '" + s + "' is not a node number"}});
      }
      pl.nodes.push_back(static_cast<int>(v));
    }
  } else {
    throw FieldError({FieldError::field("placement"),
                      {" must be row-major, snake, random or list:N,N,..., got '" + std::string(text) + "'"}});
  }
  return pl;
}

namespace {

// m as a machine of the registered model hm with these figures (its costs computed once).
void set_host_model(Machine& m, const HostModel& hm, std::vector<double> figures) {
  m.kind = ModelKind::host;
  m.host_model = hm.name;
  m.host = hm.costs(figures);
  m.figures = std::move(figures);
  const HostCosts& c = m.host;
  for (const Linear* term : {&c.send_overhead, &c.send_gap, &c.recv_overhead, &c.recv_gap}) {
    for (const double x : {term->base, term->per_byte, term->per_packet})
      if (!std::isfinite(x) || x < 0 || x > kMaxNumber)
        throw InputError("its host costs must be finite numbers in 0..1e9");
  }
  if (!std::isfinite(c.wire) || c.wire < 0 || c.wire > kMaxNumber)
    throw InputError("its host costs must be finite numbers in 0..1e9");
}

// A [model]-like table of a complete-graph model (postal, sr / crossbar, logp, a registered
// one) into m; false if
// its kind is none of these (the caller decides what else it may be).
bool read_flat_model(const Reader& model, const std::string& kind, Machine& m) {
  const std::string_view origin = model.origin();
  if (kind == "postal") {
    model.allow({"kind", "lambda"});
    m.kind = ModelKind::postal;
    m.lambda = model.number("lambda");
    if (m.lambda < 1) bad(origin, "field '" + model.field("lambda") + "' must be at least 1");
  } else if (kind == "sr" || kind == "crossbar") {
    model.allow({"kind", "send_us", "recv_us"});
    m.kind = ModelKind::send_recv;
    m.send_us = model.number("send_us");
    m.recv_us = model.number("recv_us");
    if (m.send_us <= 0) bad(origin, "field '" + model.field("send_us") + "' must be positive");
  } else if (kind == "logp") {
    model.allow({"kind", "L_us", "o_us", "g_us", "G_us_per_byte", "O_us_per_byte", "S_bytes"});
    m.kind = ModelKind::loggp;
    m.L = model.number("L_us");
    m.o = model.number("o_us");
    m.g = model.number("g_us");
    m.G = model.number("G_us_per_byte");
    m.O = model.number_or("O_us_per_byte", 0);
    if (model.has("S_bytes")) m.S = static_cast<std::uint64_t>(model.integer("S_bytes"));
  } else if (const auto hm = find_host_model(kind)) {
    std::vector<std::string_view> keys{"kind"};
    for (const std::string& f : hm->figures) keys.push_back(f);
    model.allow(keys);
    std::vector<double> figures;
    for (const std::string& f : hm->figures) figures.push_back(model.number(f));
    try {
      set_host_model(m, *hm, std::move(figures));
    } catch (const InputError& e) {
      bad(origin, "model '" + kind + "': " + e.what());
    }
  } else {
    return false;
  }
  return true;
}

void check_cluster(const ClusterSpec& c, const std::string& what) {
  if (c.nodes < 1 || c.cores_per_node < 1 || c.nodes > kMaxClusterRanks / c.cores_per_node)
    throw InputError(what + " must have at least 1 node and 1 core per node, at most " +
                     std::to_string(kMaxClusterRanks) + " ranks in all");
}

}  // namespace

// toml++ 3.3 (Debian 12) has undefined behaviour on some text it should refuse, so such text is
// refused here, before toml++ sees it, naming the line:
//  * It reaches __builtin_unreachable() when it asks whether some non-ASCII code points
//    (U+00A1..U+0499 among them: 'µ', 'ö') are whitespace: where a key, a value or whitespace
//    may come, and in a multi-line basic string right after a backslash or in the whitespace a
//    line-ending backslash skips. TOML allows non-ASCII only inside strings and comments:
//    refused outside them, and in those two spots of multi-line basic strings.
//  * A table header whose key starts with neither a bare-key character nor a quote ("[{model]")
//    fails an assertion in toml++'s parse_key() (an assumption under NDEBUG with clang).
void check_toml_text(std::string_view t, std::string_view origin) {
  int line = 1;
  auto refuse = [&](const char* what) {
    bad(origin, "line " + std::to_string(line) + ": " + what);
  };
  auto non_ascii = [&](std::size_t i) { return i < t.size() && static_cast<unsigned char>(t[i]) >= 0x80; };
  auto blank = [&](std::size_t i) { return i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n'); };
  auto space = [&](std::size_t i) { return i < t.size() && (t[i] == ' ' || t[i] == '\t'); };
  auto key_start = [&](std::size_t i) {
    if (i >= t.size()) return true;  // toml++ refuses the end of the text itself
    const char k = t[i];
    return (k >= 'A' && k <= 'Z') || (k >= 'a' && k <= 'z') || (k >= '0' && k <= '9') || k == '_' || k == '-' ||
           k == '"' || k == '\'' || k == ']';
  };
  constexpr const char* kNonAscii = "a non-ASCII character outside a string or comment (TOML allows one only there)";
  bool line_start = true;  // only blanks so far on this line
  bool in_value = false;   // after a key's '=', until the line ends outside brackets
  int depth = 0;           // open '[' and '{' of the value
  std::size_t i = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == '\n') {
      ++line;
      ++i;
      line_start = true;
      if (depth == 0) in_value = false;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    const bool at_line_start = line_start;
    line_start = false;
    if (c == '#') {  // a comment, to the end of the line
      while (i < t.size() && t[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const bool basic = c == '"';
      const bool multi = t.substr(i, 3) == std::string_view(basic ? R"(""")" : "'''");
      i += multi ? 3 : 1;
      while (i < t.size()) {
        const char d = t[i];
        if (d == '\n') {
          if (!multi) break;  // toml++ refuses it; the scan goes on outside the string
          ++line;
          ++i;
        } else if (d == c) {
          if (!multi) {
            ++i;
            break;
          }
          std::size_t run = 0;
          while (i + run < t.size() && t[i + run] == c) ++run;
          i += run;
          if (run >= 3) break;  // three close the string; up to two more before them are content
        } else if (basic && d == '\\') {
          ++i;
          if (!multi) {
            if (i < t.size() && t[i] != '\n') ++i;  // the escaped character
          } else if (non_ascii(i)) {
            refuse("a non-ASCII character right after a backslash in a multi-line string");
          } else if (blank(i)) {  // a line-ending backslash: toml++ skips the blanks after it
            for (; blank(i); ++i)
              if (t[i] == '\n') ++line;
            if (non_ascii(i)) refuse("a non-ASCII character after a line-ending backslash in a multi-line string");
          } else if (i < t.size()) {
            ++i;  // the escaped character
          }
        } else {
          ++i;
        }
      }
    } else if (non_ascii(i)) {
      refuse(kNonAscii);
    } else {
      if (c == '[' && at_line_start && !in_value) {  // a table header: [key] or [[key]]
        std::size_t k = i + 1;
        while (space(k)) ++k;
        if (k < t.size() && t[k] == '[') {
          ++k;
          while (space(k)) ++k;
        }
        if (non_ascii(k)) refuse(kNonAscii);
        if (!key_start(k)) refuse("a table header must start with a key or a quoted key");
      } else if (c == '=' && depth == 0) {
        in_value = true;
      } else if ((c == '[' || c == '{') && in_value) {
        ++depth;
      } else if ((c == ']' || c == '}') && depth > 0) {
        --depth;
      }
      ++i;
    }
  }
}

Machine parse_profile(std::string_view toml_text, std::string_view origin) {
  check_toml_text(toml_text, origin);
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    bad(origin, "TOML syntax error at line " + std::to_string(src.begin.line) + ": " + std::string(e.description()));
  }
  Reader top(root, "", origin);
  top.allow({"name", "description", "model", "mesh", "host", "placement", "calibration", "cluster", "intra", "inter"});
  Machine m;
  m.name = top.string("name");
  if (top.has("description")) (void)top.string("description");
  Reader model = top.table("model");
  const std::string kind = model.string("kind");
  if (read_flat_model(model, kind, m)) {
  } else if (kind == "mesh") {
    model.allow({"kind"});
    m.kind = ModelKind::mesh;
  } else if (kind == "cluster") {
    model.allow({"kind"});
    m.kind = ModelKind::cluster;
  } else {
    bad(origin, "field 'model.kind' must be postal, sr, crossbar, logp, mesh or cluster, got '" + kind + "'");
  }
  if (m.kind == ModelKind::cluster) {
    if (top.has("placement")) bad(origin, "table 'placement' does not apply to a cluster (rank r is on node r / cores_per_node)");
    Reader cl = top.table("cluster");
    cl.allow({"nodes", "cores_per_node"});
    m.cluster.nodes = static_cast<int>(std::max<std::int64_t>(cl.integer("nodes"), 0));
    m.cluster.cores_per_node = static_cast<int>(std::max<std::int64_t>(cl.integer("cores_per_node"), 0));
    check_cluster(m.cluster, "profile " + std::string(origin) + ": table 'cluster'");
    for (const char* level : {"intra", "inter"}) {
      Reader t = top.table(level);
      Machine lm;
      lm.name = m.name + "." + level;
      const std::string k = t.string("kind");
      if (!read_flat_model(t, k, lm))
        bad(origin, "field '" + t.field("kind") + "' must be postal, sr, crossbar or logp, got '" + k + "'");
      m.levels.push_back(std::move(lm));
    }
  } else {
    for (const char* t : {"cluster", "intra", "inter"})
      if (top.has(t)) bad(origin, "table '" + std::string(t) + "' is only for model.kind = \"cluster\"");
  }
  if (m.kind == ModelKind::mesh) {
    Reader mesh = top.table("mesh");
    mesh.allow({"dims", "wrap", "switching", "packet_bytes", "header_bytes", "link_mb_per_s", "router_delay_us",
                "send_buffer_packets"});
    m.mesh.dims = mesh.ints("dims");
    if (m.mesh.dims.empty() || m.mesh.dims.size() > 6 ||
        std::any_of(m.mesh.dims.begin(), m.mesh.dims.end(), [](int d) { return d < 1; }))
      bad(origin, "field 'mesh.dims' must list 1 to 6 positive extents");
    check_dims(m.mesh.dims, "profile " + std::string(origin) + ": field 'mesh.dims'");
    m.mesh.wrap = mesh.boolean("wrap");
    const std::string sw = mesh.string("switching");
    if (sw == "wormhole") m.mesh.switching = Switching::wormhole;
    else if (sw == "store-and-forward") m.mesh.switching = Switching::store_and_forward;
    else bad(origin, "field 'mesh.switching' must be wormhole or store-and-forward, got '" + sw + "'");
    m.mesh.packet_bytes = static_cast<std::uint64_t>(mesh.integer("packet_bytes"));
    m.mesh.header_bytes = static_cast<std::uint64_t>(mesh.integer("header_bytes"));
    m.mesh.link_bytes_per_us = mesh.number("link_mb_per_s");
    if (m.mesh.link_bytes_per_us <= 0) bad(origin, "field 'mesh.link_mb_per_s' must be positive");
    m.mesh.router_delay_us = mesh.number("router_delay_us");
    m.mesh.send_buffer_packets = static_cast<int>(std::min<std::int64_t>(mesh.integer("send_buffer_packets"), 1 << 20));
    Reader host = top.table("host");
    host.allow({"send", "send_overhead", "isend_overhead", "recv_overhead", "reduce_us_per_byte", "copy_us_per_byte"});
    const std::string send = host.string("send");
    if (send == "blocking" || send == "csend") m.send_mode = SendMode::blocking;
    else if (send == "nonblocking" || send == "isend") m.send_mode = SendMode::nonblocking;
    else bad(origin, "field 'host.send' must be blocking or nonblocking, got '" + send + "'");
    m.send_overhead = host.cost("send_overhead");
    m.isend_overhead = host.cost("isend_overhead");
    m.recv_overhead = host.cost("recv_overhead");
    m.reduce_us_per_byte = host.number_or("reduce_us_per_byte", 0);
    m.copy_us_per_byte = host.number_or("copy_us_per_byte", 0);
  } else {
    if (top.has("mesh")) bad(origin, "table 'mesh' is only for model.kind = \"mesh\"");
    if (top.has("host")) {
      Reader host = top.table("host");
      host.allow({"reduce_us_per_byte", "copy_us_per_byte"});
      m.reduce_us_per_byte = host.number_or("reduce_us_per_byte", 0);
      m.copy_us_per_byte = host.number_or("copy_us_per_byte", 0);
    }
  }
  if (top.has("placement")) {
    Reader pl = top.table("placement");
    pl.allow({"kind", "seed", "nodes"});
    const std::string k = pl.string("kind");
    const auto seed = pl.has("seed") ? static_cast<std::uint64_t>(pl.integer("seed")) : 1;
    if (k == "list") {
      m.placement.kind = PlacementKind::list;
      m.placement.seed = seed;
      m.placement.nodes = pl.ints("nodes");
    } else {
      try {
        m.placement = parse_placement(k, seed);
      } catch (const InputError&) {
        bad(origin, "field 'placement.kind' must be row-major, snake, random or list, got '" + k + "'");
      }
    }
  }
  if (top.has("calibration")) (void)top.table("calibration");  // free-form provenance (local profile)
  return m;
}

namespace {
// A model string ("postal:2", "sr:1:3", "logp:5:1:2:0.01"), or nullopt when spec is none.
std::optional<Machine> model_string(std::string_view spec) {
  const auto parts = split(spec, ':');
  const std::string s(spec);
  // Model strings: the model's numbers, then optionally C, the CPU time per byte of reduce
  // and copy (default 0), all in the model's unit.
  auto cost_per_byte = [&](Machine& m, std::size_t at, const char* form) {
    if (parts.size() == at + 1) {
      m.reduce_us_per_byte = m.copy_us_per_byte = parse_number(parts[at], std::string(form) + " C");
    } else if (parts.size() != at) {
      throw InputError(std::string("machine '") + form + "' takes " + std::to_string(at - 1) + " or " +
                       std::to_string(at) + " numbers, got '" + s + "'");
    }
  };
  if (parts[0] == "postal") {
    Machine m;
    cost_per_byte(m, 2, "postal:L[:C]");
    m.name = s;
    m.kind = ModelKind::postal;
    m.lambda = parse_number(parts[1], "postal λ");
    if (m.lambda < 1) throw InputError("postal λ must be at least 1, got '" + std::string(parts[1]) + "'");
    return m;
  }
  if (parts[0] == "sr") {
    Machine m;
    cost_per_byte(m, 3, "sr:S:R[:C]");
    m.name = s;
    m.kind = ModelKind::send_recv;
    m.send_us = parse_number(parts[1], "sr send latency S");
    m.recv_us = parse_number(parts[2], "sr receive latency R");
    if (m.send_us <= 0) throw InputError("sr send latency S must be positive");
    return m;
  }
  if (parts[0] == "logp") {
    // logp:L:o:g:G[:C], then LogGOPS's O=X (CPU time per byte) and S=N (rendezvous above N
    // bytes), each at most once, in any order, after the numbers.
    constexpr const char* kForm = "logp:L:o:g:G[:C][:O=X][:S=N]";
    Machine m;
    m.name = s;
    m.kind = ModelKind::loggp;
    std::size_t numbers = parts.size();  // parts[1, numbers) are the numbers
    bool seen_O = false, seen_S = false;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      const std::size_t eq = parts[i].find('=');
      if (eq == std::string_view::npos) {
        if (numbers != parts.size())
          throw InputError(std::string("machine '") + kForm + "': the numbers come before O= and S=, got '" + s + "'");
        continue;
      }
      numbers = std::min(numbers, i);
      const std::string_view key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
      bool& seen = key == "O" ? seen_O : seen_S;
      if (key != "O" && key != "S")
        throw InputError(std::string("machine '") + kForm + "' takes O= and S=, not '" + std::string(key) + "=', got '" + s + "'");
      if (seen) throw InputError("machine '" + s + "' gives " + std::string(key) + "= twice");
      seen = true;
      if (key == "O") m.O = parse_number(value, "logp O");
      else m.S = static_cast<std::uint64_t>(parse_int(value, "logp S", 0, static_cast<std::int64_t>(kMaxNumber)));
    }
    if (numbers != 5 && numbers != 6)
      throw InputError(std::string("machine '") + kForm + "' takes 4 or 5 numbers, got '" + s + "'");
    if (numbers == 6) m.reduce_us_per_byte = m.copy_us_per_byte = parse_number(parts[5], "logp:L:o:g:G[:C] C");
    m.L = parse_number(parts[1], "logp L");
    m.o = parse_number(parts[2], "logp o");
    m.g = parse_number(parts[3], "logp g");
    m.G = parse_number(parts[4], "logp G");
    return m;
  }
  if (const auto hm = find_host_model(parts[0])) {
    Machine m;
    const std::size_t k = hm->figures.size();
    std::string form = hm->name;
    for (const std::string& f : hm->figures) form += ":" + f;
    form += "[:C]";
    cost_per_byte(m, k + 1, form.c_str());
    m.name = s;
    std::vector<double> figures;
    for (std::size_t i = 0; i < k; ++i) figures.push_back(parse_number(parts[i + 1], hm->name + " " + hm->figures[i]));
    set_host_model(m, *hm, std::move(figures));
    return m;
  }
  if (parts[0] == "cluster") {
    // cluster:NODESxCORES[:PROFILE]: a cluster profile (default cluster-example) rescaled. A
    // profile path may hold ':' itself, so everything after the second ':' is the profile.
    const std::string usage = "machine 'cluster:NODESxCORES[:PROFILE]'";
    if (parts.size() < 2) throw InputError(usage + " needs NODESxCORES, got '" + s + "'");
    const auto nc = split(parts[1], 'x');
    const auto digits = [](std::string_view t) {
      return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (nc.size() != 2 || !digits(nc[0]) || !digits(nc[1]))
      throw InputError(usage + ": NODESxCORES must look like 64x16, got '" + std::string(parts[1]) + "'");
    ClusterSpec c;
    c.nodes = static_cast<int>(parse_int(nc[0], "cluster nodes", 1, kMaxClusterRanks));
    c.cores_per_node = static_cast<int>(parse_int(nc[1], "cluster cores per node", 1, kMaxClusterRanks));
    check_cluster(c, "cluster " + std::string(parts[1]));
    const std::size_t rest = parts[0].size() + 1 + parts[1].size();
    const std::string_view profile = rest < spec.size() ? spec.substr(rest + 1) : std::string_view("cluster-example");
    if (profile.empty() || profile.starts_with("cluster:"))
      throw InputError(usage + ": PROFILE must name a cluster profile, got '" + s + "'");
    Machine m = load_machine(profile);
    if (m.kind != ModelKind::cluster)
      throw InputError(usage + ": profile '" + std::string(profile) + "' is not a cluster (model.kind = \"cluster\")");
    m.cluster = c;
    m.name = s;
    return m;
  }
  return std::nullopt;
}
}  // namespace

Machine load_machine(std::string_view spec) {
  if (spec.empty()) throw FieldError({FieldError::field("machine"), {" is empty"}});
  const std::string s(spec);
  try {
    if (auto m = model_string(spec)) return *m;
  } catch (const InputError& e) {
    // Name the whole string, as typed ("postal:nan" rather than λ's 'nan' alone).
    const std::string what = e.what();
    if (what.find("'" + s + "'") != std::string::npos) throw;
    throw InputError("machine '" + s + "': " + what);
  }
  std::filesystem::path path;
  if (looks_like_name(spec)) {
    for (const auto& dir : profile_dirs()) {
      const auto candidate = std::filesystem::path(dir) / (s + ".toml");
      std::error_code ec;
      if (std::filesystem::is_regular_file(candidate, ec)) {
        path = candidate;
        break;
      }
    }
    if (path.empty())
      throw InputError("unknown machine '" + s + "': neither a model string (postal:L, sr:S:R, logp:L:o:g:G, cluster:NxC) nor a profile");
  } else {
    path = s;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError("machine '" + s + "' is a directory, not a profile file");
    if (!std::filesystem::is_regular_file(path, ec)) {
      // A FIFO or a device would block the read: refused, and said so.
      if (std::filesystem::exists(path, ec)) throw InputError("machine '" + s + "' is not a regular file");
      throw InputError("unknown machine '" + s + "': no such profile file");
    }
  }
  return parse_profile(read_regular_file(path, "profile file '" + path.string() + "'"), path.filename().string());
}

}  // namespace postbox::sim
