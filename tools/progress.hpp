// One progress line on a terminal for commands that can run long: shown on stderr only when
// stderr is a terminal, only once the work has taken 2 s (a quick command prints nothing
// extra), redrawn at most 5 times a second, and erased when the work ends, so that stdout and
// a captured stderr never see it. sweep, bench barrier and run use it.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace postbox::cli {

class TerminalProgress {
 public:
  // `enabled` false (e.g. --json, or stderr not a terminal): every call is a no-op.
  explicit TerminalProgress(bool enabled);
  ~TerminalProgress();
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  // What the work is doing now ("sweep 12/40", "round 2/5 of central p=4").
  void update(const std::string& text);
  // "LABEL done/total (pct%)".
  void update(const std::string& label, std::size_t done, std::size_t total);

 private:
  using clock = std::chrono::steady_clock;
  bool enabled_;
  bool shown_ = false;
  clock::time_point start_ = clock::now();
  clock::time_point last_{};
};

// Whether stderr is a terminal a progress line may be drawn on (not a dumb one).
bool stderr_is_terminal();

}  // namespace postbox::cli
