// Runs the C test of postbox/barrier.h (c_api_test.c, compiled as C) under GoogleTest, so that
// it gets the watchdog and the ThreadSanitizer build.
#include <gtest/gtest.h>

extern "C" int postbox_c_api_test(void);

TEST(BarrierCApi, FromC) { EXPECT_EQ(postbox_c_api_test(), 0); }
