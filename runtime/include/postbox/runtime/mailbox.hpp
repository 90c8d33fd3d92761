// Mailboxes: the unicast service. One bounded single-producer/single-consumer byte ring per
// ordered pair (src, dst); send-and-forget semantics (Cordsen's model): send() returns as soon
// as the message is in the ring, and only waits while the ring is full (back-pressure).
//
// Requirements: one thread per rank. At any time, at most one thread acts as rank src for
// sends from src, and at most one thread acts as rank dst for receives at dst (the Team
// guarantees this: one thread per rank; a rank's sending and receiving may also be split over
// two threads, one per role). Handing a role to another thread needs a happens-before edge
// (joining, a barrier). Ranks are 0..size()-1; a rank outside that range is a programming
// error (PB_CHECK, file:line). A rank may send to itself, but a self-send must fit in the free
// space of the ring: nobody else will drain it.
//
// Guarantees: per-pair FIFO; every message is delivered exactly once, byte for byte; messages
// of 0 bytes (notify) up to kMaxMessageBytes; a message longer than the ring is streamed
// through it in chunks of a quarter ring, so the receiver drains while the sender fills.
// send() waits only while the ring to dst lacks room for its next chunk, and recv() only while
// nothing (more) has arrived; the receiver is never needed to complete a send that fits.
// Rings are created on a pair's first send (p = 64 would otherwise mean 4096 rings up front).
//
// Waiting goes through wait_until() with options().wait: spin, then yield, then block on a
// futex word. While the waiter spins or yields its peer pays nothing extra; just before
// blocking, the waiter raises a "sleeping" flag (one per receiving rank, one per ring for the
// sender), and a peer that sees it raised after publishing wakes the waiter's word.
//
// Memory ordering: everything the sending thread wrote before send(src, dst, ...) is visible
// to the receiving thread after the matching recv(dst, src, ...) (or try_recv / recv_any)
// returns that message (the producer's release store of the record's header word, or of its
// ring index for later chunks of a streamed message; the consumer's acquire load of the same;
// see runtime/src/mailbox_ring.hpp for the framing). Everything the receiving thread read from a message happens before the sender
// overwrites those ring bytes (the same pairing on the consumer's index).
// The lost-wakeup race (a peer publishes while the waiter decides to block) is a Dekker
// handshake: the publisher stores its index then loads the waiter's flag; the waiter stores the
// flag then loads the index; at least one must see the other's store. Where Linux offers
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), the handshake is asymmetric: the publisher's
// side is a compiler barrier only (no fence on the fast path), and the waiter, about to block,
// calls membarrier(), which acts as a full fence in every running thread of the process.
// Elsewhere both sides use seq_cst (a full fence per publication). abort() needs no flag:
// every blocking wait re-checks aborted() after loading its futex word, and abort() bumps
// every word.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "postbox/runtime/wait.hpp"

namespace postbox {

// Thrown from a blocking mailbox call once abort() was called (a rank of the team failed).
class Aborted : public std::runtime_error {
 public:
  Aborted() : std::runtime_error("postbox: team aborted: another rank failed") {}
};

struct MailboxOptions {
  // Capacity of each pair's ring in bytes (rounded up to a power of two, at least 4 KiB).
  std::size_t ring_bytes = 64 * 1024;
  // How blocking calls wait; defaults to the process default (POSTBOX_SPIN_NS, ...).
  WaitPolicy wait = default_wait_policy();
};

namespace internal {
class Ring;
struct Inbox;
}  // namespace internal

class Mailboxes {
 public:
  static constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 30;

  // p < 1, ring_bytes above 1 GiB or a negative wait budget: InputError.
  explicit Mailboxes(int p, MailboxOptions options = MailboxOptions{});
  ~Mailboxes();
  Mailboxes(const Mailboxes&) = delete;
  Mailboxes& operator=(const Mailboxes&) = delete;

  [[nodiscard]] int size() const noexcept { return p_; }
  [[nodiscard]] const MailboxOptions& options() const noexcept { return options_; }

  // Send-and-forget. Waits (spin, yield, block) only while the ring to dst is full.
  void send(int src, int dst, std::span<const std::byte> message);
  // A zero-byte message.
  void notify(int src, int dst) { send(src, dst, {}); }

  // Blocking receive of the next message from src into out; returns its size.
  // out must be large enough (PB_CHECK otherwise: a plan's sizes disagree).
  std::size_t recv(int dst, int src, std::span<std::byte> out);
  // Blocking receive of the next message from src, whatever its size.
  std::vector<std::byte> recv(int dst, int src);
  // Non-blocking: false when no message from src has started to arrive. Once a message has
  // started, it is received in full (its sender is mid-copy and will finish).
  [[nodiscard]] bool try_recv(int dst, int src, std::span<std::byte> out, std::size_t& size);
  // Blocking receive from any source; returns the source. Fair: sources are scanned round-robin.
  int recv_any(int dst, std::span<std::byte> out, std::size_t& size);
  // Non-blocking receive from any source; returns the source, or -1 when nothing is pending.
  [[nodiscard]] int try_recv_any(int dst, std::span<std::byte> out, std::size_t& size);

  // Every call blocked now, or called later (send and every receive), throws Aborted, until
  // reset(). Safe from any thread.
  void abort() noexcept;
  [[nodiscard]] bool aborted() const noexcept;
  // Clears the abort state and discards undelivered messages. Requires no concurrent callers.
  void reset();

 private:
  void check_rank(int rank, const char* what) const;
  internal::Ring& ring_to(int src, int dst);
  internal::Ring* ring_from(int dst, int src) const noexcept;
  // Consumer side: true when a message header from ring r is readable (refreshes the cache).
  static bool header_ready(internal::Ring& r) noexcept;
  // Consumer side: blocks until a header is readable on the pair (src, dst); returns its size.
  std::uint64_t await_header(int dst, int src, internal::Ring*& r);
  // Consumer side: receives the message of size n whose header is readable, into out.
  void consume(internal::Ring& r, int dst, int src, std::uint64_t n, std::byte* out);
  // Waits until ready (or abort): spin and yield with `sleeping` down, then raise it and block
  // on `word`. Throws Aborted.
  // fast() is polled while spinning and yielding; sure() (which must load with seq_cst) decides
  // whether to block.
  template <class Fast, class Sure>
  void await(std::atomic<std::uint32_t>& sleeping, std::atomic<std::uint32_t>& word, Fast&& fast, Sure&& sure);
  [[noreturn]] static void throw_aborted();
  // Fast half of the wake-up handshake: stores index = value (release), then reports whether the
  // peer raised its sleeping flag.
  bool publish(std::atomic<std::uint64_t>& index, std::uint64_t value,
               const std::atomic<std::uint32_t>& peer_sleeping) const noexcept;
  // Slow half: raises the flag and fences (membarrier(2) where available).
  void raise(std::atomic<std::uint32_t>& sleeping) const;

  int p_;
  MailboxOptions options_;
  std::size_t ring_capacity_;
  // True when membarrier(2) is available: index publications then cost no fence (see above).
  bool asymmetric_;
  std::unique_ptr<internal::Inbox[]> inboxes_;  // one per destination rank
  // Read on every call, written by abort() and reset() only.
  std::atomic<bool> aborted_{false};
};

}  // namespace postbox
