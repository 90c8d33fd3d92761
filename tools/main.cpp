// The postbox command-line tool (cli.hpp; the commands are cmd_*.cpp).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.hpp"

int main(int argc, char** argv) {
  // The emulator's arrays (10^7 ranks: GiBs) run about 2x faster on transparent huge pages (docs/emulator.md), and
  // glibc reads the tunable that puts its heap on them only at start-up: sim and sweep re-run
  // themselves once with it set (unless the caller set GLIBC_TUNABLES). Here, not in run_main():
  // the in-process fuzz target must not re-exec.
  if (argc > 1 && (std::strcmp(argv[1], "sim") == 0 || std::strcmp(argv[1], "sweep") == 0) &&
      std::getenv("GLIBC_TUNABLES") == nullptr) {
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: then run without
  }
  return postbox::cli::run_main(argc, argv, stderr);
}
