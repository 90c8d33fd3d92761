#include "postbox/frontend/plan_export.hpp"

#include <nlohmann/json.hpp>

#include <limits>
#include <sstream>
#include <type_traits>
#include <string>
#include <unordered_map>
#include <vector>

#include "postbox/collectives/s2p.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/file.hpp"
#include "postbox/runtime/ticks.hpp"

namespace postbox {
namespace {

using nlohmann::json;


json region_json(const Region& g) {
  return json{{"buffer", g.buffer == Buffer::user ? "user" : "scratch"}, {"offset", g.offset}, {"bytes", g.bytes}};
}

// Field access that turns nlohmann's type errors into one-line InputErrors.
// An integer field must be a JSON integer within T's range: nlohmann's get<T> would truncate
// -0.5 to 0 and wrap 4294967297 to 1 or -5 to 2^64 - 5.
template <class T>
T integer(const json& v, const char* key, const std::string& ctx) {
  const bool in_range = v.is_number_unsigned() ? v.get<std::uint64_t>() <= std::numeric_limits<T>::max()
                        : v.is_number_integer()
                            ? v.get<std::int64_t>() >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
                                  (v.get<std::int64_t>() < 0 ||
                                   static_cast<std::uint64_t>(v.get<std::int64_t>()) <= std::numeric_limits<T>::max())
                            : false;
  if (!in_range) {
    throw InputError("plan JSON: " + ctx + " has \"" + key + "\" = " + v.dump() + ", not an integer in " +
                     std::to_string(std::numeric_limits<T>::min()) + ".." + std::to_string(std::numeric_limits<T>::max()));
  }
  return v.get<T>();
}

template <class T>
struct is_int_vector : std::false_type {};
template <class U>
struct is_int_vector<std::vector<U>> : std::bool_constant<std::is_integral_v<U>> {};

template <class T>
T get(const json& j, const char* key, const std::string& ctx) {
  if (!j.is_object() || !j.contains(key)) throw InputError("plan JSON: " + ctx + " lacks \"" + key + "\"");
  const json& v = j.at(key);
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return integer<T>(v, key, ctx);
  } else if constexpr (is_int_vector<T>::value) {
    if (!v.is_array()) throw InputError("plan JSON: " + ctx + " has an ill-typed \"" + key + "\" (not an array)");
    T out;
    out.reserve(v.size());
    for (const json& e : v) out.push_back(integer<typename T::value_type>(e, key, ctx));
    return out;
  } else {
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      throw InputError("plan JSON: " + ctx + " has an ill-typed \"" + key + "\"");
    }
  }
}

Region region_from(const json& j, const std::string& ctx) {
  Region g;
  const auto buf = get<std::string>(j, "buffer", ctx);
  if (buf == "user") g.buffer = Buffer::user;
  else if (buf == "scratch") g.buffer = Buffer::scratch;
  else throw InputError("plan JSON: " + ctx + " names buffer '" + buf + "' (user or scratch)");
  g.offset = get<std::uint64_t>(j, "offset", ctx);
  g.bytes = get<std::uint64_t>(j, "bytes", ctx);
  return g;
}

std::string region_str(const Region& g) {
  return std::string(g.buffer == Buffer::user ? "u" : "s") + "[" + std::to_string(g.offset) + "+" + std::to_string(g.bytes) + "]";
}

}  // namespace

std::string plan_to_json(const Plan& plan) {
  json ranks = json::array();
  for (int r = 0; r < plan.rank_count(); ++r) {
    json ops = json::array();
    for (const OpView op : plan.ops(r)) {
      json o{{"code", to_string(op.code)}, {"peer", op.peer}, {"a", region_json(op.a)}, {"tag", op.tag},
             {"deps", std::vector<std::uint32_t>(op.deps.begin(), op.deps.end())}};
      if (op.code == OpCode::reduce || op.code == OpCode::copy) o["b"] = region_json(op.b);
      if (op.code == OpCode::reduce) o["src_first"] = op.src_first;
      if (op.round != 0) o["round"] = op.round;
      ops.push_back(std::move(o));
    }
    ranks.push_back(std::move(ops));
  }
  json j{{"op", plan.op},
         {"algo", plan.algo},
         {"p", plan.p},
         {"root", plan.root},
         {"bytes", plan.bytes},
         {"elem_bytes", plan.elem_bytes},
         {"needs_commutative", plan.needs_commutative},
         {"pacing", to_string(plan.pacing)},
         {"pacing_latency", plan.pacing_latency},
         {"user_bytes", plan.user_bytes},
         {"scratch_bytes", plan.scratch_bytes},
         {"ranks", std::move(ranks)}};
  return j.dump(1);
}

Plan plan_from_json_file(const std::string& path, const std::string& what) {
  const std::string text = read_regular_file(path, what);
  try {
    return plan_from_json(text);
  } catch (const InputError& e) {
    throw InputError(what + ": " + e.what());
  }
}

Plan plan_from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw InputError(std::string("plan JSON: not valid JSON (byte ") + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {
    // out_of_range 406: a number beyond a double, e.g. 1e309 (found by the fuzz target).
    throw InputError(std::string("plan JSON: not valid JSON (") + e.what() + ")");
  }
  Plan plan;
  plan.op = get<std::string>(j, "op", "the plan");
  plan.algo = get<std::string>(j, "algo", "the plan");
  plan.p = get<int>(j, "p", "the plan");
  plan.root = get<int>(j, "root", "the plan");
  plan.bytes = get<std::uint64_t>(j, "bytes", "the plan");
  plan.elem_bytes = get<std::uint32_t>(j, "elem_bytes", "the plan");
  plan.needs_commutative = get<bool>(j, "needs_commutative", "the plan");
  if (j.contains("pacing")) {
    const auto pacing = get<std::string>(j, "pacing", "the plan");
    if (pacing == "none") plan.pacing = Pacing::none;
    else if (pacing == "delay-receive") plan.pacing = Pacing::delay_receive;
    else if (pacing == "delay-send") plan.pacing = Pacing::delay_send;
    else throw InputError("plan JSON: pacing '" + pacing + "' (none, delay-receive or delay-send)");
    plan.pacing_latency = get<std::uint32_t>(j, "pacing_latency", "the plan");
  }
  plan.user_bytes = get<std::vector<std::uint64_t>>(j, "user_bytes", "the plan");
  plan.scratch_bytes = get<std::vector<std::uint64_t>>(j, "scratch_bytes", "the plan");
  const json ranks = get<json>(j, "ranks", "the plan");
  if (!ranks.is_array()) throw InputError("plan JSON: \"ranks\" is not an array");
  std::vector<RankProgram> programs;
  programs.reserve(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    RankProgram prog;
    if (!ranks[r].is_array()) throw InputError("plan JSON: rank " + std::to_string(r) + " is not an array of ops");
    for (std::size_t i = 0; i < ranks[r].size(); ++i) {
      const json& o = ranks[r][i];
      const std::string ctx = "rank " + std::to_string(r) + " op " + std::to_string(i);
      Op op;
      const auto code = get<std::string>(o, "code", ctx);
      if (code == "send") op.code = OpCode::send;
      else if (code == "recv") op.code = OpCode::recv;
      else if (code == "reduce") op.code = OpCode::reduce;
      else if (code == "copy") op.code = OpCode::copy;
      else throw InputError("plan JSON: " + ctx + " has unknown code '" + code + "'");
      op.peer = get<int>(o, "peer", ctx);
      op.a = region_from(get<json>(o, "a", ctx), ctx + " region a");
      if (op.code == OpCode::reduce || op.code == OpCode::copy) op.b = region_from(get<json>(o, "b", ctx), ctx + " region b");
      if (op.code == OpCode::reduce) op.src_first = get<bool>(o, "src_first", ctx);
      op.tag = get<std::uint32_t>(o, "tag", ctx);
      op.deps = get<std::vector<std::uint32_t>>(o, "deps", ctx);
      if (o.contains("round")) op.round = get<std::uint32_t>(o, "round", ctx);
      prog.ops.push_back(std::move(op));
    }
    programs.push_back(std::move(prog));
  }
  plan.set_programs(std::move(programs));
  return plan;
}

std::string plan_to_dot(const Plan& plan) {
  std::ostringstream out;
  out << "digraph plan {\n  label=\"" << plan.op << " / " << plan.algo << ", p = " << plan.p << ", " << plan.bytes
      << " bytes\";\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  for (int r = 0; r < plan.rank_count(); ++r) {
    const RankOps ops = plan.ops(r);
    out << "  subgraph cluster_r" << r << " {\n    label=\"rank " << r << "\";\n";
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const OpView op = ops[j];
      out << "    r" << r << "_" << j << " [label=\"" << j << ": " << to_string(op.code);
      if (op.code == OpCode::send) out << " " << region_str(op.a) << " to " << op.peer << " #" << op.tag;
      if (op.code == OpCode::recv) out << " " << region_str(op.a) << " from " << op.peer << " #" << op.tag;
      if (op.code == OpCode::reduce || op.code == OpCode::copy) {
        out << " " << region_str(op.a) << " <- " << region_str(op.b) << (op.src_first ? " (src first)" : "");
      }
      out << "\"];\n";
    }
    for (std::size_t j = 0; j < ops.size(); ++j)
      for (std::uint32_t d : ops[j].deps) out << "    r" << r << "_" << d << " -> r" << r << "_" << j << ";\n";
    out << "  }\n";
  }
  // Messages: the k-th send a→b to the k-th recv at b from a (unmatched ones: validate() reports them).
  const std::vector<std::uint32_t> partner = match_messages(plan);
  for (int r = 0; r < plan.rank_count(); ++r) {
    const RankOps ops = plan.ops(r);
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const OpView op = ops[j];
      const std::uint32_t m = partner[plan.first_op(r) + j];
      if (op.code != OpCode::send || m == kUnmatched) continue;
      out << "  r" << r << "_" << j << " -> r" << op.peer << "_" << m - plan.first_op(op.peer)
          << " [style=dashed, label=\"" << op.a.bytes << "b\"];\n";
    }
  }
  out << "}\n";
  return out.str();
}

std::string plan_to_goal(const Plan& plan, const GoalExportOptions& options) {
  // calc = CPU time of the reduce or copy, in whole time units of the schedule: the machine's
  // unit, or 10^-3 or 10^-6 of it when a calc needs the finer unit (said in a directive).
  const sim::PerByte reduce = sim::to_per_byte(options.reduce_per_byte, "reduce time per byte");
  const sim::PerByte copy = sim::to_per_byte(options.copy_per_byte, "copy time per byte");
  std::int64_t unit = sim::kTicksPerUnit;
  for (std::uint32_t g = 0; g < plan.op_count(); ++g) {
    const OpView op = plan.op_at(g);
    if (op.code != OpCode::reduce && op.code != OpCode::copy) continue;
    const sim::Ticks t = (op.code == OpCode::reduce ? reduce : copy).at(op.a.bytes);
    while (t % unit != 0) unit /= 1000;
  }
  std::ostringstream out;
  out << "// postbox plan: op " << plan.op << ", algo " << plan.algo << ", p " << plan.p << ", root " << plan.root
      << ", " << plan.bytes << " bytes\n";
  if (unit != sim::kTicksPerUnit) {
    out << "// calc values are in " << (unit == 1000 ? "10^-3" : "10^-6")
        << " of the machine's unit: give LogGOPSim L, o, g, G in that unit\n";
    out << "// postbox: time-unit " << (unit == 1000 ? "1e-3" : "1e-6") << "\n";
  }
  if (plan.pacing != Pacing::none) out << "// postbox: pacing " << to_string(plan.pacing) << " " << plan.pacing_latency << "\n";
  if (options.mesh) out << "// postbox: mesh " << options.mesh->rows << "x" << options.mesh->cols << "\n";
  out << "num_ranks " << plan.p << "\n";
  for (int r = 0; r < plan.rank_count(); ++r) {
    const RankOps ops = plan.ops(r);
    out << "rank " << r << " {\n";
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const OpView op = ops[j];
      // A comment only on a line of its own: LogGOPSim's txt2bin takes nothing but tag, cpu,
      // nic or the line's end after an op.
      if (op.round != 0) out << "// postbox: round " << op.round << "\n";
      out << "l" << j << ": ";
      switch (op.code) {
        case OpCode::send: out << "send " << op.a.bytes << "b to " << op.peer << " tag " << op.tag; break;
        case OpCode::recv: out << "recv " << op.a.bytes << "b from " << op.peer << " tag " << op.tag; break;
        case OpCode::reduce: out << "calc " << reduce.at(op.a.bytes) / unit; break;
        case OpCode::copy: out << "calc " << copy.at(op.a.bytes) / unit; break;
      }
      out << "\n";
    }
    for (std::size_t j = 0; j < ops.size(); ++j)
      for (std::uint32_t d : ops[j].deps) out << "l" << j << " requires l" << d << "\n";
    out << "}\n";
  }
  return out.str();
}

PlanExportSelection select_plan_export(const std::map<std::string, std::string>& given, const std::string& format,
                                       const std::optional<std::string>& machine) {
  if (machine && format != "goal") throw InputError("--machine applies to --format goal");
  if (format != "goal" && format != "json" && format != "dot") {
    throw InputError("--format must be goal, json or dot, got '" + format + "'");
  }
  PlanExportSelection sel;
  sel.format = format;
  sel.request = select_plan(given, kRunSelectionDefaults);
  if (machine) {
    // The plan sim builds on this machine (its λ rule included), so sim --goal of the export
    // gives sim's time.
    auto emulated = given;
    for (const auto& [key, text] : kRunSelectionDefaults.defaults) emulated.emplace(key, text);
    emulated["machine"] = *machine;
    const EmulatedRun run = select_emulated_run(emulated);
    sel.request = run.request;
    sel.goal.reduce_per_byte = run.machine.reduce_us_per_byte;
    sel.goal.copy_per_byte = run.machine.copy_us_per_byte;
  }
  if (op_takes_mesh(sel.request.op)) sel.goal.mesh = s2p_request_mesh(sel.request);  // sim --goal gives the machine these dims
  return sel;
}

std::string export_plan(const PlanExportSelection& sel) {
  const Plan plan = build_plan(sel.request);
  if (sel.format == "goal") return plan_to_goal(plan, sel.goal);
  if (sel.format == "json") return plan_to_json(plan) + '\n';
  if (sel.format == "dot") return plan_to_dot(plan);
  throw InputError("--format must be goal, json or dot, got '" + sel.format + "'");
}

}  // namespace postbox
