// The GOAL grammar as LogGOPSim's txt2bin reads it (txt2bin.re, a re2c scanner with one state per
// place in an item), written again here as a checker so that postbox's GOAL exports can be
// checked against it without LogGOPSim: the same states, the same tokens (longest match, a
// keyword before an identifier of the same length), the same error text per state.
//
// What txt2bin accepts, and so this checker:
//  * state 0, the start of an item: a newline, `num_ranks N`, `rank N {`, `}`, an op
//    (`send`, `recv`, `calc`), a label, `//` to the end of the line, `/* ... */`;
//  * after an op's last field only blanks and the newline (or the op's remaining optional
//    fields: tag, cpu, nic for send/recv, cpu for calc): a comment after an op is an error;
//  * a dependency names labels already defined in its rank block;
//  * the input ends once the block of rank num_ranks − 1 is closed.
// Line numbers here count from 1 (txt2bin's own count starts at 0).
#pragma once

#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

namespace postbox::testing_support {

struct Txt2binVerdict {
  bool ok = true;
  int line = 0;          // 1-based line of the error; 0 when the input ends too early
  int state = -1;        // txt2bin's state at the error (-1: not a scanner state)
  std::string expected;  // txt2bin's "Expected: ..." text for that state, or what failed
};

class Txt2bin {
 public:
  static Txt2binVerdict check(std::string_view text) { return Txt2bin(text).run(); }

 private:
  explicit Txt2bin(std::string_view text) : t_(std::string(text) + "\n") {}  // fill() adds '\n' at EOF

  enum Item { kUndefined, kSend, kRecv, kCalc, kStartDep, kDep };

  [[nodiscard]] bool at_end() const { return i_ >= t_.size(); }
  [[nodiscard]] char c(std::size_t k = 0) const { return i_ + k < t_.size() ? t_[i_ + k] : '\0'; }
  bool ws() {
    if (c() != ' ' && c() != '\t') return false;
    while (c() == ' ' || c() == '\t') ++i_;
    return true;
  }
  bool nl() {
    if (c() == '\n') {
      ++i_;
    } else if (c() == '\r' && c(1) == '\n') {
      i_ += 2;
    } else {
      return false;
    }
    ++line_;
    return true;
  }
  bool lit(std::string_view s) {
    if (std::string_view(t_).substr(i_, s.size()) != s) return false;
    i_ += s.size();
    return true;
  }
  bool integer() {
    if (!std::isdigit(static_cast<unsigned char>(c()))) return false;
    while (std::isdigit(static_cast<unsigned char>(c()))) ++i_;
    return true;
  }
  // [a-zA-Z][a-zA-Z0-9_]*; the text in `word`.
  bool ident(std::string& word) {
    if (!std::isalpha(static_cast<unsigned char>(c()))) return false;
    const std::size_t b = i_;
    while (std::isalnum(static_cast<unsigned char>(c())) || c() == '_') ++i_;
    word = t_.substr(b, i_ - b);
    return true;
  }

  Txt2binVerdict fail(int state) {
    static const char* const kExpected[] = {
        R"("rank", "num_ranks", "calc", "send", "recv", an identifier, "}" or "\n")",
        R"(":", "requires" or "irequires")",
        "an integer",
        "an integer",
        R"("calc", "send" or "recv")",
        "an identifier",
        R"("\n")",
        R"("cpu" or "\n")",
        "an integer",
        R"("\n")",
        R"("b")",
        R"("to" or "from")",
        "an integer",
        R"("tag", "cpu", "nic" or "\n")",
        "an integer",
        R"("cpu", "nic" or "\n")",
        "an integer",
        R"("nic" or "\n")",
        "an integer",
        R"("\n")",
        "an integer",
        R"("{")",
        "an integer",
    };
    return Txt2binVerdict{false, line_, state, kExpected[state]};
  }
  Txt2binVerdict fail_other(const std::string& what, int line) { return Txt2binVerdict{false, line, -1, what}; }

  // One item completed at its newline (process_item): labels defined, dependencies resolved.
  bool process(Item type, const std::string& label1, const std::string& label2) {
    if (type == kSend || type == kRecv || type == kCalc) {
      if (!label1.empty()) labels_.insert(label1);
      return true;
    }
    return labels_.contains(label1) && labels_.contains(label2);
  }

  Txt2binVerdict run() {
    for (;;) {
      // One scan(): items up to the '}' that closes a rank block.
      const auto r = scan_block();
      if (!r.ok) return r;
      labels_.clear();
      if (num_ranks_ < 1) return fail_other("Parse error: Number of Ranks undefined", line_);
      if (curr_rank_ + 1 == num_ranks_) return {};
    }
  }

  Txt2binVerdict scan_block() {
    for (;;) {
      // s_0
      // txt2bin: "Reached the end of the inputfile - did you forget a closing bracket?"
      if (at_end()) return fail_other("the input ends before the block of rank num_ranks - 1 is closed", 0);
      Item type = kUndefined;
      std::string label1, label2, word;
      // txt2bin's state-0 rule for blanks has no jump in its action (every other state's has), so
      // what its scanner does with them depends on the code re2c generates: refused here, to be
      // on the safe side (LogGOPSim's own examples never put blanks there).
      if (c() == ' ' || c() == '\t') return fail_other("blanks where an item starts", line_);
      if (nl()) continue;
      if (lit("//")) {  // s_23
        while (!nl()) ++i_;
        continue;
      }
      if (lit("/*")) {  // s_24
        while (!lit("*/")) {
          if (at_end()) return fail_other("the input ends inside a block comment", 0);
          if (!nl()) ++i_;
        }
        continue;
      }
      if (c() == '}') {
        ++i_;
        if (rank_ == -1) return fail(0);
        rank_ = -1;
        return {};
      }
      if (!ident(word)) return fail(0);
      int state;
      if (word == "send" || word == "recv") {
        type = word == "send" ? kSend : kRecv;
        state = 2;
      } else if (word == "calc") {
        type = kCalc;
        state = 3;
      } else if (word == "rank") {  // s_20, s_21
        while (ws()) {}
        const std::size_t b = i_;
        if (!integer()) return fail(20);
        rank_ = curr_rank_ = std::stoll(t_.substr(b, i_ - b));
        while (ws()) {}
        if (!lit("{")) return fail(21);
        continue;
      } else if (word == "num_ranks") {  // s_22
        while (ws()) {}
        const std::size_t b = i_;
        if (!integer()) return fail(22);
        num_ranks_ = std::stoll(t_.substr(b, i_ - b));
        continue;
      } else {  // s_1: a label, then ':' or a dependency
        label1 = word;
        while (ws()) {}
        if (lit(":")) {  // s_4
          while (ws()) {}
          if (lit("calc")) {
            type = kCalc;
            state = 3;
          } else if (lit("send")) {
            type = kSend;
            state = 2;
          } else if (lit("recv")) {
            type = kRecv;
            state = 2;
          } else {
            return fail(4);
          }
        } else if (const bool dep = lit("requires"), start_dep = !dep && lit("irequires"); dep || start_dep) {
          type = start_dep ? kStartDep : kDep;
          while (ws()) {}  // s_5
          if (!ident(label2)) return fail(5);
          while (ws()) {}  // s_6
          if (!nl()) return fail(6);
          if (!process(type, label1, label2)) return fail_other("a dependency references an undefined label", line_ - 1);
          continue;
        } else {
          return fail(1);
        }
      }
      if (state == 3) {  // s_3, s_7, s_8, s_9
        while (ws()) {}
        if (!integer()) return fail(3);
        while (ws()) {}
        if (lit("cpu")) {
          while (ws()) {}
          if (!integer()) return fail(8);
          while (ws()) {}
          if (!nl()) return fail(9);
        } else if (!nl()) {
          return fail(7);
        }
        process(type, label1, label2);
        continue;
      }
      // s_2, s_10, s_11, s_12: <n> b to|from <peer>
      while (ws()) {}
      if (!integer()) return fail(2);
      while (ws()) {}
      if (!lit("b")) return fail(10);
      while (ws()) {}
      if (!lit(type == kSend ? "to" : "from")) return fail(11);
      while (ws()) {}
      if (!(type == kRecv && lit("-1")) && !integer()) return fail(12);
      // s_13 .. s_19: [tag T] [cpu C] [nic K] newline, in that order
      int at = 13;
      for (;;) {
        while (ws()) {}
        if (nl()) break;
        if (at == 13 && lit("tag")) {
          while (ws()) {}
          if (!lit("-1") && !integer()) return fail(14);
          at = 15;
        } else if ((at == 13 || at == 15) && lit("cpu")) {
          while (ws()) {}
          if (!integer()) return fail(16);
          at = 17;
        } else if ((at == 13 || at == 15 || at == 17) && lit("nic")) {
          while (ws()) {}
          if (!integer()) return fail(18);
          at = 19;
        } else {
          return fail(at);
        }
      }
      process(type, label1, label2);
    }
  }

  std::string t_;
  std::size_t i_ = 0;
  int line_ = 1;
  std::int64_t rank_ = 0;  // txt2bin's Scanner is zeroed: rank 0 until a block closes
  std::int64_t curr_rank_ = 0;
  std::int64_t num_ranks_ = 0;
  std::set<std::string> labels_;
};

}  // namespace postbox::testing_support
