// Mailboxes: the unicast service. A bounded single-producer/single-consumer byte ring per
// ordered pair (src, dst) that talks often, and one queue per receiver for the pairs that do
// not (yet); send-and-forget semantics (Cordsen's model): send() returns as soon as the
// message is in the ring or the queue, and only waits while the pair is full (back-pressure).
//
// Requirements: one thread per rank. At any time, at most one thread acts as rank src for
// sends from src, and at most one thread acts as rank dst for receives at dst (the Team
// guarantees this: one thread per rank; a rank's sending and receiving may also be split over
// two threads, one per role). Handing a role to another thread needs a happens-before edge
// (joining, a barrier). A rank that is a fiber (Team with RanksMode::fibers) counts as a
// thread here: its waits switch to its worker's other ranks (wait.hpp, docs/fibers.md). Ranks are 0..size()-1; a rank outside that range is a programming
// error (PB_CHECK, file:line). A rank may send to itself; its messages to itself are sent and
// received by one thread, so a call that could only complete with another thread's help fails
// fast (PB_CHECK) instead of hanging: a self-send that does not fit the free space of the
// rank's ring (or queued pair) to itself (nobody else would drain it), and a blocking receive
// from itself (recv(r, r), or recv_any on a one-rank mailbox) with nothing pending (nobody
// else can send it).
//
// Guarantees: per-pair FIFO, also across the pair's move from the queue to its ring; every
// message is delivered exactly once, byte for byte; messages of 0 bytes (notify) up to
// kMaxMessageBytes; a message longer than a quarter ring is streamed through it in chunks of a
// quarter ring, so the receiver drains while the sender fills.
// send() waits only while the ring to dst lacks room for its next chunk, counting the
// receiver's progress in whole cache lines (the sender never writes into the line the receiver
// is reading, so a ring holds up to one line less than its capacity while the receiver is
// mid-line); recv() waits only while nothing (more) has arrived; the receiver is never needed
// to complete a send that fits.
// Memory grows with the pairs that talk, not with p^2 (docs/mailboxes.md, "Memory"): a pair's
// first options().queued_messages messages go through the receiver's queue (one heap block
// each); the message after them, or the first one longer than a quarter ring, makes the pair's
// ring, while the rings made so far hold at most options().ring_budget_bytes (ring_bytes_held());
// past that the pair stays on the queue. A queued pair holds at most the ring capacity of
// undelivered record bytes (8-byte header plus payload rounded up to 8), plus the 8-byte end
// mark, as a ring does; send() on it waits only while the next record would exceed that, and a
// record larger than the capacity is queued once nothing of the pair is undelivered. The
// per-source slots (8 bytes) and queued-pair entries (16 bytes) of all p^2 pairs are reserved
// up front but take memory only for the pages the talking pairs touch.
// Waiting goes through wait_until() with options().wait: spin, then yield, then block on a
// futex word. While the waiter spins or yields its peer pays nothing extra; just before
// blocking (wait_until's before_block step), the waiter raises a "sleeping" flag (one per
// receiving rank, one per ring for the sender), and a peer that sees it raised after
// publishing wakes the waiter's word.
//
// Memory ordering: everything the sending thread wrote before send(src, dst, ...) is visible
// to the receiving thread after the matching recv(dst, src, ...) (or try_recv / recv_any)
// returns that message (the producer's release store of the record's header word, or of head
// for later chunks of a streamed message; the consumer's acquire load of the same; see
// runtime/src/mailbox_ring.hpp for the framing). Everything the receiving thread read from a
// message happens before the sender overwrites those ring bytes (release store of tail,
// acquire load by the producer). A queued message is published by the release compare-exchange
// that pushes it on the receiver's queue, taken by the receiver's acquire exchange.
// Making a ring (the pair's sender, on a send): the sender fills the ring, then stores its
// pointer in the pair's slot with release; every receiver path loads the slot with acquire
// before it touches the ring, so it sees the ring constructed. A ring made while messages of
// the pair may still sit in the queue is marked queued_first (before the release store). The
// receiver, finding the ring so marked, takes the whole queue (an exchange after its acquire
// load of the slot: the pushes precede the slot store in the sender's program order, so by
// coherence the exchange finds every one it has not taken yet) and delivers this source's
// queued messages first; once none is left it clears the mark (its private field from then
// on). The slot store is itself a publication for the wake-up handshake below (a blocked
// receiver's ready check reads the slot), and the first record's header follows it in program
// order. recv_any and try_recv_any go through the same per-source path, so they deliver in the
// same order; abort() touches no slot; reset() and the destructor require no concurrent caller
// and reach the rings through a list filled before each publication.
// The lost-wakeup race (a peer publishes while the waiter decides to block) is a Dekker
// handshake: the publisher stores its header (or index) then looks at the waiter's flag; the
// waiter raises the flag then looks at the header; at least one sees the other's store. Where
// Linux offers membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), the handshake is asymmetric: the
// publisher's side is a compiler barrier and a plain load (no fence on the fast path), and the
// waiter, about to block, calls membarrier(), a full fence in every running thread of the
// process. Elsewhere both sides use a seq_cst read-modify-write of the flag. abort() needs no
// flag: every blocking wait re-checks aborted() after loading its futex word, and abort()
// bumps every word.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "postbox/runtime/internal/sync.hpp"
#include "postbox/runtime/wait.hpp"

namespace postbox {

// Thrown from a blocking mailbox call once abort() was called (a rank of the team failed).
class Aborted : public std::runtime_error {
 public:
  Aborted() : std::runtime_error("postbox: team aborted: another rank failed") {}
};

// MailboxOptions::ring_budget_bytes by default: 256 MiB, every pair of a 64-rank team with the
// default 64 KiB rings.
inline constexpr std::size_t kDefaultRingBudgetBytes = std::size_t{256} << 20;

struct MailboxOptions {
  // Capacity of each pair's ring in bytes (rounded up to a power of two, at least 4 KiB).
  std::size_t ring_bytes = 64 * 1024;
  // How blocking calls wait; defaults to the process default (POSTBOX_SPIN_NS, ...).
  WaitPolicy wait = default_wait_policy();
  // Use membarrier(2) for the wake-up handshake where Linux offers it (no fence on the fast
  // path). false forces the portable handshake (a seq_cst read-modify-write per publication),
  // which a Team chooses when its ranks outnumber the CPUs (each membarrier() on a block
  // interrupts every CPU running a thread of the process; docs/mailboxes.md measures both);
  // tests use it to cover that path on machines that have membarrier.
  bool use_membarrier = true;
  // Messages a pair sends through the receiver's queue before its ring is made, 0 to 127 (0: a
  // ring on the first message, as a pair that streams gets at once). Rings pay for pairs that talk often:
  // one cache line per small message instead of a heap block and a compare-exchange on a line
  // every sender to the receiver shares.
  int queued_messages = 2;
  // Most bytes all rings together may hold (capacity plus four lines each); pairs past it stay
  // on the queue.
  std::size_t ring_budget_bytes = kDefaultRingBudgetBytes;
};

namespace internal {
struct Ring;
struct Inbox;
struct Queued;
}  // namespace internal

class alignas(internal::kCacheLine) Mailboxes {
 public:
  static constexpr std::size_t kMaxMessageBytes = std::size_t{1} << 30;

  // p < 1, ring_bytes above 1 GiB, a negative queued_messages or wait budget: InputError.
  explicit Mailboxes(int p, MailboxOptions options = MailboxOptions{});
  ~Mailboxes();
  Mailboxes(const Mailboxes&) = delete;
  Mailboxes& operator=(const Mailboxes&) = delete;

  [[nodiscard]] int size() const noexcept { return p_; }
  [[nodiscard]] const MailboxOptions& options() const noexcept { return options_; }
  // Bytes the rings made so far hold (capacity plus four cache lines each). Safe from any thread.
  [[nodiscard]] std::uint64_t ring_bytes_held() const noexcept;

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
  // Fails fast (PB_CHECK) when rank is outside 0..size()-1; called only off the fast path.
  [[gnu::cold]] void check_rank(int rank, const char* what) const;
  // Producer side, a pair with a ring: the fast path.
  void send_ring(internal::Ring& r, int src, int dst, std::span<const std::byte> message);
  // Producer side, a pair without a ring (slot value v): makes its ring when due and the budget
  // allows, else queues the message.
  void send_unringed(int src, int dst, std::span<const std::byte> message, std::uintptr_t v);
  // Makes and publishes the pair's ring; nullptr when it would exceed ring_budget_bytes.
  internal::Ring* make_ring(int src, int dst, std::uintptr_t v);
  void send_queued(int src, int dst, std::span<const std::byte> message, std::uintptr_t v);
  // Consumer side: the pair's ring (acquire), or nullptr while it has none.
  internal::Ring* ring_from(int dst, int src) const noexcept;
  // Producer side: waits until [h, h + len) plus the end mark fits the ring (refreshes the cache).
  // n: the message's size, for the self-send failure.
  void await_room(internal::Ring& r, int src, int dst, std::uint64_t h, std::uint64_t len, std::uint64_t n);
  // The calls that can never complete (see Requirements): fail fast with what happened.
  [[noreturn, gnu::cold]] static void fail_self_send(std::uint64_t capacity, std::uint64_t undelivered, int rank,
                                                     std::uint64_t n);
  [[noreturn, gnu::cold]] static void fail_self_recv(int rank, const char* what);
  // Producer side: zeroes ahead of end, up to the end of the next cache line (ring.hpp: zeroed).
  static void zero_ahead(internal::Ring& r, std::uint64_t end) noexcept;
  // Producer side: a record longer than one chunk, streamed through the ring.
  void send_streamed(internal::Ring& r, int src, int dst, std::span<const std::byte> message);
  // Consumer side: the header word at tail (acquire); zero when nothing has arrived.
  static std::uint64_t header_at_tail(const internal::Ring& r) noexcept;
  // Consumer side: where the next message from src is: the first of its queued messages, or
  // the ring with the header at its tail; all null when none has arrived and !block. Blocks
  // until one has arrived otherwise.
  struct Next {
    internal::Queued* queued;
    internal::Ring* ring;
    std::uint64_t header;
  };
  Next next_from(int dst, int src, bool block);
  // Consumer side: moves every message on dst's queue to its source's list, oldest first.
  static void take_queue(internal::Inbox& box) noexcept;
  // Consumer side: delivers the first queued message from src (next_from() returned it) into out.
  void take_queued(int dst, int src, std::byte* out);
  // Consumer side: receives the message of size n whose header is readable, into out.
  void take(internal::Ring& r, int dst, int src, std::uint64_t n, std::byte* out);
  void take_streamed(internal::Ring& r, int dst, int src, std::uint64_t n, std::byte* out);
  // Fails fast (PB_CHECK) when a message of n bytes does not fit a receive buffer of room bytes.
  [[gnu::cold]] static void fail_too_small(int src, std::uint64_t n, std::size_t room);
  // Waits until ready() (or abort): spins and yields with `sleeping` down, then raises it and
  // blocks on `word`. Throws Aborted.
  template <class Ready>
  void await(std::atomic<std::uint32_t>& sleeping, std::atomic<std::uint32_t>& word, Ready&& ready);
  [[noreturn]] static void throw_aborted();
  // Publisher's half of the wake-up handshake, called right after the publishing store:
  // whether the peer raised `flag` (a compiler barrier and a plain load under membarrier, a
  // seq_cst read-modify-write of the flag elsewhere).
  [[nodiscard]] bool peer_sleeping(std::atomic<std::uint32_t>& flag) const noexcept;
  // Waiter's half: raises the flag (then membarrier(2) where available).
  void raise(std::atomic<std::uint32_t>& sleeping) const;
  // Frees every ring and every undelivered queued message (reset() and the destructor).
  void discard_queued() noexcept;

  // One cache line of fields read on every call and written only by the constructor, abort()
  // and reset() (the class is cache-line aligned, so nothing else shares the line).
  int p_;
  // True when membarrier(2) is available and options().use_membarrier: publications then cost
  // no fence (see above).
  bool asymmetric_;
  // Read on every call, written by abort() and reset() only.
  std::atomic<bool> aborted_{false};
  MailboxOptions options_;
  std::size_t ring_capacity_;
  std::unique_ptr<internal::Inbox[]> inboxes_;  // one per destination rank

  // A second line, written only when a ring is made.
  alignas(internal::kCacheLine) std::atomic<std::uint64_t> ring_bytes_held_{0};
  std::atomic<internal::Ring*> made_{nullptr};  // every ring made, through Ring::next_made
  // The calloc'ed blocks behind every Inbox::from and Inbox::queued array.
  void* slots_block_ = nullptr;
  void* queued_block_ = nullptr;
};

}  // namespace postbox
