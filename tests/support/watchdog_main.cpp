// gtest main with a watchdog: a test that runs longer than POSTBOX_TEST_TIMEOUT_S seconds
// (default 120; 600 under ThreadSanitizer) is reported by name and the process aborts, so a
// hang fails with a message instead of waiting for ctest's timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <map>
#include <thread>

#include "postbox/runtime/wait.hpp"
#include "stuck.hpp"

namespace postbox::test {
namespace {
std::mutex g_doing_mu;
std::map<int, std::string> g_doing;
}  // namespace

void set_doing(int who, const std::string& what) {
  std::lock_guard<std::mutex> lock(g_doing_mu);
  g_doing[who] = what;
}

void clear_doing() {
  std::lock_guard<std::mutex> lock(g_doing_mu);
  g_doing.clear();
}

std::string doing_report() {
  std::lock_guard<std::mutex> lock(g_doing_mu);
  std::string out;
  for (const auto& [who, what] : g_doing) out += "  " + std::to_string(who) + ": " + what + "\n";
  return out;
}

}  // namespace postbox::test

namespace {

class Watchdog : public testing::EmptyTestEventListener {
 public:
  explicit Watchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { loop(); }) {}
  ~Watchdog() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void OnTestStart(const testing::TestInfo& info) override {
    std::lock_guard<std::mutex> lock(mu_);
    current_ = std::string(info.test_suite_name()) + "." + info.name();
    postbox::test::clear_doing();
    started_ = std::chrono::steady_clock::now();
    running_ = true;
  }
  void OnTestEnd(const testing::TestInfo&) override {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = false;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::seconds(1));
      if (running_ && std::chrono::steady_clock::now() - started_ > limit_) {
        std::fprintf(stderr, "watchdog: %s still running after %lld s: treating it as a hang\n", current_.c_str(),
                     static_cast<long long>(limit_.count()));
        const std::string doing = postbox::test::doing_report();
        if (!doing.empty()) std::fprintf(stderr, "watchdog: what each thread was doing:\n%s", doing.c_str());
        // Ranks that are fibers: which of them are suspended in a wait (a lost wake-up).
        const std::string fibers = postbox::internal::fiber_waiting_report();
        if (!fibers.empty()) std::fprintf(stderr, "watchdog: fiber ranks still waiting:\n%s", fibers.c_str());
        std::fflush(stderr);
        std::abort();
      }
    }
  }

  std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool running_ = false;
  std::string current_;
  std::chrono::steady_clock::time_point started_;
  std::thread thread_;
};

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
#ifdef POSTBOX_TSAN
  long limit = 600;
#else
  long limit = 120;
#endif
  if (const char* v = std::getenv("POSTBOX_TEST_TIMEOUT_S")) limit = std::strtol(v, nullptr, 10);
  testing::GTEST_FLAG(death_test_style) = "threadsafe";
  // The listener list owns the watchdog.
  testing::UnitTest::GetInstance()->listeners().Append(new Watchdog(std::chrono::seconds(limit)));
  return RUN_ALL_TESTS();
}
