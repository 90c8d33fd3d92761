#include "postbox/frontend/goal_parse.hpp"

#include <cctype>
#include <charconv>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

// Splits one (comment-free) line into tokens: identifiers, integers (with an optional leading
// '-'), ':', '{', '}', and a size "<n>b" as the two tokens "<n>" and "b".
std::vector<std::string> tokenize(std::string_view line, int lineno) {
  std::vector<std::string> toks;
  std::size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == ':' || c == '{' || c == '}') {
      toks.emplace_back(1, c);
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '-' && i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1])))) {
      std::size_t j = i + 1;
      while (j < line.size() && std::isdigit(static_cast<unsigned char>(line[j]))) ++j;
      toks.emplace_back(line.substr(i, j - i));
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      std::size_t j = i + 1;
      while (j < line.size() && (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '_')) ++j;
      toks.emplace_back(line.substr(i, j - i));
      i = j;
    } else {
      throw InputError("GOAL line " + std::to_string(lineno) + ": unexpected character '" + std::string(1, c) + "'");
    }
  }
  return toks;
}

std::int64_t to_int(const std::string& s, int lineno, const char* what) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    throw InputError("GOAL line " + std::to_string(lineno) + ": expected " + what + ", got '" + s + "'");
  }
  return v;
}

// The words of a directive, split at blanks.
std::vector<std::string> tokenize_words(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\r') ++j;
    if (j > i) out.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

bool is_int(const std::string& s) {
  if (s.empty()) return false;
  const std::size_t start = s[0] == '-' ? 1 : 0;
  if (start == s.size()) return false;
  for (std::size_t i = start; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

}  // namespace

GoalSchedule parse_goal(std::string_view text) {
  GoalSchedule sched;
  bool have_num_ranks = false;
  GoalRank* current = nullptr;
  std::set<std::string> labels;
  std::set<int> seen_ranks;
  bool in_block_comment = false;
  int lineno = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++lineno;
    // Strip comments, keeping a `// postbox:` directive.
    std::string clean;
    std::string directive;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (in_block_comment) {
        if (line.compare(i, 2, "*/") == 0) {
          in_block_comment = false;
          ++i;
        }
        continue;
      }
      if (line.compare(i, 2, "//") == 0) {
        std::string_view rest = std::string_view(line).substr(i + 2);
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
        if (rest.starts_with("postbox:")) directive = std::string(rest.substr(8));
        break;
      }
      if (line.compare(i, 2, "/*") == 0) {
        in_block_comment = true;
        ++i;
        continue;
      }
      clean.push_back(line[i]);
    }
    auto toks = tokenize(clean, lineno);
    std::size_t t = 0;
    auto fail = [&](const std::string& what) -> void {
      throw InputError("GOAL line " + std::to_string(lineno) + ": " + what);
    };
    // A directive: time-unit and pacing stand alone; round follows an op on its line.
    std::uint32_t round = 0;
    if (!directive.empty()) {
      const auto words = tokenize_words(directive);
      if (words.size() == 2 && words[0] == "time-unit") {
        if (!toks.empty()) fail("'time-unit' must be on a line of its own");
        const std::string& u = words[1];
        if (u == "1") {
          sched.time_unit_exp = 0;
        } else if (u.size() == 4 && u.starts_with("1e-") && u[3] >= '0' && u[3] <= '6') {
          sched.time_unit_exp = u[3] - '0';
        } else {
          fail("time-unit must be 1 or 1e-K with K in 0..6, got '" + u + "'");
        }
      } else if (words.size() == 3 && words[0] == "pacing") {
        if (!toks.empty()) fail("'pacing' must be on a line of its own");
        if (words[1] == "delay-receive") sched.pacing = Pacing::delay_receive;
        else if (words[1] == "delay-send") sched.pacing = Pacing::delay_send;
        else fail("pacing must be delay-receive or delay-send, got '" + words[1] + "'");
        const auto L = to_int(words[2], lineno, "the pacing latency");
        if (L < 1 || L > (1 << 20)) fail("the pacing latency must be in 1..2^20");
        sched.pacing_latency = static_cast<std::uint32_t>(L);
      } else if (words.size() == 2 && words[0] == "round") {
        const auto r = to_int(words[1], lineno, "a round");
        if (r < 1 || r > (std::int64_t{1} << 31)) fail("a round must be at least 1");
        round = static_cast<std::uint32_t>(r);
      } else {
        fail("unknown postbox directive '" + directive + "' (time-unit, pacing, round)");
      }
    }
    bool took_round = round == 0;
    auto next = [&](const char* what) -> const std::string& {
      if (t >= toks.size()) fail(std::string("expected ") + what + " at the end of the line");
      return toks[t++];
    };
    while (t < toks.size()) {
      const std::string& tok = toks[t];
      if (current == nullptr) {
        if (tok == "num_ranks") {
          ++t;
          const auto n = to_int(next("an integer"), lineno, "the number of ranks");
          if (n < 1 || n > (std::int64_t{1} << 30)) fail("num_ranks must be in 1..2^30");
          sched.num_ranks = static_cast<int>(n);
          have_num_ranks = true;
        } else if (tok == "rank") {
          ++t;
          const auto r = to_int(next("a rank"), lineno, "a rank");
          if (next("'{'") != "{") fail("expected '{' after the rank number");
          if (!have_num_ranks) fail("rank block before num_ranks");
          if (r < 0 || r >= sched.num_ranks) fail("rank " + std::to_string(r) + " is outside 0..num_ranks-1");
          if (!seen_ranks.insert(static_cast<int>(r)).second) fail("rank " + std::to_string(r) + " is given twice");
          sched.ranks.push_back(GoalRank{static_cast<int>(r), {}, {}});
          current = &sched.ranks.back();
          labels.clear();
        } else {
          fail("expected 'num_ranks' or 'rank', got '" + tok + "'");
        }
        continue;
      }
      if (tok == "}") {
        ++t;
        current = nullptr;
        continue;
      }
      // An item: [label ':'] op, or label (i)requires label.
      GoalOp op;
      if (tok != "send" && tok != "recv" && tok != "calc") {
        if (!std::isalpha(static_cast<unsigned char>(tok[0]))) fail("expected a label or an operation, got '" + tok + "'");
        const std::string label = tok;
        ++t;
        const std::string& what = next("':', 'requires' or 'irequires'");
        if (what == "requires" || what == "irequires") {
          const std::string& on = next("a label");
          if (!labels.contains(label)) fail("dependency names undefined label '" + label + "'");
          if (!labels.contains(on)) fail("dependency names undefined label '" + on + "'");
          current->deps.push_back(GoalDep{label, on, what == "irequires"});
          if (t != toks.size()) fail("unexpected '" + toks[t] + "' after a dependency");
          continue;
        }
        if (what != ":") fail("expected ':', 'requires' or 'irequires' after label '" + label + "'");
        if (labels.contains(label)) fail("label '" + label + "' defined twice");
        labels.insert(label);
        op.label = label;
      }
      const std::string kind = next("'send', 'recv' or 'calc'");
      if (kind == "calc") {
        op.kind = GoalOp::Kind::calc;
        op.size = static_cast<std::uint64_t>(to_int(next("an integer"), lineno, "a calc size"));
        if (t < toks.size() && toks[t] == "cpu") {
          ++t;
          op.cpu = static_cast<int>(to_int(next("an integer"), lineno, "a cpu"));
        }
      } else if (kind == "send" || kind == "recv") {
        op.kind = kind == "send" ? GoalOp::Kind::send : GoalOp::Kind::recv;
        const std::string& size = next("a size");
        if (!is_int(size) || size[0] == '-') fail("expected a size in bytes, got '" + size + "'");
        op.size = static_cast<std::uint64_t>(to_int(size, lineno, "a size"));
        if (next("'b'") != "b") fail("expected 'b' after the size");
        const std::string& dir = next(kind == "send" ? "'to'" : "'from'");
        if (dir != (kind == "send" ? "to" : "from")) fail("expected '" + std::string(kind == "send" ? "to" : "from") + "'");
        op.peer = to_int(next("a rank"), lineno, "a rank");
        if (op.peer < -1 || (op.peer == -1 && kind == "send") || op.peer >= sched.num_ranks) {
          fail("peer " + std::to_string(op.peer) + " is outside 0..num_ranks-1");
        }
        bool seen_tag = false, seen_cpu = false, seen_nic = false;
        while (t < toks.size()) {
          const std::string& opt = next("an option");
          if (opt == "tag" && !seen_tag && !seen_cpu && !seen_nic) {
            op.tag = to_int(next("a tag"), lineno, "a tag");
            if (op.tag < -1) fail("tag must be -1 or non-negative");
            seen_tag = true;
          } else if (opt == "cpu" && !seen_cpu && !seen_nic) {
            op.cpu = static_cast<int>(to_int(next("an integer"), lineno, "a cpu"));
            seen_cpu = true;
          } else if (opt == "nic" && !seen_nic) {
            op.nic = static_cast<int>(to_int(next("an integer"), lineno, "a nic"));
            seen_nic = true;
          } else {
            fail("unexpected '" + opt + "' (options are tag, cpu, nic, in that order)");
          }
        }
      } else {
        fail("expected 'send', 'recv' or 'calc', got '" + kind + "'");
      }
      if (t != toks.size()) fail("unexpected '" + toks[t] + "' at the end of an operation");
      op.line = lineno;
      op.round = round;
      took_round = true;
      current->ops.push_back(std::move(op));
    }
    if (!took_round) fail("'round' must follow an operation on its line");
  }
  if (current != nullptr) throw InputError("GOAL: rank " + std::to_string(current->rank) + " is not closed with '}'");
  if (!have_num_ranks) throw InputError("GOAL: no num_ranks line");
  return sched;
}

}  // namespace postbox
