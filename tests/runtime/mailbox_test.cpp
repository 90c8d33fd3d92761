#include "postbox/runtime/mailbox.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "mailbox_traffic.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {
namespace {

using testing_support::fill;
using testing_support::Mode;
using testing_support::mode_name;

#ifdef POSTBOX_TSAN
constexpr long kScale = 10;  // ThreadSanitizer runs the same rows with 10x fewer messages
#else
constexpr long kScale = 1;
#endif

struct StressRow {
  const char* file;
  int line;
  int p;
  Mode mode;
  long messages;  // in total over all ordered pairs, before the TSan scale
  std::size_t ring_bytes;
  WaitPolicy wait = WaitPolicy{1'000, 10'000};  // short budgets: blocking is the common path
  bool membarrier = true;                        // false: the portable wake-up handshake
  int queued_messages = MailboxOptions{}.queued_messages;
  std::size_t ring_budget = kDefaultRingBudgetBytes;  // 0: every pair stays on the queue
};

std::ostream& operator<<(std::ostream& os, const StressRow& r) {
  return os << r.file << ":" << r.line << " p=" << r.p << " " << mode_name(r.mode) << " messages=" << r.messages
            << " ring=" << r.ring_bytes << " spin=" << r.wait.spin_ns << " yield=" << r.wait.yield_ns
            << (r.membarrier ? "" : " portable-handshake") << " queued=" << r.queued_messages
            << " budget=" << r.ring_budget;
}

class MailboxStress : public testing::TestWithParam<StressRow> {};

// The all-to-all pattern of mailbox_traffic.hpp: a sender and a receiver thread per rank, so
// 2p threads share the 2 cores; every message checked for order and content.
TEST_P(MailboxStress, ConservesEveryMessageInPairOrder) {
  const StressRow row = GetParam();
  SCOPED_TRACE(testing::PrintToString(row));
  const int p = row.p;
  const long per_pair = std::max(1L, row.messages / kScale / (static_cast<long>(p) * (p - 1)));
  MailboxOptions opt;
  opt.ring_bytes = row.ring_bytes;
  opt.wait = row.wait;
  opt.use_membarrier = row.membarrier;
  opt.queued_messages = row.queued_messages;
  opt.ring_budget_bytes = row.ring_budget;
  Mailboxes mb(p, opt);
  EXPECT_EQ(testing_support::all_to_all(mb, row.mode, per_pair), "");
}

// About 1.1 x 10^6 messages over the suite in Release.
INSTANTIATE_TEST_SUITE_P(
    Rows, MailboxStress,
    testing::Values(StressRow{__FILE__, __LINE__, 2, Mode::kRecv, 150'000, 64 * 1024, WaitPolicy{}},
                    StressRow{__FILE__, __LINE__, 2, Mode::kRecv, 100'000, 4 * 1024},
                    StressRow{__FILE__, __LINE__, 2, Mode::kRecvAny, 75'000, 64 * 1024},
                    StressRow{__FILE__, __LINE__, 2, Mode::kTryRecv, 75'000, 64 * 1024},
                    StressRow{__FILE__, __LINE__, 3, Mode::kRecv, 120'000, 64 * 1024, WaitPolicy{}},
                    StressRow{__FILE__, __LINE__, 3, Mode::kRecvAny, 90'000, 8 * 1024},
                    StressRow{__FILE__, __LINE__, 3, Mode::kTryRecv, 90'000, 64 * 1024},
                    StressRow{__FILE__, __LINE__, 8, Mode::kRecv, 80'000, 16 * 1024},
                    StressRow{__FILE__, __LINE__, 8, Mode::kRecvAny, 60'000, 64 * 1024, WaitPolicy{0, 0}},
                    StressRow{__FILE__, __LINE__, 8, Mode::kTryRecv, 60'000, 4 * 1024},
                    StressRow{__FILE__, __LINE__, 64, Mode::kRecv, 40'000, 4 * 1024},
                    StressRow{__FILE__, __LINE__, 64, Mode::kRecvAny, 40'000, 4 * 1024},
                    StressRow{__FILE__, __LINE__, 64, Mode::kTryRecv, 20'000, 4 * 1024},
                    // The portable handshake (no membarrier), blocking on both sides.
                    StressRow{__FILE__, __LINE__, 2, Mode::kRecv, 50'000, 4 * 1024, WaitPolicy{0, 0}, false},
                    StressRow{__FILE__, __LINE__, 8, Mode::kRecvAny, 40'000, 4 * 1024, WaitPolicy{1'000, 10'000},
                              false},
                    // Every pair on the queue (back-pressure there, records larger than the
                    // capacity queued alone), and a budget that gives rings to some pairs only,
                    // made while messages of the pair are still queued.
                    StressRow{__FILE__, __LINE__, 8, Mode::kRecv, 40'000, 4 * 1024, WaitPolicy{1'000, 10'000}, true, 2, 0},
                    StressRow{__FILE__, __LINE__, 3, Mode::kTryRecv, 30'000, 4 * 1024, WaitPolicy{0, 0}, false, 2, 0},
                    StressRow{__FILE__, __LINE__, 8, Mode::kRecvAny, 40'000, 16 * 1024, WaitPolicy{1'000, 10'000}, true,
                              5, 28 * (16 * 1024 + 256)},
                    StressRow{__FILE__, __LINE__, 8, Mode::kRecv, 40'000, 4 * 1024, WaitPolicy{0, 0}, false, 9,
                              20 * (4 * 1024 + 256)}));

// Oversubscribed on fibers: 4095 senders into one receiver's recv_any and an
// all-to-all of 512 ranks (1024 roles), every message checked. Run under POSTBOX_RANKS=fibers
// (ctest fibers.mailbox_test); 4096 kernel threads would not fit the 2-core CI box's time.
TEST(MailboxOnFibers, FanInFrom4095RanksAndAnAllToAllOf512Ranks) {
  if (!test::ranks_are_fibers(4096)) GTEST_SKIP() << "runs with POSTBOX_RANKS=fibers (ctest fibers.mailbox_test)";
  MailboxOptions opt;
  opt.ring_bytes = 4096;
  {
    Mailboxes mb(4096, opt);
    EXPECT_EQ(testing_support::fan_in(mb, 3, 256), "");
  }
  Mailboxes mb(512, opt);
  EXPECT_EQ(testing_support::all_to_all(mb, Mode::kRecvAny, 1, 64), "");
}

// ---------------------------------------------------------------------------------------------

std::vector<std::byte> pattern(std::uint64_t key, std::size_t n) {
  std::vector<std::byte> v(n);
  fill(key, v.data(), n);
  return v;
}

struct SizeRow {
  const char* file;
  int line;
  std::size_t ring_bytes;
  std::vector<std::size_t> sizes;  // sent in turn, repeatedly, so records start all over the ring
};

std::ostream& operator<<(std::ostream& os, const SizeRow& r) {
  return os << r.file << ":" << r.line << " ring=" << r.ring_bytes << " sizes=" << r.sizes.size();
}

class MailboxSizes : public testing::TestWithParam<SizeRow> {};

TEST_P(MailboxSizes, StreamsEverySizeThroughASmallRing) {
  const SizeRow row = GetParam();
  SCOPED_TRACE(testing::PrintToString(row));
  MailboxOptions opt;
  opt.ring_bytes = row.ring_bytes;
  Mailboxes mb(2, opt);
  constexpr int kRounds = 7;
  // Rank 0 sends, rank 1 receives: threads, or fibers under POSTBOX_RANKS=fibers.
  const auto errors = test::run_ranks(2, [&](int rank) {
    if (rank == 0) {
      for (int round = 0; round < kRounds; ++round) {
        for (std::size_t i = 0; i < row.sizes.size(); ++i) {
          const auto msg = pattern(static_cast<std::uint64_t>(round * 1000) + i, row.sizes[i]);
          mb.send(0, 1, msg);
        }
      }
      return;
    }
    for (int round = 0; round < kRounds; ++round) {
      for (std::size_t i = 0; i < row.sizes.size(); ++i) {
        const auto want = pattern(static_cast<std::uint64_t>(round * 1000) + i, row.sizes[i]);
        const std::vector<std::byte> got = mb.recv(1, 0);
        ASSERT_EQ(got.size(), want.size()) << "round " << round << " message " << i;
        ASSERT_TRUE(got == want) << "round " << round << " message " << i;
      }
    }
  });
  for (const auto& e : errors) EXPECT_FALSE(e) << "a rank threw";
}

INSTANTIATE_TEST_SUITE_P(
    Rows, MailboxSizes,
    testing::Values(SizeRow{__FILE__, __LINE__, 4096, {0, 1, 7, 8, 9, 15, 16, 17, 1000, 1016, 1017, 4088, 4096, 4097}},
                    SizeRow{__FILE__, __LINE__, 4096, {3, Mailboxes::kMaxMessageBytes >> 10, 5}},  // 1 MiB
                    SizeRow{__FILE__, __LINE__, 4096, {std::size_t{1} << 20, 0, (std::size_t{1} << 20) + 3}},
                    SizeRow{__FILE__, __LINE__, 65536, {std::size_t{1} << 20, 65536, 65535, 1}},
                    // Every size up to two cache lines, so records end at every 8-byte offset of
                    // a line and the sender's zeroing of the next line wraps the ring many times.
                    SizeRow{__FILE__, __LINE__, 4096, [] {
                              std::vector<std::size_t> v;
                              for (std::size_t n = 0; n <= 130; ++n) v.push_back(n);
                              return v;
                            }()}));

TEST(Mailbox, TinyRingBytesStillHoldAFull4KiBRecord) {
  MailboxOptions opt;
  opt.ring_bytes = 100;
  // A 4 KiB ring takes a 4080-byte message (a 4088-byte record plus the 8-byte end mark)
  // without a receiver.
  Mailboxes mb(2, opt);
  mb.send(0, 1, pattern(1, 4080));
  EXPECT_EQ(mb.recv(1, 0), pattern(1, 4080));
}

// The sender counts the receiver's progress in whole cache lines (mailbox.hpp): after the
// receiver took a 16-byte record, mid-line, the free room is the capacity less that line's
// first 16 bytes and the 8-byte end mark, and a record of exactly that size fits without a
// receiver.
TEST(Mailbox, RoomIsCountedInWholeLinesOfTheReceiversProgress) {
  MailboxOptions opt;
  opt.ring_bytes = 4096;
  opt.queued_messages = 0;  // the 8-byte message goes through the ring too
  Mailboxes mb(2, opt);
  mb.send(0, 1, pattern(1, 8));  // a 16-byte record
  EXPECT_EQ(mb.recv(1, 0), pattern(1, 8));
  const auto big = pattern(2, 4096 - 16 - 8 - 8);  // its record: 4064 + 8 = 4072 bytes
  mb.send(0, 1, big);
  EXPECT_EQ(mb.recv(1, 0), big);
}

TEST(Mailbox, ZeroByteNotifyIsDeliveredInOrder) {
  Mailboxes mb(3);
  std::byte buf[8];
  std::size_t n = 99;
  EXPECT_FALSE(mb.try_recv(1, 0, buf, n));
  EXPECT_EQ(mb.try_recv_any(1, buf, n), -1);
  mb.notify(0, 1);
  mb.notify(2, 1);
  const std::byte one[1] = {std::byte{42}};
  mb.send(0, 1, one);
  ASSERT_TRUE(mb.try_recv(1, 0, buf, n));
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(mb.recv(1, 2, buf), 0u);
  EXPECT_EQ(mb.recv(1, 0, buf), 1u);
  EXPECT_EQ(buf[0], std::byte{42});
  EXPECT_FALSE(mb.try_recv(1, 0, buf, n));
}

TEST(Mailbox, NotifyWakesABlockedReceiver) {
  MailboxOptions opt;
  opt.wait = WaitPolicy{0, 0};  // block at once
  Mailboxes mb(2, opt);
  std::atomic<bool> got{false};
  std::jthread receiver([&] {
    std::byte b[1];
    EXPECT_EQ(mb.recv(1, 0, b), 0u);
    got.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  mb.notify(0, 1);
  receiver.join();
  EXPECT_TRUE(got.load());
}

TEST(Mailbox, RecvAnyIsRoundRobinOverSources) {
  Mailboxes mb(4);
  for (int round = 0; round < 2; ++round) {
    for (int s : {0, 1, 3}) {
      const std::byte b[1] = {static_cast<std::byte>(s)};
      mb.send(s, 2, b);
    }
  }
  std::vector<int> order;
  std::byte buf[1];
  std::size_t n = 0;
  for (int i = 0; i < 6; ++i) order.push_back(mb.recv_any(2, buf, n));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 3, 0, 1, 3}));
}

TEST(Mailbox, SendToSelfThatFitsIsDelivered) {
  Mailboxes mb(1);
  const auto msg = pattern(7, 100);
  mb.send(0, 0, msg);
  EXPECT_EQ(mb.recv(0, 0), msg);
}

// ---- Memory that grows with the pairs that talk (mailbox.hpp, docs/mailboxes.md "Memory") ----

constexpr std::uint64_t kRingLines = 256;  // a ring's four cache lines, counted by ring_bytes_held()

// Receives the next message from src at dst through one of the four receive calls.
std::vector<std::byte> receive(Mailboxes& mb, int dst, int src, int how) {
  std::vector<std::byte> buf(1 << 16);
  std::size_t n = 0;
  switch (how % 4) {
    case 0: return mb.recv(dst, src);
    case 1: n = mb.recv(dst, src, buf); break;
    case 2: EXPECT_TRUE(mb.try_recv(dst, src, buf, n)); break;
    default: EXPECT_EQ(mb.recv_any(dst, buf, n), src); break;
  }
  buf.resize(n);
  return buf;
}

TEST(MailboxMemory, APairQueuesItsFirstMessagesThenMakesItsRingInOrder) {
  MailboxOptions o;
  o.ring_bytes = 4096;
  o.queued_messages = 2;
  for (int how = 0; how < 4; ++how) {
    SCOPED_TRACE("receive call " + std::to_string(how));
    Mailboxes mb(3, o);
    mb.send(0, 1, pattern(1, 8));
    mb.send(0, 1, pattern(2, 100));
    EXPECT_EQ(mb.ring_bytes_held(), 0u) << "two messages go through the receiver's queue";
    mb.send(0, 1, pattern(3, 0));  // the third makes the ring while two wait on the queue
    mb.send(0, 1, pattern(4, 9));
    EXPECT_EQ(mb.ring_bytes_held(), 4096 + kRingLines);
    EXPECT_EQ(receive(mb, 1, 0, how), pattern(1, 8));
    EXPECT_EQ(receive(mb, 1, 0, how + 1), pattern(2, 100));
    EXPECT_EQ(receive(mb, 1, 0, how + 2), pattern(3, 0));
    EXPECT_EQ(receive(mb, 1, 0, how + 3), pattern(4, 9));
    std::byte b[1];
    std::size_t n = 0;
    EXPECT_FALSE(mb.try_recv(1, 0, b, n));
    // A record longer than a quarter ring makes the pair's ring at once.
    mb.send(2, 1, pattern(5, 1100));
    EXPECT_EQ(mb.ring_bytes_held(), 2 * (4096 + kRingLines));
    EXPECT_EQ(receive(mb, 1, 2, how), pattern(5, 1100));
  }
  o.queued_messages = 0;
  Mailboxes eager(2, o);
  eager.notify(0, 1);
  EXPECT_EQ(eager.ring_bytes_held(), 4096 + kRingLines) << "queued_messages = 0: a ring on the first message";
}

TEST(MailboxMemory, RingBudgetCapsTheRingsAndLaterPairsStayQueued) {
  MailboxOptions o;
  o.ring_bytes = 4096;
  o.queued_messages = 0;
  o.ring_budget_bytes = 2 * (4096 + kRingLines) + 100;
  Mailboxes mb(4, o);
  for (int k = 0; k < 10; ++k) {
    for (int s : {0, 2, 3}) mb.send(s, 1, pattern(static_cast<std::uint64_t>(10 * s + k), 24 + k));
  }
  EXPECT_EQ(mb.ring_bytes_held(), 2 * (4096 + kRingLines)) << "pair (3, 1) is past the budget";
  std::byte buf[64];
  for (int k = 0; k < 10; ++k) {
    for (int s : {0, 2, 3}) {  // recv_any is round-robin over rings and queued pairs alike
      std::size_t n = 0;
      ASSERT_EQ(mb.recv_any(1, buf, n), s);
      EXPECT_EQ(std::vector<std::byte>(buf, buf + n), pattern(static_cast<std::uint64_t>(10 * s + k), 24 + k));
    }
  }
  o.ring_budget_bytes = 0;
  Mailboxes none(2, o);
  none.send(0, 1, pattern(1, 3000));  // would stream through a ring: queued whole
  EXPECT_EQ(none.ring_bytes_held(), 0u);
  EXPECT_EQ(none.recv(1, 0), pattern(1, 3000));
}

// A queued pair holds what its ring would: undelivered records plus the next one and the
// 8-byte end mark within the capacity; a larger record alone once nothing is undelivered.
TEST(MailboxMemory, AQueuedPairHoldsAtMostTheRingCapacity) {
  MailboxOptions o;
  o.ring_bytes = 4096;
  o.ring_budget_bytes = 0;
  Mailboxes mb(2, o);
  mb.send(0, 0, pattern(1, 10000));  // nothing undelivered: queued alone, no receiver needed
  EXPECT_EQ(mb.recv(0, 0), pattern(1, 10000));
  for (int i = 0; i < 127; ++i) mb.send(0, 0, pattern(static_cast<std::uint64_t>(i), 24));  // 127 x 32 + 8 <= 4096
  for (int i = 0; i < 127; ++i) ASSERT_EQ(mb.recv(0, 0), pattern(static_cast<std::uint64_t>(i), 24));
}

TEST(MailboxMemoryDeathTest, AQueuedSelfSendPastTheCapacityFailsFast) {
  MailboxOptions o;
  o.ring_bytes = 4096;
  o.ring_budget_bytes = 0;
  Mailboxes mb(2, o);
  EXPECT_DEATH(
      {
        for (int i = 0; i < 128; ++i) mb.send(1, 1, pattern(static_cast<std::uint64_t>(i), 24));
      },
      "rank 1 sends itself a message of 24 bytes that does not fit its ring to itself \\(4096 bytes, 4064 of them "
      "undelivered\\)");
}

[[maybe_unused]] long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// The p^2 slots and queued-pair entries (24 bytes a pair: 384 MiB at p = 4096) cost memory only
// for the pages the talking pairs touch.
TEST(MailboxMemory, ConstructionTouchesNoPerPairMemory) {
#ifdef POSTBOX_TSAN
  GTEST_SKIP() << "ThreadSanitizer's allocator may write what it hands out";
#else
  const long before = resident_bytes();
  Mailboxes mb(4096);
  EXPECT_LT(resident_bytes() - before, 32L << 20) << "a 4096-rank mailbox set touched its per-pair arrays";
  mb.send(4095, 0, pattern(1, 8));
  EXPECT_EQ(mb.recv(0, 4095), pattern(1, 8));
  EXPECT_LT(resident_bytes() - before, 32L << 20);
#endif
}

// Abort: each row is one way of being blocked; the blocked call must throw Aborted.
struct AbortRow {
  const char* file;
  int line;
  const char* name;
  WaitPolicy wait;
  std::function<void(Mailboxes&)> blocked_call;
};

std::ostream& operator<<(std::ostream& os, const AbortRow& r) {
  return os << r.file << ":" << r.line << " " << r.name << " spin=" << r.wait.spin_ns << " yield=" << r.wait.yield_ns;
}

class MailboxAbort : public testing::TestWithParam<AbortRow> {};

TEST_P(MailboxAbort, WakesTheBlockedCallWithAborted) {
  const AbortRow& row = GetParam();
  SCOPED_TRACE(testing::PrintToString(row));
  MailboxOptions opt;
  opt.ring_bytes = 4096;
  opt.wait = row.wait;
  opt.ring_budget_bytes = 4096 + kRingLines;  // one ring: fill_queued_then_block
  Mailboxes mb(3, opt);
  std::atomic<int> outcome{0};  // 1 = threw Aborted, 2 = returned
  // Rank 0 is the victim, rank 1 aborts it: threads, or under POSTBOX_RANKS=fibers two fibers
  // on two workers, so the victim's worker blocks with its only rank waiting and the abort must
  // reach the blocked worker (wait.hpp). Rank 1's sleep blocks only its own worker.
  auto errors = test::run_ranks(2, [&](int rank) {
    if (rank == 0) {
      try {
        row.blocked_call(mb);
        outcome.store(2);
      } catch (const Aborted&) {
        outcome.store(1);
      }
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // usually long enough to reach the block phase
    EXPECT_EQ(outcome.load(), 0) << "the call should still be blocked";
    mb.abort();
  });
  for (const auto& e : errors) EXPECT_FALSE(e) << "a rank threw";
  EXPECT_EQ(outcome.load(), 1);
  EXPECT_TRUE(mb.aborted());

  // Every later call throws too, until reset().
  std::byte b[8];
  std::size_t n = 0;
  EXPECT_THROW(mb.notify(1, 2), Aborted);
  EXPECT_THROW((void)mb.try_recv(2, 1, b, n), Aborted);
  EXPECT_THROW((void)mb.recv_any(2, b, n), Aborted);

  mb.reset();
  EXPECT_FALSE(mb.aborted());
  EXPECT_EQ(mb.try_recv_any(1, b, n), -1) << "reset discards undelivered messages";
  EXPECT_EQ(mb.try_recv_any(2, b, n), -1);
  const auto msg = pattern(3, 5000);  // longer than the ring: needs a live receiver
  errors = test::run_ranks(2, [&](int rank) {
    if (rank == 0) {
      mb.send(0, 1, msg);
    } else {
      EXPECT_EQ(mb.recv(1, 0), msg);
    }
  });
  for (const auto& e : errors) EXPECT_FALSE(e) << "a rank threw";
}

void fill_then_block(Mailboxes& mb) {
  mb.send(0, 1, pattern(1, 4000));  // fits
  mb.send(0, 1, pattern(2, 4000));  // needs 1 KiB more than is free: blocks
}

// Pair (0, 1) past a budget another pair used up: it stays on the queue, which holds four
// 1008-byte records (4032 + 8 <= 4096 bytes) and not a fifth.
void fill_queued_then_block(Mailboxes& mb) {
  mb.send(2, 1, pattern(1, 2000));  // makes the one ring the budget allows (MailboxAbort's options)
  for (int i = 0; i < 5; ++i) mb.send(0, 1, pattern(2, 1000));
}

const WaitPolicy kBlockAtOnce{0, 0};
const WaitPolicy kSpinOnly{1'000'000'000'000, 0};
const WaitPolicy kYieldOnly{0, 1'000'000'000'000};

INSTANTIATE_TEST_SUITE_P(
    Rows, MailboxAbort,
    testing::Values(
        AbortRow{__FILE__, __LINE__, "recv", kBlockAtOnce, [](Mailboxes& mb) { (void)mb.recv(1, 0); }},
        AbortRow{__FILE__, __LINE__, "recv", kSpinOnly, [](Mailboxes& mb) { (void)mb.recv(1, 0); }},
        AbortRow{__FILE__, __LINE__, "recv", kYieldOnly, [](Mailboxes& mb) { (void)mb.recv(1, 0); }},
        AbortRow{__FILE__, __LINE__, "recv_any", kBlockAtOnce,
                 [](Mailboxes& mb) {
                   std::byte b[8];
                   std::size_t n = 0;
                   (void)mb.recv_any(1, b, n);
                 }},
        AbortRow{__FILE__, __LINE__, "send_mid_message", kBlockAtOnce,
                 [](Mailboxes& mb) { mb.send(0, 1, pattern(4, 9000)); }},  // 2x the ring, no receiver
        AbortRow{__FILE__, __LINE__, "send_full_ring", kBlockAtOnce, fill_then_block},
        AbortRow{__FILE__, __LINE__, "send_full_ring", kSpinOnly, fill_then_block},
        AbortRow{__FILE__, __LINE__, "send_full_ring", kYieldOnly, fill_then_block},
        AbortRow{__FILE__, __LINE__, "send_full_queued_pair", kBlockAtOnce, fill_queued_then_block},
        AbortRow{__FILE__, __LINE__, "send_full_queued_pair", kSpinOnly, fill_queued_then_block}));

TEST(Mailbox, BadConstructionIsInputError) {
  EXPECT_THROW(Mailboxes(0), InputError);
  EXPECT_THROW(Mailboxes(-3), InputError);
  MailboxOptions big;
  big.ring_bytes = (std::size_t{1} << 30) + 1;
  EXPECT_THROW(Mailboxes(2, big), InputError);
  MailboxOptions neg;
  neg.wait.spin_ns = -1;
  EXPECT_THROW(Mailboxes(2, neg), InputError);
  MailboxOptions queued;
  queued.queued_messages = -1;
  EXPECT_THROW(Mailboxes(2, queued), InputError);
  queued.queued_messages = 128;  // the slot's tag counts 7 bits
  EXPECT_THROW(Mailboxes(2, queued), InputError);
  queued.queued_messages = 127;
  EXPECT_NO_THROW(Mailboxes(2, queued));
}

TEST(MailboxDeathTest, RankOutsideTheTeamFailsFast) {
  Mailboxes mb(3);
  std::byte b[8];
  EXPECT_DEATH(mb.send(0, 3, {}), "send: destination rank 3 is outside 0..2");
  EXPECT_DEATH(mb.send(-1, 1, {}), "send: source rank -1 is outside 0..2");
  EXPECT_DEATH((void)mb.recv(5, 0, b), "recv: destination rank 5");
  std::size_t n = 0;
  EXPECT_DEATH((void)mb.try_recv_any(3, b, n), "try_recv_any: destination rank 3");
}

TEST(Mailbox, StreamedSendToSelfThatFitsIsDelivered) {
  MailboxOptions o;
  o.ring_bytes = 4096;  // chunks of 1 KiB: 3000 bytes are streamed, and fit the free space
  Mailboxes mb(2, o);
  const auto a = pattern(8, 3000);
  mb.send(1, 1, a);
  EXPECT_EQ(mb.recv(1, 1), a);
  const auto b = pattern(9, 40);
  mb.send(1, 1, b);
  std::byte buf[64];
  std::size_t n = 0;
  EXPECT_EQ(mb.recv_any(1, buf, n), 1);
  EXPECT_EQ(std::vector<std::byte>(buf, buf + n), b);
}

// Regression: a self-send larger than the ring used to wait forever
// for a receiver that is the sender itself. Each call below can never complete.
TEST(MailboxDeathTest, SelfSendThatCannotFitFailsFastInsteadOfHanging) {
  MailboxOptions o;
  o.ring_bytes = 4096;
  Mailboxes mb(2, o);
  EXPECT_DEATH(mb.send(0, 0, pattern(1, 5000)),
               "rank 0 sends itself a message of 5000 bytes that does not fit its ring to itself \\(4096 bytes, 0 of "
               "them undelivered\\): nobody else would drain it");
  EXPECT_DEATH(
      {
        mb.send(1, 1, pattern(2, 3000));  // fits
        mb.send(1, 1, pattern(3, 1200));  // the free space is 1 KiB minus the reserve
      },
      "rank 1 sends itself a message of 1200 bytes .* 3008 of them undelivered");
  EXPECT_DEATH(
      {
        for (int i = 0; i < 200; ++i) mb.send(0, 0, pattern(static_cast<std::uint64_t>(i), 24));  // 32-byte records
      },
      "rank 0 sends itself a message of 24 bytes");
}

TEST(MailboxDeathTest, ReceivingFromItselfWithNothingPendingFailsFast) {
  Mailboxes mb(3);
  std::byte b[8];
  std::size_t n = 0;
  EXPECT_DEATH((void)mb.recv(2, 2, b), "mailbox recv: rank 2 waits for a message from itself and none is pending");
  EXPECT_DEATH((void)mb.recv(1, 1), "mailbox recv: rank 1 waits for a message from itself");
  mb.notify(0, 0);
  (void)mb.recv(0, 0, b);
  EXPECT_DEATH((void)mb.recv(0, 0, b), "rank 0 waits for a message from itself");  // the one message is gone
  Mailboxes solo(1);
  EXPECT_DEATH((void)solo.recv_any(0, b, n), "mailbox recv_any: rank 0 waits for a message from itself");
}

TEST(MailboxDeathTest, MessageLargerThanTheBufferFailsFast) {
  Mailboxes mb(2);
  mb.send(0, 1, pattern(1, 16));
  std::byte b[8];
  EXPECT_DEATH((void)mb.recv(1, 0, b), "message of 16 bytes from rank 0 does not fit the 8-byte buffer");
}

}  // namespace
}  // namespace postbox
