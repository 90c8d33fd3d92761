#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/selection.hpp"

#include <cctype>
#include <charconv>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "postbox/collectives/mesh.hpp"
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

// One GOAL text read line by line: each line's comments stripped (a `// postbox:` directive
// kept), its directive applied, then its tokens read as a header item (num_ranks, rank R {)
// outside a rank block or as a rank item (an op, a dependency, '}') inside one.
class GoalReader {
 public:
  GoalSchedule read(std::string_view text) {
    std::size_t pos = 0;
    while (pos <= text.size()) {
      const std::size_t nl = text.find('\n', pos);
      const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
      ++lineno_;
      read_line(line);
    }
    if (current_ != nullptr) throw InputError("GOAL: rank " + std::to_string(current_->rank) + " is not closed with '}'");
    if (!have_num_ranks_) throw InputError("GOAL: no num_ranks line");
    return std::move(sched_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("GOAL line " + std::to_string(lineno_) + ": " + what);
  }

  void read_line(std::string_view line) {
    std::string directive;
    toks_ = tokenize(strip_comments(line, directive), lineno_);
    t_ = 0;
    // A directive: time-unit, pacing and mesh stand alone; round stands on the line before its
    // op (what LogGOPSim's txt2bin reads) or follows the op on its line (older exports).
    const std::uint32_t round = directive.empty() ? 0 : apply_directive(directive);
    if (round != 0 && toks_.empty()) {
      if (current_ == nullptr) fail("'round' must come before an operation inside a rank block");
      if (pending_round_ != 0) fail("a second 'round' before an operation (the first is on line " + std::to_string(pending_line_) + ")");
      pending_round_ = round;
      pending_line_ = lineno_;
      return;
    }
    round_ = round;
    bool took_round = round_ == 0;
    while (t_ < toks_.size()) {
      if (current_ == nullptr) {
        header_item();
      } else if (toks_[t_] == "}") {
        no_pending_round();
        ++t_;
        current_ = nullptr;
      } else {
        took_round |= rank_item();
      }
    }
    if (!took_round) fail("'round' must follow an operation on its line, or stand on the line before one");
  }

  void no_pending_round() const {
    if (pending_round_ != 0)
      fail("the 'round' of line " + std::to_string(pending_line_) + " is not followed by an operation of its rank");
  }

  // The line without its comments (a block comment may span lines); `directive` gets the text
  // of a `// postbox:` comment.
  std::string strip_comments(std::string_view line, std::string& directive) {
    std::string clean;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (in_block_comment_) {
        if (line.compare(i, 2, "*/") == 0) {
          in_block_comment_ = false;
          ++i;
        }
        continue;
      }
      if (line.compare(i, 2, "//") == 0) {
        std::string_view rest = line.substr(i + 2);
        while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
        if (rest.starts_with("postbox:")) directive = std::string(rest.substr(8));
        break;
      }
      if (line.compare(i, 2, "/*") == 0) {
        in_block_comment_ = true;
        ++i;
        continue;
      }
      clean.push_back(line[i]);
    }
    return clean;
  }

  // time-unit and pacing set the schedule's; round R returns R for the line's op (else 0).
  std::uint32_t apply_directive(const std::string& directive) {
    const auto words = tokenize_words(directive);
    if (words.size() == 2 && words[0] == "time-unit") {
      if (!toks_.empty()) fail("'time-unit' must be on a line of its own");
      const std::string& u = words[1];
      if (u == "1") {
        sched_.time_unit_exp = 0;
      } else if (u.size() == 4 && u.starts_with("1e-") && u[3] >= '0' && u[3] <= '6') {
        sched_.time_unit_exp = u[3] - '0';
      } else {
        fail("time-unit must be 1 or 1e-K with K in 0..6, got '" + u + "'");
      }
      return 0;
    }
    if (words.size() == 3 && words[0] == "pacing") {
      if (!toks_.empty()) fail("'pacing' must be on a line of its own");
      if (words[1] == "delay-receive") sched_.pacing = Pacing::delay_receive;
      else if (words[1] == "delay-send") sched_.pacing = Pacing::delay_send;
      else fail("pacing must be delay-receive or delay-send, got '" + words[1] + "'");
      const auto L = to_int(words[2], lineno_, "the pacing latency");
      if (L < 1 || L > (1 << 20)) fail("the pacing latency must be in 1..2^20");
      sched_.pacing_latency = static_cast<std::uint32_t>(L);
      return 0;
    }
    if (words.size() == 2 && words[0] == "mesh") {
      if (!toks_.empty()) fail("'mesh' must be on a line of its own");
      Mesh m;
      try {
        m = parse_mesh(words[1]);
      } catch (const InputError& e) {
        fail(e.what());
      }
      sched_.mesh_rows = m.rows;
      sched_.mesh_cols = m.cols;
      return 0;
    }
    if (words.size() == 2 && words[0] == "round") {
      const auto r = to_int(words[1], lineno_, "a round");
      if (r < 1 || r > (std::int64_t{1} << 31)) fail("a round must be at least 1");
      return static_cast<std::uint32_t>(r);
    }
    fail("unknown postbox directive '" + directive + "' (time-unit, pacing, mesh, round)");
  }

  const std::string& next(const char* what) {
    if (t_ >= toks_.size()) fail(std::string("expected ") + what + " at the end of the line");
    return toks_[t_++];
  }

  // Outside a rank block: num_ranks N, or rank R {.
  void header_item() {
    const std::string& tok = toks_[t_];
    if (tok == "num_ranks") {
      ++t_;
      const auto n = to_int(next("an integer"), lineno_, "the number of ranks");
      if (n < 1 || n > (std::int64_t{1} << 30)) fail("num_ranks must be in 1..2^30");
      sched_.num_ranks = static_cast<int>(n);
      have_num_ranks_ = true;
    } else if (tok == "rank") {
      ++t_;
      const auto r = to_int(next("a rank"), lineno_, "a rank");
      if (next("'{'") != "{") fail("expected '{' after the rank number");
      if (!have_num_ranks_) fail("rank block before num_ranks");
      if (r < 0 || r >= sched_.num_ranks) fail("rank " + std::to_string(r) + " is outside 0..num_ranks-1");
      if (!seen_ranks_.insert(static_cast<int>(r)).second) fail("rank " + std::to_string(r) + " is given twice");
      sched_.ranks.push_back(GoalRank{static_cast<int>(r), {}, {}});
      current_ = &sched_.ranks.back();
      labels_.clear();
    } else {
      fail("expected 'num_ranks' or 'rank', got '" + tok + "'");
    }
  }

  // Inside a rank block: [label ':'] op, or label (i)requires label. True when it was an op
  // (which takes the line's round).
  bool rank_item() {
    GoalOp op;
    const std::string& tok = toks_[t_];
    if (tok != "send" && tok != "recv" && tok != "calc") {
      if (!std::isalpha(static_cast<unsigned char>(tok[0]))) fail("expected a label or an operation, got '" + tok + "'");
      const std::string label = tok;
      ++t_;
      const std::string& what = next("':', 'requires' or 'irequires'");
      if (what == "requires" || what == "irequires") {
        const std::string& on = next("a label");
        if (!labels_.contains(label)) fail("dependency names undefined label '" + label + "'");
        if (!labels_.contains(on)) fail("dependency names undefined label '" + on + "'");
        no_pending_round();
        current_->deps.push_back(GoalDep{label, on, what == "irequires"});
        if (t_ != toks_.size()) fail("unexpected '" + toks_[t_] + "' after a dependency");
        return false;
      }
      if (what != ":") fail("expected ':', 'requires' or 'irequires' after label '" + label + "'");
      if (labels_.contains(label)) fail("label '" + label + "' defined twice");
      labels_.insert(label);
      op.label = label;
    }
    const std::string kind = next("'send', 'recv' or 'calc'");
    if (kind == "calc") {
      op.kind = GoalOp::Kind::calc;
      op.size = static_cast<std::uint64_t>(to_int(next("an integer"), lineno_, "a calc size"));
      if (t_ < toks_.size() && toks_[t_] == "cpu") {
        ++t_;
        op.cpu = static_cast<int>(to_int(next("an integer"), lineno_, "a cpu"));
      }
    } else if (kind == "send" || kind == "recv") {
      message(op, kind == "send");
    } else {
      fail("expected 'send', 'recv' or 'calc', got '" + kind + "'");
    }
    if (t_ != toks_.size()) fail("unexpected '" + toks_[t_] + "' at the end of an operation");
    op.line = lineno_;
    if (round_ != 0 && pending_round_ != 0)
      fail("'round' given twice for one operation (on line " + std::to_string(pending_line_) + " and on its own)");
    op.round = round_ != 0 ? round_ : pending_round_;
    pending_round_ = 0;
    current_->ops.push_back(std::move(op));
    return true;
  }

  // The rest of a send or recv: <n>b to|from <peer> [tag <t>] [cpu <c>] [nic <k>].
  void message(GoalOp& op, bool send) {
    op.kind = send ? GoalOp::Kind::send : GoalOp::Kind::recv;
    const std::string& size = next("a size");
    if (!is_int(size) || size[0] == '-') fail("expected a size in bytes, got '" + size + "'");
    op.size = static_cast<std::uint64_t>(to_int(size, lineno_, "a size"));
    if (next("'b'") != "b") fail("expected 'b' after the size");
    const std::string& dir = next(send ? "'to'" : "'from'");
    if (dir != (send ? "to" : "from")) fail("expected '" + std::string(send ? "to" : "from") + "'");
    op.peer = to_int(next("a rank"), lineno_, "a rank");
    if (op.peer < -1 || (op.peer == -1 && send) || op.peer >= sched_.num_ranks) {
      fail("peer " + std::to_string(op.peer) + " is outside 0..num_ranks-1");
    }
    bool seen_tag = false, seen_cpu = false, seen_nic = false;
    while (t_ < toks_.size()) {
      const std::string& opt = next("an option");
      if (opt == "tag" && !seen_tag && !seen_cpu && !seen_nic) {
        op.tag = to_int(next("a tag"), lineno_, "a tag");
        if (op.tag < -1) fail("tag must be -1 or non-negative");
        seen_tag = true;
      } else if (opt == "cpu" && !seen_cpu && !seen_nic) {
        op.cpu = static_cast<int>(to_int(next("an integer"), lineno_, "a cpu"));
        seen_cpu = true;
      } else if (opt == "nic" && !seen_nic) {
        op.nic = static_cast<int>(to_int(next("an integer"), lineno_, "a nic"));
        seen_nic = true;
      } else {
        fail("unexpected '" + opt + "' (options are tag, cpu, nic, in that order)");
      }
    }
  }

  GoalSchedule sched_;
  bool have_num_ranks_ = false;
  GoalRank* current_ = nullptr;
  std::set<std::string> labels_;
  std::set<int> seen_ranks_;
  bool in_block_comment_ = false;
  int lineno_ = 0;
  std::vector<std::string> toks_;  // the current line's tokens
  std::size_t t_ = 0;              // the next of them
  std::uint32_t round_ = 0;        // the current line's `// postbox: round R` after its op, else 0
  std::uint32_t pending_round_ = 0;  // a `// postbox: round R` line waiting for the next op, else 0
  int pending_line_ = 0;             // its line
};

}  // namespace

GoalSchedule parse_goal(std::string_view text) { return GoalReader().read(text); }

}  // namespace postbox
