// Prints postbox::sim::profile_dirs(), then loads the delta profile by name.
#include <cstdio>

#include "postbox/frontend/machines.hpp"

int main() {
  for (const auto& dir : postbox::sim::profile_dirs()) std::printf("%s\n", dir.c_str());
  const auto delta = postbox::sim::load_machine("delta");
  std::printf("loaded %s\n", delta.name.c_str());
  return 0;
}
