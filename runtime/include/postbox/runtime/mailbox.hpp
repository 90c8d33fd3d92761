// Mailboxes: the unicast service. One bounded single-producer/single-consumer byte ring per
// ordered pair (src, dst); send-and-forget semantics (Cordsen's model): send() returns as soon
// as the message is in the ring, and only waits while the ring is full (back-pressure).
//
// Requirements: at any time, at most one thread acts as rank src for sends from src, and at
// most one thread acts as rank dst for receives at dst (the Team guarantees this: one thread
// per rank). Ranks are 0..size()-1; a rank outside that range is a programming error
// (PB_CHECK, file:line).
//
// Guarantees: per-pair FIFO; every message is delivered exactly once, byte for byte; messages
// of 0 bytes (notify) up to kMaxMessageBytes; a message longer than the ring is streamed
// through it in chunks, so the receiver drains while the sender fills.
//
// Memory ordering: everything the sending thread wrote before send(src, dst, ...) is visible
// to the receiving thread after the matching recv(dst, src, ...) (or try_recv / recv_any)
// returns that message.
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

  // Every call blocked now, or blocking later, throws Aborted. Safe from any thread.
  void abort() noexcept;
  [[nodiscard]] bool aborted() const noexcept;
  // Clears the abort state and discards undelivered messages. Requires no concurrent callers.
  void reset();

 private:
  int p_;
  MailboxOptions options_;
  std::unique_ptr<internal::Inbox[]> inboxes_;  // one per destination rank
  std::atomic<bool> aborted_{false};
};

}  // namespace postbox
