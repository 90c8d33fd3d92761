// What each thread of a test is doing, so that the watchdog (watchdog_main.cpp) can say who is
// stuck when a test hangs: "rank 3: in wait(), phase 7".
#pragma once

#include <string>

namespace postbox::test {

// Records what `who` (a rank, or any small id) is doing now; thread-safe, cheap enough for
// per-phase use in stress tests.
void set_doing(int who, const std::string& what);
// Forgets everything recorded (a test's start).
void clear_doing();
// One line per recorded id, in id order; empty when nothing is recorded.
std::string doing_report();

}  // namespace postbox::test
