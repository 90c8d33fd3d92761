#include "progress.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace postbox::cli {

bool stderr_is_terminal() {
  if (::isatty(STDERR_FILENO) == 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

TerminalProgress::TerminalProgress(bool enabled) : enabled_(enabled) {}

TerminalProgress::~TerminalProgress() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
}

void TerminalProgress::update(const std::string& text) {
  if (!enabled_) return;
  const auto now = clock::now();
  if (now - start_ < std::chrono::seconds(2)) return;
  if (shown_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  shown_ = true;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
}

void TerminalProgress::update(const std::string& label, std::size_t done, std::size_t total) {
  if (!enabled_) return;
  const int pct = total == 0 ? 100 : static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  update(label + " " + std::to_string(done) + "/" + std::to_string(total) + " (" + std::to_string(pct) + "%)");
}

}  // namespace postbox::cli
