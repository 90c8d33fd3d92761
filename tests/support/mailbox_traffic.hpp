// Mailbox traffic patterns shared by the stress suite (mailbox_test.cpp) and the adversarial
// suite (mailbox_inject_test.cpp): each runs its roles (senders, receivers, an aborter)
// concurrently over a Mailboxes through run_ranks() (ranks.hpp: std::threads, or the fibers of a
// Team under POSTBOX_RANKS=fibers) and returns "" when every message arrived exactly once, in
// pair order, byte for byte, or a line saying what went wrong. on_thread(key) runs first in
// every role (the adversarial suite binds the role's delay sequence there); keys are distinct
// within one pattern.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "postbox/runtime/mailbox.hpp"
#include "ranks.hpp"

namespace postbox::testing_support {

using ThreadHook = std::function<void(std::uint64_t key)>;

inline std::uint64_t mix(std::uint64_t x) {
  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline std::uint64_t message_key(int src, int dst, long k) {
  constexpr std::uint64_t kSeed = 0x5eed'2024'0002ULL;
  return mix(kSeed ^ (static_cast<std::uint64_t>(src) << 44) ^ (static_cast<std::uint64_t>(dst) << 24) ^
             static_cast<std::uint64_t>(k));
}

// Mixed sizes 0 B .. max_bytes, mostly small: 5% empty, 80% up to 64 B, 13% up to 4 KiB, 2% up
// to max_bytes (64 KiB in the stress suite).
inline std::size_t message_size(std::uint64_t key, std::size_t max_bytes = 65536) {
  const std::uint64_t bucket = key % 100;
  const std::uint64_t r = key >> 16;
  std::size_t n = 0;
  if (bucket < 5) n = 0;
  else if (bucket < 85) n = r % 65;
  else if (bucket < 98) n = r % 4097;
  else n = r % (max_bytes + 1);
  return std::min(n, max_bytes);
}

// Fills out[0, n) with the content of the message with this key.
inline void fill(std::uint64_t key, std::byte* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t w = mix(key + i);
    std::memcpy(out + i, &w, 8);
  }
  if (i < n) {
    const std::uint64_t w = mix(key + i);
    std::memcpy(out + i, &w, n - i);
  }
}

enum class Mode { kRecv, kRecvAny, kTryRecv };

inline const char* mode_name(Mode m) {
  return m == Mode::kRecv ? "recv" : m == Mode::kRecvAny ? "recv_any" : "try_recv";
}

// Every rank sends per_pair messages to every other rank, from a sender thread of its own, and
// receives them on a receiver thread of its own (one thread per role, as mailbox.hpp allows),
// so 2p threads run. Senders follow a diagonal schedule: in round k, step j = 1..p-1, rank s
// sends its k-th message to s + j. In Mode::kRecv the receivers follow the mirror schedule
// (rank d receives from d - j), which cannot deadlock: the receiver that is least advanced waits
// on a sender that is at the same step, sending to it, or ahead. Afterwards every ring is empty.
inline std::string all_to_all(Mailboxes& mb, Mode mode, long per_pair, std::size_t max_bytes = 65536,
                              const ThreadHook& on_thread = {}) {
  const int p = mb.size();
  const auto P = static_cast<std::size_t>(p);
  std::vector<std::string> errors(P);
  std::vector<long> recv_count(P, 0);

  auto sender = [&](int s) {
    if (on_thread) on_thread(static_cast<std::uint64_t>(2 * s + 1));
    std::vector<std::byte> buf(max_bytes);
    for (long k = 0; k < per_pair; ++k) {
      for (int j = 1; j < p; ++j) {
        const int d = (s + j) % p;
        const std::uint64_t key = message_key(s, d, k);
        const std::size_t n = message_size(key, max_bytes);
        fill(key, buf.data(), n);
        mb.send(s, d, std::span<const std::byte>(buf.data(), n));
      }
    }
  };

  auto receiver = [&](int d) {
    if (on_thread) on_thread(static_cast<std::uint64_t>(2 * d));
    std::vector<std::byte> buf(max_bytes), expect(max_bytes);
    std::vector<long> next(P, 0);
    std::string& err = errors[static_cast<std::size_t>(d)];
    auto check = [&](int s, std::size_t n) {
      const long k = next[static_cast<std::size_t>(s)]++;
      const std::uint64_t key = message_key(s, d, k);
      const std::size_t want = message_size(key, max_bytes);
      fill(key, expect.data(), want);
      if (err.empty() && (n != want || std::memcmp(buf.data(), expect.data(), n) != 0)) {
        err = "rank " + std::to_string(d) + ": message " + std::to_string(k) + " from rank " + std::to_string(s) +
              " has size " + std::to_string(n) + " (want " + std::to_string(want) + ") or wrong content";
      }
      ++recv_count[static_cast<std::size_t>(d)];
    };
    const long want_total = per_pair * (p - 1);
    switch (mode) {
      case Mode::kRecv:
        for (long k = 0; k < per_pair; ++k) {
          for (int j = 1; j < p; ++j) {
            const int s = (d - j + p) % p;
            check(s, mb.recv(d, s, buf));
          }
        }
        break;
      case Mode::kRecvAny:
        for (long i = 0; i < want_total; ++i) {
          std::size_t n = 0;
          const int s = mb.recv_any(d, buf, n);
          check(s, n);
        }
        break;
      case Mode::kTryRecv: {
        long got = 0;
        int s = (d + 1) % p;
        unsigned idle = 0;
        while (got < want_total) {
          std::size_t n = 0;
          bool progress = false;
          if (got % 3 == 0) {  // every third attempt goes through try_recv_any
            const int from = mb.try_recv_any(d, buf, n);
            if (from >= 0) {
              check(from, n);
              progress = true;
            }
          } else if (s != d && mb.try_recv(d, s, buf, n)) {
            check(s, n);
            progress = true;
          }
          s = (s + 1) % p;
          if (progress) {
            ++got;
            idle = 0;
          } else if (++idle >= static_cast<unsigned>(p)) {
            test::yield_rank();  // a full scan found nothing: give the core (or the worker) to a sender
            idle = 0;
          }
        }
        break;
      }
    }
  };

  // Role 2r is rank r's receiver, role 2r + 1 its sender.
  for (const auto& e : test::run_ranks(2 * p, [&](int role) { role % 2 == 0 ? receiver(role / 2) : sender(role / 2); })) {
    if (e) std::rethrow_exception(e);
  }
  for (int r = 0; r < p; ++r) {
    if (!errors[static_cast<std::size_t>(r)].empty()) return errors[static_cast<std::size_t>(r)];
    if (recv_count[static_cast<std::size_t>(r)] != per_pair * (p - 1)) {
      return "rank " + std::to_string(r) + " received " + std::to_string(recv_count[static_cast<std::size_t>(r)]) +
             " messages, want " + std::to_string(per_pair * (p - 1));
    }
  }
  std::byte b[1];
  std::size_t n = 0;
  for (int d = 0; d < p; ++d) {
    if (mb.try_recv_any(d, b, n) != -1) return "rank " + std::to_string(d) + " has a message left over";
  }
  return "";
}

// Fan-in: ranks 1..p-1 each send `per_source` messages to rank 0, which takes them with
// recv_any; per-source order and content are checked.
inline std::string fan_in(Mailboxes& mb, long per_source, std::size_t max_bytes, const ThreadHook& on_thread = {}) {
  const int p = mb.size();
  std::string err;
  auto source = [&](int s) {
    if (on_thread) on_thread(static_cast<std::uint64_t>(s));
    std::vector<std::byte> buf(max_bytes);
    for (long k = 0; k < per_source; ++k) {
      const std::uint64_t key = message_key(s, 0, k);
      const std::size_t n = message_size(key, max_bytes);
      fill(key, buf.data(), n);
      mb.send(s, 0, std::span<const std::byte>(buf.data(), n));
    }
  };
  auto sink = [&] {
    if (on_thread) on_thread(0);
    std::vector<std::byte> buf(max_bytes), expect(max_bytes);
    std::vector<long> next(static_cast<std::size_t>(p), 0);
    for (long i = 0; i < per_source * (p - 1); ++i) {
      std::size_t n = 0;
      const int s = mb.recv_any(0, buf, n);
      const long k = next[static_cast<std::size_t>(s)]++;
      const std::uint64_t key = message_key(s, 0, k);
      const std::size_t want = message_size(key, max_bytes);
      fill(key, expect.data(), want);
      if (err.empty() && (s < 1 || n != want || std::memcmp(buf.data(), expect.data(), n) != 0)) {
        err = "fan-in: message " + std::to_string(k) + " from rank " + std::to_string(s) + " is wrong";
      }
    }
  };
  for (const auto& e : test::run_ranks(p, [&](int r) { r == 0 ? sink() : source(r); })) {
    if (e) std::rethrow_exception(e);
  }
  return err;
}

// Ping-pong: ranks 0 and 1, one thread each playing both roles, `rounds` round trips of an
// 8-byte counter; each side also sends itself a message and takes it back every round (the
// self-ring path), and rank 1 answers with a notify every fourth round.
inline std::string ping_pong(Mailboxes& mb, long rounds, const ThreadHook& on_thread = {}) {
  std::string err0, err1;
  auto side = [&](int me, std::string& err) {
    if (on_thread) on_thread(static_cast<std::uint64_t>(me));
    std::uint64_t v = 0;
    auto bytes = std::as_writable_bytes(std::span(&v, 1));
    for (long i = 0; i < rounds; ++i) {
      const auto want = static_cast<std::uint64_t>(i);
      if (me == 0) {
        v = want;
        mb.send(0, 1, bytes);
        const std::size_t n = mb.recv(0, 1, bytes);
        if (err.empty() && !(i % 4 == 3 ? n == 0 : n == 8 && v == want + 1)) {
          err = "ping-pong: rank 0's reply " + std::to_string(i) + " is wrong";
        }
      } else {
        const std::size_t n = mb.recv(1, 0, bytes);
        if (err.empty() && (n != 8 || v != want)) err = "ping-pong: rank 1's message " + std::to_string(i) + " is wrong";
        if (i % 4 == 3) {
          mb.notify(1, 0);
        } else {
          v = want + 1;
          mb.send(1, 0, bytes);
        }
      }
      v = want * 3 + static_cast<std::uint64_t>(me);
      mb.send(me, me, bytes);
      v = 0;
      if (err.empty() && (mb.recv(me, me, bytes) != 8 || v != want * 3 + static_cast<std::uint64_t>(me))) {
        err = "ping-pong: rank " + std::to_string(me) + "'s message to itself " + std::to_string(i) + " is wrong";
      }
    }
  };
  for (const auto& e : test::run_ranks(2, [&](int me) { side(me, me == 0 ? err0 : err1); })) {
    if (e) std::rethrow_exception(e);
  }
  return !err0.empty() ? err0 : err1;
}

// Abort: every role blocks (receiver r on source r + 1, which sends only to r + 2; sender r
// on the full ring to r + 1, whose receiver waits on r + 2), then abort() must release every
// one of them with Aborted; after reset() the mailboxes carry an all-to-all again. p >= 3;
// ring_bytes must be the mailboxes' ring size.
inline std::string abort_then_reuse(Mailboxes& mb, std::size_t ring_bytes, const ThreadHook& on_thread = {}) {
  const int p = mb.size();
  if (p < 3) return "abort_then_reuse needs p >= 3";
  std::atomic<int> started{0};
  std::atomic<int> aborted{0};
  std::atomic<int> returned{0};
  auto receiver = [&](int r) {  // waits on a source that never sends
    if (on_thread) on_thread(static_cast<std::uint64_t>(2 * r));
    started.fetch_add(1);
    try {
      (void)mb.recv(r, (r + 1) % p);
      returned.fetch_add(1);
    } catch (const Aborted&) {
      aborted.fetch_add(1);
    }
  };
  auto sender = [&](int r) {  // fills the ring to a rank whose receiver waits elsewhere
    if (on_thread) on_thread(static_cast<std::uint64_t>(2 * r + 1));
    started.fetch_add(1);
    const std::vector<std::byte> msg(ring_bytes / 3);  // streamed: blocks mid-message too
    try {
      for (;;) mb.send(r, (r + 1) % p, msg);
    } catch (const Aborted&) {
      aborted.fetch_add(1);
    }
  };
  // Roles 2r and 2r + 1: rank r's receiver and sender; role 2p aborts once all have started.
  const auto errors = test::run_ranks(2 * p + 1, [&](int role) {
    if (role == 2 * p) {
      if (on_thread) on_thread(static_cast<std::uint64_t>(2 * p));
      while (started.load() < 2 * p) test::yield_rank();
      mb.abort();
    } else if (role % 2 == 0) {
      receiver(role / 2);
    } else {
      sender(role / 2);
    }
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  if (returned.load() != 0) return "abort: a receive on a silent source returned";
  if (aborted.load() != 2 * p) return "abort: " + std::to_string(aborted.load()) + " of " + std::to_string(2 * p) + " threads saw Aborted";
  mb.reset();
  return all_to_all(mb, Mode::kRecv, 3, ring_bytes / 2, on_thread);
}

}  // namespace postbox::testing_support
