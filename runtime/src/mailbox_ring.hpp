// Private layout of the mailboxes: a byte ring per ordered pair (src, dst) that talks often, a
// queue per destination for the pairs that do not (yet), and one inbox per destination. Only
// mailbox.cpp includes this; the ring's record format (ring_format.hpp) is shared with plan.cpp,
// which sizes and checks rings by it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "postbox/runtime/internal/sync.hpp"  // kCacheLine
#include "ring_format.hpp"

namespace postbox::internal {


// Single-producer/single-consumer byte ring in the rigtorp SPSCQueue layout. Indices are byte
// counts since construction (64-bit: they never wrap in practice); position = index & mask.
//
// Invariant: 0 <= write - tail <= capacity - kHeaderBytes; the producer owns
// [write, tail + capacity), the consumer owns [tail, write).
//
// Memory ordering: the producer writes a record's bytes, then stores its header (release); the
// consumer loads the header (acquire) before reading them. For later chunks of a streamed
// record the same pairing runs on head. The consumer reads bytes, then stores tail (release);
// the producer loads tail (acquire) before overwriting them. Each publication is followed by a
// look at the peer's sleeping flag (the wake-up handshake in mailbox.hpp).
struct Ring {
  // Line 0: immutable after construction, read by both sides.
  alignas(kCacheLine) void* block;  // what calloc returned (buf is its first 64-aligned byte)
  std::byte* buf = nullptr;
  std::uint64_t mask;   // capacity - 1 (capacity is a power of two)
  std::uint64_t chunk;  // most bytes copied between two publications of a streamed record (capacity / 4)
  Ring* next_made = nullptr;  // the list of every ring made (destructor, reset()); set before publication

  // Line 1: written by the producer only.
  // End of the last chunk of a streamed record, published for the consumer waiting on that
  // chunk. Not moved by records that fit one chunk (their header is their publication), so it
  // may lag tail: the consumer reads it only in the middle of a streamed record.
  alignas(kCacheLine) std::atomic<std::uint64_t> head{0};
  // Producer-private: the index after the last record written. Never read by the consumer.
  std::uint64_t write = 0;
  // Producer-private cached lower bound of tail, rounded down to its cache line; refreshed only
  // when the ring looks full.
  std::uint64_t cached_tail = 0;
  // Producer-private: every 8-byte word in [write, zeroed) is zero. The producer zeroes the
  // next line right after publishing a record that entered a new one, so the zero word that
  // must precede the next header is usually there already, and the store that brings that
  // line over from the consumer's cache is off the path between two publications.
  std::uint64_t zeroed = 0;

  // Line 2: written by the consumer only. Stored once per received message, not per chunk
  // poll; the producer loads it only when its cached copy says the ring is full.
  alignas(kCacheLine) std::atomic<std::uint64_t> tail{0};
  // Consumer-private cached lower bound of head, for streamed records. Never read by the producer.
  std::uint64_t cached_head = 0;
  // Consumer-private after publication: messages of the pair may still wait in the receiver's
  // queue, and they come first (set by the producer before it publishes the ring; cleared by
  // the consumer once its queue holds none from this source).
  bool queued_first = false;

  // Line 3: the producer's doorbell. Raised by the producer only when it is about to block on a
  // full ring; read by the consumer after every tail publication (a shared read, no transfer).
  alignas(kCacheLine) std::atomic<std::uint32_t> producer_sleeping{0};

  explicit Ring(std::size_t capacity);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  [[nodiscard]] std::uint64_t capacity() const noexcept { return mask + 1; }
  // Discards the contents. Requires no concurrent user.
  void clear() noexcept;
};

static_assert(offsetof(Ring, head) - offsetof(Ring, block) >= kCacheLine,
              "Ring: head must not share a cache line with the read-only fields");
static_assert(offsetof(Ring, tail) - offsetof(Ring, head) >= kCacheLine,
              "Ring: producer index (head) and consumer index (tail) must sit on different cache lines");
static_assert(offsetof(Ring, write) - offsetof(Ring, head) < kCacheLine &&
                  offsetof(Ring, cached_tail) - offsetof(Ring, head) < kCacheLine &&
                  offsetof(Ring, zeroed) - offsetof(Ring, head) < kCacheLine,
              "Ring: the producer's private indices must share the producer's line");
static_assert(offsetof(Ring, cached_head) - offsetof(Ring, tail) < kCacheLine,
              "Ring: the consumer's cached head must share the consumer's line");
static_assert(offsetof(Ring, producer_sleeping) - offsetof(Ring, tail) >= kCacheLine,
              "Ring: the doorbell must not share the consumer's line");
static_assert(alignof(Ring) == kCacheLine && sizeof(Ring) == 4 * kCacheLine,
              "Ring: four whole cache lines, so adjacent rings never share one");

// A message of a pair that has no ring: one heap block, pushed on the receiver's queue.
struct Queued {
  Queued* next;
  std::int32_t src;
  std::uint32_t size;  // at most Mailboxes::kMaxMessageBytes (1 GiB)
  [[nodiscard]] std::byte* payload() noexcept { return reinterpret_cast<std::byte*>(this + 1); }
};
// 16 bytes: an 8-byte message takes a 32-byte block of glibc's allocator (limits.cpp counts it).
static_assert(sizeof(Queued) == 16, "Queued: a 16-byte header, the payload 8-aligned after it");

// A pair's slot (Inbox::from[src]), written by the sender only: the address of the pair's ring
// plus 1 (rings are 64-aligned) once it has one, else its queue tag with bit 0 clear: bits 1..7
// the messages queued so far (saturating at 127), bits 8.. the record bytes queued so far (0:
// nothing sent yet). Bit 0 alone tells a ring, and the +1 folds into the displacement of every
// field access, so the fast path pays one test for the two kinds of slot.
// Plain words in a calloc'ed array (untouched pages cost no memory), accessed through
// std::atomic_ref.
using Slot = std::uintptr_t;
inline std::atomic_ref<Slot> slot_ref(Slot& s) noexcept { return std::atomic_ref<Slot>(s); }
constexpr bool is_ring(std::uintptr_t v) noexcept { return (v & 1) != 0; }
inline Ring* ring_of(std::uintptr_t v) noexcept { return reinterpret_cast<Ring*>(v - 1); }
inline std::uintptr_t ring_slot(Ring* r) noexcept { return reinterpret_cast<std::uintptr_t>(r) + 1; }
constexpr std::uint64_t tag_count(std::uintptr_t v) noexcept { return (v >> 1) & 127; }
constexpr std::uint64_t tag_bytes(std::uintptr_t v) noexcept { return v >> 8; }
constexpr std::uintptr_t make_tag(std::uint64_t count, std::uint64_t bytes) noexcept {
  return (bytes << 8) | ((count < 127 ? count : 127) << 1);
}

// The receiver's side of a pair without a ring (Inbox::queued[src]).
// Plain fields in a calloc'ed array, like the slots; `taken` is accessed through std::atomic_ref.
struct QueuedPair {
  // Record bytes of this pair's queued messages delivered (or discarded by reset()); stored by
  // the receiver, loaded by the sender when its queued bytes look over the ring capacity.
  std::uint64_t taken;
  // Receiver-private: the last of this source's messages taken off the queue and not yet
  // delivered, in a circular list (last->next is the first); null when none.
  Queued* last;
};

// Per destination rank.
struct Inbox {
  // Line 0: read by every sender to this rank on every send and by the receiver on every
  // receive; written only when a ring from a new source is created or a message is queued.
  // p slots, one per source (Slot above); a cache-line-aligned array of its own, so the slots
  // never share a line with anything written on a fast path.
  alignas(kCacheLine) Slot* from = nullptr;

  // Line 1: the receiver's doorbell and the futex words, touched by the receiver on the slow
  // path only. Senders look at receiver_sleeping after every publication: a plain load under
  // membarrier, a read-modify-write in the portable handshake, which takes the line; apart from
  // line 0, which the receiver reads on every receive, that costs no transfer per message.
  alignas(kCacheLine) std::atomic<std::uint32_t> receiver_sleeping{0};
  // Incremented to wake this rank blocked as a receiver (recv, recv_any).
  std::atomic<std::uint32_t> recv_word{0};
  // Incremented to wake this rank blocked as a sender on a full ring or a full queued pair.
  std::atomic<std::uint32_t> space_word{0};
  // Raised by this rank as a sender about to block for room on a queued pair; read by that
  // pair's receiver after each delivery from it.
  std::atomic<std::uint32_t> queued_sender_sleeping{0};

  // Line 2: the queue of messages from pairs without a ring: a stack pushed by every such
  // sender (compare-exchange), taken whole by the receiver (exchange), newest first.
  alignas(kCacheLine) std::atomic<Queued*> queue{nullptr};

  // Line 3: private to the receiving thread.
  alignas(kCacheLine) int next_any = 0;  // round-robin cursor of recv_any
  std::uint64_t pending = 0;             // messages taken off `queue` and not yet delivered
  QueuedPair* queued = nullptr;          // p entries, one per source
};

static_assert(offsetof(Inbox, receiver_sleeping) - offsetof(Inbox, from) >= kCacheLine,
              "Inbox: the doorbell (a read-modify-write per send in the portable handshake) must not share "
              "the line the receiver reads on every receive");
static_assert(offsetof(Inbox, recv_word) - offsetof(Inbox, from) >= kCacheLine,
              "Inbox: futex words must not share the line every sender reads");
static_assert(offsetof(Inbox, queue) - offsetof(Inbox, receiver_sleeping) >= kCacheLine &&
                  offsetof(Inbox, next_any) - offsetof(Inbox, queue) >= kCacheLine,
              "Inbox: the queue (a compare-exchange per queued send) shares no line with the futex words or "
              "the receiver's private fields");
static_assert(sizeof(Inbox) == 4 * kCacheLine, "Inbox: four lines (limits.cpp counts them)");
static_assert(alignof(Inbox) == kCacheLine, "Inbox: adjacent inboxes must not share a line");

}  // namespace postbox::internal
