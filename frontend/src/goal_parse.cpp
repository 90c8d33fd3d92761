#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/selection.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include "postbox/collectives/mesh.hpp"
#include "postbox/emulator/mapped_storage.hpp"
#include "postbox/runtime/limits.hpp"

namespace postbox {
namespace {

// ASCII only, as txt2bin's grammar is, and without the C library's locale lookup per character
// (a tenth of the reading time of a large file went there).
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

std::int64_t to_int(std::string_view s, int lineno, const char* what) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    throw GoalSyntaxError("GOAL line " + std::to_string(lineno) + ": expected " + what + ", got '" + std::string(s) + "'");
  }
  return v;
}

bool is_int(std::string_view s) {
  if (s.empty()) return false;
  const std::size_t start = s[0] == '-' ? 1 : 0;
  if (start == s.size()) return false;
  for (std::size_t i = start; i < s.size(); ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

// Where the blocks go: begin() once num_ranks is known (at the first block, or at the end when
// there is none), then block() at each '}'.
class GoalSink {
 public:
  virtual ~GoalSink() = default;
  virtual void begin(int num_ranks) = 0;
  virtual void block(const GoalRankView& b) = 0;
};

// One GOAL text read line by line: each line's comments stripped (a `// postbox:` directive
// kept), its directive applied, then its tokens read as a header item (num_ranks, rank R {)
// outside a rank block or as a rank item (an op, a dependency, '}') inside one. Tokens are views
// of the text; only a line with a comment is copied (its tokens may join across a block comment).
class GoalReader {
 public:
  GoalReader(GoalSink& sink, std::function<void(std::size_t)> released = {}) : sink_(sink), released_(std::move(released)) {}

  // Thrown in a piece (read_piece) for what only the whole text can decide.
  struct NeedsWholeText {};

  // The lines before the first rank block, as read() reads them (num_ranks, directives,
  // comments), without the end's checks; false when they leave something open (a block comment,
  // a pending round) or give no num_ranks.
  bool read_prefix(std::string_view text, GoalSchedule& head) {
    head_ = &head;
    for_each_line(text, [](std::size_t) {});
    return have_num_ranks_ && !in_rank_ && !in_block_comment_ && pending_round_ == 0;
  }

  // A piece of the text made of whole rank blocks, whose first line is line first_line, read
  // after the prefix: num_ranks and the time-unit, pacing and mesh directives throw
  // NeedsWholeText, as does a piece that ends inside a block; a rank given twice is left to the
  // caller, which sees every piece's ranks.
  void read_piece(std::string_view text, int first_line, GoalSchedule& head) {
    head_ = &head;
    piece_ = true;
    have_num_ranks_ = begun_ = true;
    lineno_ = first_line - 1;
    for_each_line(text, [](std::size_t) {});
    if (in_rank_ || in_block_comment_ || pending_round_ != 0) throw NeedsWholeText{};
  }

  // The header's fields (num_ranks, time unit, pacing, mesh) of `head`; ranks go to the sink.
  void read(std::string_view text, GoalSchedule& head) {
    head_ = &head;
    for_each_line(text, [this](std::size_t pos) {
      if (released_) released_(pos);
    });
    if (in_rank_) throw GoalSyntaxError("GOAL: rank " + std::to_string(rank_) + " is not closed with '}'");
    if (!have_num_ranks_) throw GoalSyntaxError("GOAL: no num_ranks line");
    if (!begun_) sink_.begin(head.num_ranks);
  }

 private:
  // Reads every line of text; closed(pos) after a line that closed a block, pos where the next
  // line starts. A text ending in a newline ends with an empty line, as the sequential reading
  // of the whole text has; a piece cut before a line does not.
  template <class Closed>
  void for_each_line(std::string_view text, Closed&& closed) {
    std::size_t pos = 0;
    const std::size_t stop = piece_ && !text.empty() && text.back() == '\n' ? text.size() - 1 : text.size();
    while (pos <= stop) {
      const std::size_t nl = text.find('\n', pos);
      const std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
      pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
      ++lineno_;
      read_line(line);
      if (closed_) closed(pos);
      closed_ = false;
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw GoalSyntaxError("GOAL line " + std::to_string(lineno_) + ": " + what);
  }

  // Splits one (comment-free) line into tokens: identifiers, integers (with an optional
  // leading '-'), ':', '{', '}', and a size "<n>b" as the two tokens "<n>" and "b".
  void tokenize(std::string_view line) {
    toks_.clear();
    std::size_t i = 0;
    while (i < line.size()) {
      const char c = line[i];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++i;
      } else if (c == ':' || c == '{' || c == '}') {
        toks_.push_back(line.substr(i, 1));
        ++i;
      } else if (is_digit(c) || (c == '-' && i + 1 < line.size() && is_digit(line[i + 1]))) {
        std::size_t j = i + 1;
        while (j < line.size() && is_digit(line[j])) ++j;
        toks_.push_back(line.substr(i, j - i));
        i = j;
      } else if (is_alpha(c)) {
        std::size_t j = i + 1;
        while (j < line.size() && (is_alnum(line[j]) || line[j] == '_')) ++j;
        toks_.push_back(line.substr(i, j - i));
        i = j;
      } else {
        fail("unexpected character '" + std::string(1, c) + "'");
      }
    }
  }

  void read_line(std::string_view line) {
    std::string_view directive;
    copied_ = in_block_comment_ || line.find('/') != std::string_view::npos;
    tokenize(copied_ ? strip_comments(line, directive) : line);
    t_ = 0;
    // A directive: time-unit, pacing and mesh stand alone; round stands on the line before its
    // op (what LogGOPSim's txt2bin reads) or follows the op on its line (older exports).
    const std::uint32_t round = directive.empty() ? 0 : apply_directive(directive);
    if (round != 0 && toks_.empty()) {
      if (!in_rank_) fail("'round' must come before an operation inside a rank block");
      if (pending_round_ != 0) fail("a second 'round' before an operation (the first is on line " + std::to_string(pending_line_) + ")");
      pending_round_ = round;
      pending_line_ = lineno_;
      return;
    }
    round_ = round;
    bool took_round = round_ == 0;
    while (t_ < toks_.size()) {
      if (!in_rank_) {
        header_item();
      } else if (toks_[t_] == "}") {
        no_pending_round();
        ++t_;
        close_rank();
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

  // The line without its comments (a block comment may span lines), in clean_; `directive` gets
  // the text of a `// postbox:` comment.
  std::string_view strip_comments(std::string_view line, std::string_view& directive) {
    clean_.clear();
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
        if (rest.starts_with("postbox:")) directive = rest.substr(8);
        break;
      }
      if (line.compare(i, 2, "/*") == 0) {
        in_block_comment_ = true;
        ++i;
        continue;
      }
      clean_.push_back(line[i]);
    }
    return clean_;
  }

  // time-unit and pacing set the schedule's; round R returns R for the line's op (else 0).
  std::uint32_t apply_directive(std::string_view directive) {
    std::vector<std::string_view> words;  // the directive's words, split at blanks
    for (std::size_t i = 0; i < directive.size();) {
      while (i < directive.size() && (directive[i] == ' ' || directive[i] == '\t' || directive[i] == '\r')) ++i;
      std::size_t j = i;
      while (j < directive.size() && directive[j] != ' ' && directive[j] != '\t' && directive[j] != '\r') ++j;
      if (j > i) words.push_back(directive.substr(i, j - i));
      i = j;
    }
    if (piece_ && !(words.size() == 2 && words[0] == "round")) throw NeedsWholeText{};
    if (words.size() == 2 && words[0] == "time-unit") {
      if (!toks_.empty()) fail("'time-unit' must be on a line of its own");
      const std::string_view u = words[1];
      if (u == "1") {
        head_->time_unit_exp = 0;
      } else if (u.size() == 4 && u.starts_with("1e-") && u[3] >= '0' && u[3] <= '6') {
        head_->time_unit_exp = u[3] - '0';
      } else {
        fail("time-unit must be 1 or 1e-K with K in 0..6, got '" + std::string(u) + "'");
      }
      return 0;
    }
    if (words.size() == 3 && words[0] == "pacing") {
      if (!toks_.empty()) fail("'pacing' must be on a line of its own");
      if (words[1] == "delay-receive") head_->pacing = Pacing::delay_receive;
      else if (words[1] == "delay-send") head_->pacing = Pacing::delay_send;
      else fail("pacing must be delay-receive or delay-send, got '" + std::string(words[1]) + "'");
      const auto L = to_int(words[2], lineno_, "the pacing latency");
      if (L < 1 || L > (1 << 20)) fail("the pacing latency must be in 1..2^20");
      head_->pacing_latency = static_cast<std::uint32_t>(L);
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
      head_->mesh_rows = m.rows;
      head_->mesh_cols = m.cols;
      return 0;
    }
    if (words.size() == 2 && words[0] == "round") {
      const auto r = to_int(words[1], lineno_, "a round");
      if (r < 1 || r > (std::int64_t{1} << 31)) fail("a round must be at least 1");
      return static_cast<std::uint32_t>(r);
    }
    fail("unknown postbox directive '" + std::string(directive) + "' (time-unit, pacing, mesh, round)");
  }

  std::string_view next(const char* what) {
    if (t_ >= toks_.size()) fail(std::string("expected ") + what + " at the end of the line");
    return toks_[t_++];
  }

  // Outside a rank block: num_ranks N, or rank R {.
  void header_item() {
    const std::string_view tok = toks_[t_];
    if (tok == "num_ranks") {
      if (piece_) throw NeedsWholeText{};
      ++t_;
      const auto n = to_int(next("an integer"), lineno_, "the number of ranks");
      if (n < 1 || n > (std::int64_t{1} << 30)) fail("num_ranks must be in 1..2^30");
      // The blocks already read were checked against, and built for, the first count.
      if (begun_ && n != head_->num_ranks) fail("num_ranks changes after a rank block");
      head_->num_ranks = static_cast<int>(n);
      have_num_ranks_ = true;
    } else if (tok == "rank") {
      ++t_;
      const auto r = to_int(next("a rank"), lineno_, "a rank");
      if (next("'{'") != "{") fail("expected '{' after the rank number");
      if (!have_num_ranks_) fail("rank block before num_ranks");
      if (r < 0 || r >= head_->num_ranks) fail("rank " + std::to_string(r) + " is outside 0..num_ranks-1");
      if (!begun_) {
        sink_.begin(head_->num_ranks);
        seen_ranks_.assign(static_cast<std::size_t>(head_->num_ranks), false);
        begun_ = true;
      }
      if (!piece_) {
        if (seen_ranks_[static_cast<std::size_t>(r)]) fail("rank " + std::to_string(r) + " is given twice");
        seen_ranks_[static_cast<std::size_t>(r)] = true;
      }
      in_rank_ = true;
      rank_ = static_cast<int>(r);
    } else {
      fail("expected 'num_ranks' or 'rank', got '" + std::string(tok) + "'");
    }
  }

  void close_rank() {
    sink_.block(GoalRankView{rank_, ops_, deps_});
    in_rank_ = false;
    closed_ = true;
    ops_.clear();
    deps_.clear();
    labels_.clear();
    copies_.clear();
  }

  // The op numbered k if `label` is "l<k>" and that op has it: what plan export writes, found
  // without the map.
  static std::optional<std::uint32_t> plain_number(std::string_view label) {
    if (label.size() < 2 || label[0] != 'l' || (label[1] == '0' && label.size() > 2)) return std::nullopt;
    std::uint32_t k = 0;
    const auto [ptr, ec] = std::from_chars(label.data() + 1, label.data() + label.size(), k);
    if (ec != std::errc() || ptr != label.data() + label.size()) return std::nullopt;
    return k;
  }

  // The number of the op of this block labelled `label`, or -1.
  [[nodiscard]] std::int64_t find(std::string_view label) const {
    if (const auto k = plain_number(label); k && *k < ops_.size() && ops_[*k].label == label) return *k;
    const auto it = labels_.find(label);
    return it == labels_.end() ? std::int64_t{-1} : std::int64_t{it->second};
  }

  // Inside a rank block: [label ':'] op, or label (i)requires label. True when it was an op
  // (which takes the line's round).
  bool rank_item() {
    GoalOpView op;
    const std::string_view tok = toks_[t_];
    if (tok != "send" && tok != "recv" && tok != "calc") {
      if (!is_alpha(tok[0])) fail("expected a label or an operation, got '" + std::string(tok) + "'");
      const std::string_view label = tok;
      ++t_;
      const std::string_view what = next("':', 'requires' or 'irequires'");
      if (what == "requires" || what == "irequires") {
        const std::string_view on = next("a label");
        const std::int64_t a = find(label);
        if (a < 0) fail("dependency names undefined label '" + std::string(label) + "'");
        const std::int64_t b = find(on);
        if (b < 0) fail("dependency names undefined label '" + std::string(on) + "'");
        no_pending_round();
        deps_.push_back(GoalDepView{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b), what == "irequires"});
        if (t_ != toks_.size()) fail("unexpected '" + std::string(toks_[t_]) + "' after a dependency");
        return false;
      }
      if (what != ":") fail("expected ':', 'requires' or 'irequires' after label '" + std::string(label) + "'");
      if (find(label) >= 0) fail("label '" + std::string(label) + "' defined twice");
      // A copied line's tokens live until the next line; the block's labels must outlive it.
      op.label = copied_ ? std::string_view(copies_.emplace_back(label)) : label;
      const auto k = plain_number(label);
      if (!k || *k != ops_.size()) labels_.emplace(op.label, static_cast<std::uint32_t>(ops_.size()));
    }
    const std::string_view kind = next("'send', 'recv' or 'calc'");
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
      fail("expected 'send', 'recv' or 'calc', got '" + std::string(kind) + "'");
    }
    if (t_ != toks_.size()) fail("unexpected '" + std::string(toks_[t_]) + "' at the end of an operation");
    op.line = lineno_;
    if (round_ != 0 && pending_round_ != 0)
      fail("'round' given twice for one operation (on line " + std::to_string(pending_line_) + " and on its own)");
    op.round = round_ != 0 ? round_ : pending_round_;
    pending_round_ = 0;
    ops_.push_back(op);
    return true;
  }

  // The rest of a send or recv: <n>b to|from <peer> [tag <t>] [cpu <c>] [nic <k>].
  void message(GoalOpView& op, bool send) {
    op.kind = send ? GoalOp::Kind::send : GoalOp::Kind::recv;
    const std::string_view size = next("a size");
    if (!is_int(size) || size[0] == '-') fail("expected a size in bytes, got '" + std::string(size) + "'");
    op.size = static_cast<std::uint64_t>(to_int(size, lineno_, "a size"));
    if (next("'b'") != "b") fail("expected 'b' after the size");
    const std::string_view dir = next(send ? "'to'" : "'from'");
    if (dir != (send ? "to" : "from")) fail("expected '" + std::string(send ? "to" : "from") + "'");
    op.peer = to_int(next("a rank"), lineno_, "a rank");
    if (op.peer < -1 || (op.peer == -1 && send) || op.peer >= head_->num_ranks) {
      fail("peer " + std::to_string(op.peer) + " is outside 0..num_ranks-1");
    }
    bool seen_tag = false, seen_cpu = false, seen_nic = false;
    while (t_ < toks_.size()) {
      const std::string_view opt = next("an option");
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
        fail("unexpected '" + std::string(opt) + "' (options are tag, cpu, nic, in that order)");
      }
    }
  }

  GoalSink& sink_;
  std::function<void(std::size_t)> released_;  // called with the offset where a rank block's next line starts
  GoalSchedule* head_ = nullptr;
  bool have_num_ranks_ = false;
  bool begun_ = false;
  bool in_rank_ = false;
  bool closed_ = false;  // a block closed on this line
  int rank_ = 0;
  std::vector<GoalOpView> ops_;   // the open block's
  std::vector<GoalDepView> deps_;
  std::unordered_map<std::string_view, std::uint32_t> labels_;  // the open block's, but l<k> on op k
  std::deque<std::string> copies_;  // labels of copied lines, for the open block
  std::vector<bool> seen_ranks_;
  bool in_block_comment_ = false;
  bool piece_ = false;  // read_piece
  int lineno_ = 0;
  std::string clean_;                   // a line with comments, without them
  bool copied_ = false;                 // the tokens are in clean_
  std::vector<std::string_view> toks_;  // the current line's tokens
  std::size_t t_ = 0;                   // the next of them
  std::uint32_t round_ = 0;        // the current line's `// postbox: round R` after its op, else 0
  std::uint32_t pending_round_ = 0;  // a `// postbox: round R` line waiting for the next op, else 0
  int pending_line_ = 0;             // its line
};

// The text model: each block's ops and dependencies with their labels.
class ModelSink final : public GoalSink {
 public:
  explicit ModelSink(GoalSchedule& out) : out_(out) {}
  void begin(int) override {}
  void block(const GoalRankView& b) override {
    GoalRank& r = out_.ranks.emplace_back();
    r.rank = b.rank;
    r.ops.reserve(b.ops.size());
    for (const GoalOpView& v : b.ops)
      r.ops.push_back(GoalOp{v.kind, std::string(v.label), v.size, v.peer, v.tag, v.cpu, v.nic, v.round, v.line});
    for (const GoalDepView& d : b.deps) r.deps.push_back(GoalDep{r.ops[d.op].label, r.ops[d.on].label, d.immediate});
  }

 private:
  GoalSchedule& out_;
};

// The emulator's schedule, block by block.
class ScheduleSink final : public GoalSink {
 public:
  ScheduleSink(std::string name, std::uint64_t ops_hint) : name_(std::move(name)), hint_(ops_hint) {}
  void begin(int num_ranks) override { builder_.emplace(num_ranks, std::move(name_), hint_); }
  void block(const GoalRankView& b) override { builder_->add(b); }
  GoalRead finish(const GoalSchedule& head) {
    return GoalRead{std::move(*builder_).finish(head.time_unit_exp, head.pacing, head.pacing_latency), head.mesh_rows,
                    head.mesh_cols};
  }

 private:
  std::string name_;
  std::uint64_t hint_;
  std::optional<sim::GoalScheduleBuilder> builder_;
};

// A piece's blocks, kept until they are handed over in file order. Labels that are views of
// the text stay views; those of copied lines (the reader's, gone at the block's end) are copied.
class PieceSink final : public GoalSink {
 public:
  explicit PieceSink(std::string_view text) : text_(text) {}
  void begin(int) override {}
  void block(const GoalRankView& b) override {
    blocks_.push_back(Block{b.rank, ops_.size(), b.ops.size(), deps_.size(), b.deps.size()});
    for (GoalOpView op : b.ops) {
      if (!op.label.empty() && (op.label.data() < text_.data() || op.label.data() >= text_.data() + text_.size()))
        op.label = copies_.emplace_back(op.label);
      ops_.push_back(op);
    }
    deps_.insert(deps_.end(), b.deps.begin(), b.deps.end());
  }
  // Hands the blocks to `to` in order; false at a rank already in `seen` (the whole text then
  // says which line gives it twice).
  bool hand_over(GoalSink& to, std::vector<bool>& seen) const {
    for (const Block& b : blocks_) {
      if (seen[static_cast<std::size_t>(b.rank)]) return false;
      seen[static_cast<std::size_t>(b.rank)] = true;
      to.block(GoalRankView{b.rank, std::span<const GoalOpView>(ops_).subspan(b.op, b.ops),
                            std::span<const GoalDepView>(deps_).subspan(b.dep, b.deps)});
    }
    return true;
  }

 private:
  struct Block {
    int rank;
    std::size_t op, ops, dep, deps;
  };
  std::string_view text_;
  std::vector<Block> blocks_;
  std::vector<GoalOpView> ops_;
  std::vector<GoalDepView> deps_;
  std::deque<std::string> copies_;
};

// Reads `text` into `sink` in pieces of about piece_bytes, cut where a line starts with "rank",
// with a oneTBB pipeline: the pieces are read in parallel (at most two per thread at once) and
// their blocks handed to the sink in file order, so the schedule is the one a sequential reading
// builds; returns how many pieces. 0, with nothing handed to the sink, where the text does not allow it: a block
// comment anywhere, no rank block, a prefix (the lines before the first block) that leaves
// something open, num_ranks or a time-unit, pacing or mesh directive after it; and 0 too,
// after the sink got blocks, at any error, which the caller then finds by reading the whole
// text again (the same message, naming the same line, as without pieces).
int read_in_pieces(std::string_view text, GoalSchedule& head, GoalSink& sink, std::size_t piece_bytes,
                   const std::function<void(std::size_t)>& released) {
  if (text.find("/*") != std::string_view::npos) return 0;
  // The first block's line; a text that starts with one has no num_ranks before it.
  const std::size_t nl = text.find("\nrank ");
  if (nl == std::string_view::npos) return 0;
  const std::size_t first = nl + 1;
  try {
    struct NoBlocks final : GoalSink {
      void begin(int) override {}
      void block(const GoalRankView&) override {}
    } no_blocks;
    if (!GoalReader(no_blocks).read_prefix(text.substr(0, first), head)) return 0;
  } catch (const GoalReader::NeedsWholeText&) {
    return 0;
  } catch (const GoalSyntaxError&) {
    return 0;
  }
  sink.begin(head.num_ranks);
  std::vector<bool> seen(static_cast<std::size_t>(head.num_ranks), false);
  struct Piece {
    std::size_t begin = 0, end = 0;
    int first_line = 0;
    std::unique_ptr<PieceSink> blocks;
    bool ok = true;
  };
  std::size_t pos = first;
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(first), '\n'));
  // Written by the last stage, read by the first, which may run at the same time on another
  // thread (relaxed: it only stops the cutting early; the pipeline's end orders the last value).
  std::atomic<bool> ok{true};
  int pieces = 0;
  const GoalSchedule piece_head = head;
  // The schedule grows in the last stage, on whichever thread runs it: inside the caller's
  // --save-mem scope, as it would on the caller's thread.
  const std::string* mapped = sim::MappedStorage::current();
  tbb::parallel_pipeline(
      2 * static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()),
      tbb::make_filter<void, std::shared_ptr<Piece>>(
          tbb::filter_mode::serial_in_order,
          [&](tbb::flow_control& fc) -> std::shared_ptr<Piece> {
            if (pos >= text.size() || !ok.load(std::memory_order_relaxed)) {
              fc.stop();
              return nullptr;
            }
            auto piece = std::make_shared<Piece>();
            ++pieces;
            piece->begin = pos;
            const std::size_t cut = text.find("\nrank ", std::min(text.size(), pos + piece_bytes) - 1);
            piece->end = cut == std::string_view::npos ? text.size() : cut + 1;
            piece->first_line = line;
            line += static_cast<int>(std::count(text.begin() + static_cast<std::ptrdiff_t>(piece->begin),
                                                text.begin() + static_cast<std::ptrdiff_t>(piece->end), '\n'));
            pos = piece->end;
            return piece;
          }) &
          tbb::make_filter<std::shared_ptr<Piece>, std::shared_ptr<Piece>>(
              tbb::filter_mode::parallel,
              [&](std::shared_ptr<Piece> piece) {
                const std::string_view part = text.substr(piece->begin, piece->end - piece->begin);
                piece->blocks = std::make_unique<PieceSink>(text);
                GoalSchedule h = piece_head;
                try {
                  GoalReader(*piece->blocks).read_piece(part, piece->first_line, h);
                } catch (const GoalReader::NeedsWholeText&) {
                  piece->ok = false;
                } catch (const InputError&) {
                  piece->ok = false;
                }
                return piece;
              }) &
          tbb::make_filter<std::shared_ptr<Piece>, void>(tbb::filter_mode::serial_in_order,
                                                         [&](std::shared_ptr<Piece> piece) {
                                                           if (!ok.load(std::memory_order_relaxed)) return;
                                                           const sim::MappedStorage::Enter enter(mapped);
                                                           const bool handed = piece->ok && piece->blocks->hand_over(sink, seen);
                                                           ok.store(handed, std::memory_order_relaxed);
                                                           if (handed && released) released(piece->end);
                                                         }));
  return ok.load(std::memory_order_relaxed) ? pieces : 0;
}

// Ops a text of `bytes` bytes may hold, for reserving: an exported op line and its dependency
// line take about 40 bytes, so this errs high, and pages reserved but never written cost nothing.
std::uint64_t ops_hint(std::size_t bytes) { return bytes / 16; }

}  // namespace

GoalSchedule parse_goal(std::string_view text) {
  GoalSchedule out;
  ModelSink sink(out);
  GoalReader(sink).read(text, out);
  return out;
}

namespace {

// Files from this size on are read in pieces where they allow it (about 1 MiB each).
constexpr std::size_t kPiecesFrom = std::size_t{8} << 20;
constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

GoalRead read_schedule(std::string_view text, const std::string& name, std::size_t piece_bytes,
                       const std::function<void(std::size_t)>& released) {
  if (piece_bytes > 0) {
    GoalSchedule head;
    ScheduleSink sink(name, ops_hint(text.size()));
    if (const int n = read_in_pieces(text, head, sink, piece_bytes, released); n > 0) {
      GoalRead out = sink.finish(head);
      out.pieces = n;
      return out;
    }
  }
  GoalSchedule head;
  ScheduleSink sink(name, ops_hint(text.size()));
  GoalReader(sink, released).read(text, head);
  return sink.finish(head);
}

// Pieces where more than one thread can read them.
std::size_t piece_bytes_for(std::size_t size) {
  return size >= kPiecesFrom && tbb::this_task_arena::max_concurrency() > 1 ? kPieceBytes : 0;
}

}  // namespace

GoalRead read_goal_schedule(std::string_view text, std::string name) {
  return read_schedule(text, name, piece_bytes_for(text.size()), {});
}

GoalRead read_goal_schedule_in_pieces(std::string_view text, std::string name, std::size_t piece_bytes) {
  PB_CHECK(piece_bytes > 0, "read_goal_schedule_in_pieces: piece_bytes must be positive");
  return read_schedule(text, name, piece_bytes, {});
}

GoalRead read_goal_file(const std::string& path, std::string name) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer; the type is checked on the
  // open descriptor, so what is mapped is what was checked.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    throw InputError("cannot read '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError("GOAL file '" + path + "' is not a regular file");
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  // Its schedule and run take more than the text (an exported op and its dependency line are
  // about 45 bytes of text, and 28 + 4 bytes of schedule before the run's own state).
  require_memory(size, "the GOAL file '" + path + "' of " + std::to_string(size) + " bytes");
  void* map = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) throw InputError("cannot map '" + path + "': " + std::strerror(errno));
  struct Unmap {
    void* p;
    std::size_t n;
    ~Unmap() {
      if (p != nullptr) ::munmap(p, n);
    }
  } unmap{map, size};
  const char* base = static_cast<const char*>(map);
  if (map != nullptr) ::madvise(map, size, MADV_SEQUENTIAL);
  // The pages behind the open block are given back every 8 MiB read (read again from the file
  // if ever touched), so a file larger than the schedule does not set the peak.
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t given = 0;
  auto release = [&](std::size_t pos) {
    const std::size_t to = pos / page * page;
    if (to - given < (std::size_t{8} << 20)) return;
    ::madvise(const_cast<char*>(base) + given, to - given, MADV_DONTNEED);
    given = to;
  };
  return read_schedule(std::string_view(base, size), name, piece_bytes_for(size), release);
}

}  // namespace postbox
