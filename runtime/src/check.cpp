#include "postbox/runtime/check.hpp"

#include <cstdio>
#include <cstdlib>

namespace postbox::internal {

void check_failed(const char* file, int line, const char* cond, const std::string& msg) noexcept {
  std::fprintf(stderr, "%s:%d: postbox: check failed: %s: %s\n", file, line, cond, msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace postbox::internal
