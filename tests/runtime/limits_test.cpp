// limits.hpp: what this machine can give a request.
#include "postbox/runtime/limits.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

// Under ulimit -v every thread reserves its whole stack: `run --op all-to-all --p 512` under a
// 4 GiB limit failed with "the system refused: Resource temporarily unavailable" after starting
// hundreds of threads. available_threads() counts the stacks that still fit, and
// require_threads() names the limit.
TEST(Limits, AddressSpaceLimitBoundsTheThreads) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
  const std::uint64_t unlimited_threads = available_threads();
  // Room for about four default stacks above what the process maps now.
  long pages = 0;
  {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fscanf(f, "%ld", &pages), 1);
    std::fclose(f);
  }
  const rlim_t used = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
  rlimit low = saved;
  low.rlim_cur = used + 4 * (rlim_t{8} << 20) + (rlim_t{1} << 20);
  if (saved.rlim_cur != RLIM_INFINITY && saved.rlim_cur < low.rlim_cur) GTEST_SKIP() << "already limited";
  ASSERT_EQ(setrlimit(RLIMIT_AS, &low), 0);
  const std::uint64_t limited = available_threads();
  std::string message;
  try {
    require_threads(1000, "--p 1000");
  } catch (const InputError& e) {
    message = e.what();
  }
  ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);
  EXPECT_LE(limited, 5u);
  EXPECT_LT(limited, unlimited_threads);
  EXPECT_NE(message.find("--p 1000 needs 1000 threads, more than the "), std::string::npos) << message;
  EXPECT_NE(message.find("address-space limit (ulimit -v)"), std::string::npos) << message;
  EXPECT_NO_THROW(require_threads(1, "--p 1"));
}

}  // namespace
}  // namespace postbox
