// Built against an install tree by tests/install_consumer.cmake.
#include <cstdio>

#include "postbox/barrier/version.hpp"

int main() {
  std::printf("postbox %s\n", postbox::version());
  return 0;
}
