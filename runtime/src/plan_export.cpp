#include "postbox/runtime/plan_export.hpp"

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

using nlohmann::json;


json region_json(const Region& g) {
  return json{{"buffer", g.buffer == Buffer::user ? "user" : "scratch"}, {"offset", g.offset}, {"bytes", g.bytes}};
}

// Field access that turns nlohmann's type errors into one-line InputErrors.
template <class T>
T get(const json& j, const char* key, const std::string& ctx) {
  if (!j.is_object() || !j.contains(key)) throw InputError("plan JSON: " + ctx + " lacks \"" + key + "\"");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError("plan JSON: " + ctx + " has an ill-typed \"" + key + "\"");
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
  for (const RankProgram& prog : plan.ranks) {
    json ops = json::array();
    for (const Op& op : prog.ops) {
      json o{{"code", to_string(op.code)}, {"peer", op.peer}, {"a", region_json(op.a)}, {"tag", op.tag}, {"deps", op.deps}};
      if (op.code == OpCode::reduce || op.code == OpCode::copy) o["b"] = region_json(op.b);
      if (op.code == OpCode::reduce) o["src_first"] = op.src_first;
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
         {"user_bytes", plan.user_bytes},
         {"scratch_bytes", plan.scratch_bytes},
         {"ranks", std::move(ranks)}};
  return j.dump(1);
}

Plan plan_from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw InputError(std::string("plan JSON: not valid JSON (byte ") + std::to_string(e.byte) + ")");
  }
  Plan plan;
  plan.op = get<std::string>(j, "op", "the plan");
  plan.algo = get<std::string>(j, "algo", "the plan");
  plan.p = get<int>(j, "p", "the plan");
  plan.root = get<int>(j, "root", "the plan");
  plan.bytes = get<std::uint64_t>(j, "bytes", "the plan");
  plan.elem_bytes = get<std::uint32_t>(j, "elem_bytes", "the plan");
  plan.needs_commutative = get<bool>(j, "needs_commutative", "the plan");
  plan.user_bytes = get<std::vector<std::uint64_t>>(j, "user_bytes", "the plan");
  plan.scratch_bytes = get<std::vector<std::uint64_t>>(j, "scratch_bytes", "the plan");
  const json ranks = get<json>(j, "ranks", "the plan");
  if (!ranks.is_array()) throw InputError("plan JSON: \"ranks\" is not an array");
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
      prog.ops.push_back(std::move(op));
    }
    plan.ranks.push_back(std::move(prog));
  }
  return plan;
}

std::string plan_to_dot(const Plan& plan) {
  std::ostringstream out;
  out << "digraph plan {\n  label=\"" << plan.op << " / " << plan.algo << ", p = " << plan.p << ", " << plan.bytes
      << " bytes\";\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  for (int r = 0; r < static_cast<int>(plan.ranks.size()); ++r) {
    const auto& ops = plan.ranks[static_cast<std::size_t>(r)].ops;
    out << "  subgraph cluster_r" << r << " {\n    label=\"rank " << r << "\";\n";
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const Op& op = ops[j];
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
  // Messages: the k-th send a→b to the k-th recv at b from a.
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> recv_ops;
  for (int r = 0; r < static_cast<int>(plan.ranks.size()); ++r) {
    const auto& ops = plan.ranks[static_cast<std::size_t>(r)].ops;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      if (ops[j].code == OpCode::recv) {
        recv_ops[(static_cast<std::uint64_t>(ops[j].peer) << 32) | static_cast<std::uint32_t>(r)].push_back(j);
      }
    }
  }
  for (int r = 0; r < static_cast<int>(plan.ranks.size()); ++r) {
    const auto& ops = plan.ranks[static_cast<std::size_t>(r)].ops;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      if (ops[j].code != OpCode::send) continue;
      const auto it = recv_ops.find((static_cast<std::uint64_t>(r) << 32) | static_cast<std::uint32_t>(ops[j].peer));
      if (it == recv_ops.end() || it->second.size() <= ops[j].tag) continue;  // unmatched: validate() reports it
      out << "  r" << r << "_" << j << " -> r" << ops[j].peer << "_" << it->second[ops[j].tag] << " [style=dashed, label=\""
          << ops[j].a.bytes << "b\"];\n";
    }
  }
  out << "}\n";
  return out.str();
}

std::string plan_to_goal(const Plan& plan) {
  std::ostringstream out;
  out << "// postbox plan: op " << plan.op << ", algo " << plan.algo << ", p " << plan.p << ", root " << plan.root
      << ", " << plan.bytes << " bytes\n";
  out << "num_ranks " << plan.p << "\n";
  for (int r = 0; r < static_cast<int>(plan.ranks.size()); ++r) {
    const auto& ops = plan.ranks[static_cast<std::size_t>(r)].ops;
    out << "rank " << r << " {\n";
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const Op& op = ops[j];
      out << "l" << j << ": ";
      switch (op.code) {
        case OpCode::send: out << "send " << op.a.bytes << "b to " << op.peer << " tag " << op.tag; break;
        case OpCode::recv: out << "recv " << op.a.bytes << "b from " << op.peer << " tag " << op.tag; break;
        case OpCode::reduce:
        case OpCode::copy: out << "calc " << op.a.bytes; break;
      }
      out << "\n";
    }
    for (std::size_t j = 0; j < ops.size(); ++j)
      for (std::uint32_t d : ops[j].deps) out << "l" << j << " requires l" << d << "\n";
    out << "}\n";
  }
  return out.str();
}

}  // namespace postbox
