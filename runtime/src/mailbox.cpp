#include "postbox/runtime/mailbox.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "mailbox_ring.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/internal/inject.hpp"

namespace postbox {

using internal::Inbox;
using internal::is_ring;
using internal::kCacheLine;
using internal::Queued;
using internal::QueuedPair;
using internal::slot_ref;
using internal::kHeaderBytes;
using internal::kHeaderValid;
using internal::record_bytes;
using internal::Ring;

namespace internal {

Ring::Ring(std::size_t capacity)
    // calloc, not new and memset: fresh memory comes zero without being written, so a ring
    // costs resident memory only for the pages its messages reach (docs/mailboxes.md, "Memory").
    : block(std::calloc(capacity + kCacheLine, 1)),
      mask(capacity - 1),
      chunk(capacity / 4) {
  if (block == nullptr) throw std::bad_alloc();
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  buf = static_cast<std::byte*>(block) + ((kCacheLine - at % kCacheLine) % kCacheLine);
  zeroed = capacity;  // every header slot of the first lap reads "not yet"
}

Ring::~Ring() { std::free(block); }

void Ring::clear() noexcept {
  head.store(0, std::memory_order_relaxed);
  write = 0;
  zeroed = kHeaderBytes;
  tail.store(0, std::memory_order_relaxed);
  cached_tail = 0;
  cached_head = 0;
  producer_sleeping.store(0, std::memory_order_relaxed);
  queued_first = false;  // reset() discards the queued messages too
  std::memset(buf, 0, kHeaderBytes);
}

}  // namespace internal

namespace {

constexpr std::size_t kMinRingBytes = 4096;
// How far ahead of tail the consumer prefetches: 8 lines, well inside the smallest ring.
constexpr std::uint64_t kPrefetchAhead = 8 * kCacheLine;
constexpr std::size_t kMaxRingBytes = std::size_t{1} << 30;
// The slot's tag counts queued messages in 7 bits (mailbox_ring.hpp).
constexpr int kMaxQueuedMessages = 127;
// Registers this process for membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) once; false where the
// kernel (or a seccomp filter) does not offer it.
bool membarrier_ready() {
  static const bool ok = [] {
    const long cmds = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }();
  return ok;
}

[[gnu::always_inline]] inline std::atomic_ref<std::uint64_t> header_word(Ring& r, std::uint64_t index) noexcept {
  // 8-aligned, so a header never wraps; the buffer is 64-aligned.
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(r.buf + (index & r.mask)));
}

// The producer counts tail down to its cache line: it never writes into the line the consumer
// is still reading. With a full ring it would otherwise write each freed slot right behind the
// consumer, in the line the consumer reads next, and that line would move between the cores
// once per message.
constexpr std::uint64_t line_floor(std::uint64_t index) noexcept { return index & ~std::uint64_t{kCacheLine - 1}; }

// memcpy for the sizes a small message has, without a library call for the common ones:
// two overlapping fixed-size moves cover 4..16 bytes.
[[gnu::always_inline]] inline void copy_bytes(std::byte* dst, const std::byte* src, std::uint64_t n) noexcept {
  if (n >= 8 && n <= 16) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    std::memcpy(dst, src, n);
  }
}

[[gnu::always_inline]] inline void copy_in(Ring& r, std::uint64_t index, const std::byte* src,
                                           std::uint64_t n) noexcept {
  const std::uint64_t off = index & r.mask;
  if (off + n <= r.capacity()) [[likely]] {
    copy_bytes(r.buf + off, src, n);
    return;
  }
  const std::uint64_t first = r.capacity() - off;
  std::memcpy(r.buf + off, src, first);
  std::memcpy(r.buf, src + first, n - first);
}

[[gnu::always_inline]] inline void copy_out(const Ring& r, std::uint64_t index, std::byte* dst,
                                            std::uint64_t n) noexcept {
  const std::uint64_t off = index & r.mask;
  if (off + n <= r.capacity()) [[likely]] {
    copy_bytes(dst, r.buf + off, n);
    return;
  }
  const std::uint64_t first = r.capacity() - off;
  std::memcpy(dst, r.buf + off, first);
  std::memcpy(dst + first, r.buf, n - first);
}

// Copies the part of record bytes [pos, pos + len) that is payload; the header and padding
// are handled by the caller.
struct PayloadSlice {
  std::uint64_t record_off;  // offset inside the record
  std::uint64_t payload_off;
  std::uint64_t n;
};
PayloadSlice payload_slice(std::uint64_t pos, std::uint64_t len, std::uint64_t payload) noexcept {
  const std::uint64_t lo = std::max(pos, kHeaderBytes);
  const std::uint64_t hi = std::min(pos + len, kHeaderBytes + payload);
  if (hi <= lo) return {0, 0, 0};
  return {lo - pos, lo - kHeaderBytes, hi - lo};
}

// Bytes of one inbox's array of p entries of `entry` bytes, rounded up to whole cache lines.
std::size_t array_bytes(int p, std::size_t entry) noexcept {
  const std::size_t raw = static_cast<std::size_t>(p) * entry;
  return (raw + kCacheLine - 1) / kCacheLine * kCacheLine;
}

// p arrays of `stride` bytes, cache-line aligned, zero. calloc: for large blocks glibc maps
// fresh zero pages without writing them, so a page costs memory only once a pair touches it.
// Returns the block (for free()) and sets `first` to the aligned first array.
void* zero_arrays(int p, std::size_t stride, std::byte*& first) {
  void* block = std::calloc(static_cast<std::size_t>(p) * stride + kCacheLine, 1);
  if (block == nullptr) throw std::bad_alloc();
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  first = static_cast<std::byte*>(block) + ((kCacheLine - at % kCacheLine) % kCacheLine);
  return block;
}

[[gnu::always_inline]] inline Ring* as_ring(std::uintptr_t v) noexcept {
  return is_ring(v) ? internal::ring_of(v) : nullptr;
}

}  // namespace

Mailboxes::Mailboxes(int p, MailboxOptions options)
    : p_(p),
      asymmetric_(options.use_membarrier && membarrier_ready()),
      options_(options),
      ring_capacity_(kMinRingBytes) {
  static_assert(alignof(Mailboxes) == kCacheLine && sizeof(Mailboxes) == 2 * kCacheLine &&
                    offsetof(Mailboxes, ring_bytes_held_) == kCacheLine,
                "Mailboxes: the fields every call reads fill one cache line of their own; what making a ring "
                "writes sits on the second");
  if (p < 1) throw InputError("mailboxes need at least 1 rank, got p = " + std::to_string(p));
  if (options_.ring_bytes > kMaxRingBytes) {
    throw InputError("mailbox ring_bytes must be at most 1 GiB, got " + std::to_string(options_.ring_bytes));
  }
  if (options_.queued_messages < 0 || options_.queued_messages > kMaxQueuedMessages) {
    throw InputError("mailbox queued_messages must be 0 to " + std::to_string(kMaxQueuedMessages) + ", got " +
                     std::to_string(options_.queued_messages));
  }
  if (options_.wait.spin_ns < 0 || options_.wait.yield_ns < 0) {
    throw InputError("mailbox wait budgets must be non-negative");
  }
  while (ring_capacity_ < options_.ring_bytes) ring_capacity_ *= 2;
  inboxes_ = std::make_unique<Inbox[]>(static_cast<std::size_t>(p));
  const std::size_t slots_stride = array_bytes(p, sizeof(internal::Slot));
  const std::size_t queued_stride = array_bytes(p, sizeof(QueuedPair));
  std::byte* slots = nullptr;
  std::byte* queued = nullptr;
  slots_block_ = zero_arrays(p, slots_stride, slots);
  try {
    queued_block_ = zero_arrays(p, queued_stride, queued);
  } catch (...) {
    std::free(slots_block_);
    throw;
  }
  for (int d = 0; d < p; ++d) {
    // Zero words are a slot's "nothing sent" and a queued pair's empty state (calloc creates
    // the arrays' objects: both are implicit-lifetime types).
    inboxes_[d].from = reinterpret_cast<internal::Slot*>(slots + static_cast<std::size_t>(d) * slots_stride);
    inboxes_[d].queued = reinterpret_cast<QueuedPair*>(queued + static_cast<std::size_t>(d) * queued_stride);
  }
}

Mailboxes::~Mailboxes() {
  discard_queued();
  // relaxed: no concurrent caller (the destructor's requirement); the rings' next_made links
  // were written before the threads that made them were joined.
  for (Ring* r = made_.load(std::memory_order_relaxed); r != nullptr;) {
    Ring* next = r->next_made;
    delete r;
    r = next;
  }
  std::free(slots_block_);
  std::free(queued_block_);
}

std::uint64_t Mailboxes::ring_bytes_held() const noexcept {
  // relaxed: a count, ordered with nothing else.
  return ring_bytes_held_.load(std::memory_order_relaxed);
}

void Mailboxes::check_rank(int rank, const char* what) const {
  PB_CHECK(rank >= 0 && rank < p_, std::string("mailbox ") + what + " rank " + std::to_string(rank) +
                                       " is outside 0.." + std::to_string(p_ - 1));
}

void Mailboxes::throw_aborted() { throw Aborted(); }

void Mailboxes::send_unringed(int src, int dst, std::span<const std::byte> message, std::uintptr_t v) {
  // Due: the pair has sent its queued_messages, or this record would be streamed through a ring.
  const bool due = internal::tag_count(v) >= static_cast<std::uint64_t>(options_.queued_messages) ||
                   record_bytes(message.size()) > ring_capacity_ / 4;
  if (due) {
    if (Ring* r = make_ring(src, dst, v)) {
      send_ring(*r, src, dst, message);
      return;
    }
  }
  send_queued(src, dst, message, v);
}

Ring* Mailboxes::make_ring(int src, int dst, std::uintptr_t v) {
  const std::uint64_t need = ring_capacity_ + sizeof(Ring);
  const std::uint64_t budget = options_.ring_budget_bytes;
  // relaxed: a count; each ring is published by its slot's release store below. A look first,
  // so that pairs past the budget do not write the shared line on every send.
  if (need > budget || ring_bytes_held_.load(std::memory_order_relaxed) > budget - need) return nullptr;
  if (ring_bytes_held_.fetch_add(need, std::memory_order_relaxed) > budget - need) {
    ring_bytes_held_.fetch_sub(need, std::memory_order_relaxed);  // relaxed: as above
    return nullptr;
  }
  auto* r = new Ring(ring_capacity_);
  // relaxed: any value up to the true count is safe; a low one only sends the receiver to look
  // at its queue once. Every queued message delivered: the ring is first in line at once.
  const std::uint64_t taken =
      std::atomic_ref<std::uint64_t>(inboxes_[dst].queued[src].taken).load(std::memory_order_relaxed);
  r->queued_first = internal::tag_bytes(v) != taken;
  // relaxed: the list is read only by reset() and the destructor, which need no concurrent
  // caller (their caller's join or barrier orders this before them).
  Ring* head = made_.load(std::memory_order_relaxed);
  do {
    r->next_made = head;
  } while (!made_.compare_exchange_weak(head, r, std::memory_order_relaxed, std::memory_order_relaxed));
  internal::sync_point();
  // release: the receiver's acquire load of the slot sees a constructed ring and queued_first.
  // Program order puts the pair's queued pushes before it (so the receiver's take of the queue
  // after that load finds them) and the record's header and the wake-up handshake after it, so
  // a receiver that raised its flag and found no ring is woken (see mailbox.hpp).
  slot_ref(inboxes_[dst].from[src]).store(internal::ring_slot(r), std::memory_order_release);
  return r;
}

void Mailboxes::send_queued(int src, int dst, std::span<const std::byte> message, std::uintptr_t v) {
  Inbox& box = inboxes_[dst];
  std::atomic_ref<std::uint64_t> taken(box.queued[src].taken);
  const std::uint64_t n = message.size();
  const std::uint64_t total = record_bytes(n);
  const std::uint64_t sent = internal::tag_bytes(v);
  const std::uint64_t cap = ring_capacity_;
  // As a ring holds: undelivered records, this one and the end mark within the capacity; a
  // larger record goes alone.
  const auto room = [&] {
    internal::sync_point();
    // acquire: pairs with the receiver's release store; the messages it counts were delivered.
    const std::uint64_t undelivered = sent - taken.load(std::memory_order_acquire);
    return undelivered == 0 || undelivered + total + kHeaderBytes <= cap;
  };
  if (!room()) [[unlikely]] {
    // relaxed: this thread is the pair's receiver too (self-messages have one thread).
    if (src == dst) fail_self_send(cap, sent - taken.load(std::memory_order_relaxed), src, n);
    await(inboxes_[src].queued_sender_sleeping, inboxes_[src].space_word, room);
  }
  auto* m = static_cast<Queued*>(::operator new(sizeof(Queued) + n));
  m->src = src;
  m->size = static_cast<std::uint32_t>(n);  // n <= kMaxMessageBytes (checked in send())
  if (n != 0) std::memcpy(m->payload(), message.data(), n);
  // relaxed: the compare-exchange below publishes.
  Queued* head = box.queue.load(std::memory_order_relaxed);
  internal::sync_point();
  do {
    m->next = head;
    // release: the node's fields and payload before the receiver's acquire exchange takes it.
  } while (!box.queue.compare_exchange_weak(head, m, std::memory_order_release, std::memory_order_relaxed));
  // relaxed: only this thread reads the tag back; the receiver only tells it from a ring.
  slot_ref(box.from[src]).store(internal::make_tag(internal::tag_count(v) + 1, sent + total), std::memory_order_relaxed);
  if (peer_sleeping(box.receiver_sleeping)) [[unlikely]] wake(box.recv_word);
}

[[gnu::always_inline]] inline Ring* Mailboxes::ring_from(int dst, int src) const noexcept {
  internal::sync_point();
  // acquire: pairs with the slot's release store in make_ring().
  return as_ring(slot_ref(inboxes_[dst].from[src]).load(std::memory_order_acquire));
}

[[gnu::always_inline]] inline bool Mailboxes::peer_sleeping(std::atomic<std::uint32_t>& flag) const noexcept {
  internal::sync_point();
  if (asymmetric_) [[likely]] {
    // The compiler barrier keeps the flag load after the publishing store in program order;
    // the waiter's membarrier() makes that order hold in hardware.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    // relaxed: ordered by the barrier above and the waiter's membarrier().
    return flag.load(std::memory_order_relaxed) != 0;
  }
  // seq_cst read-modify-write: either it comes after the waiter's exchange in the flag's
  // modification order and reads 1, or the waiter's exchange reads this write and so
  // synchronizes with it, and the waiter's next loads see the publication.
  return flag.fetch_or(0, std::memory_order_seq_cst) != 0;
}

void Mailboxes::raise(std::atomic<std::uint32_t>& sleeping) const {
  internal::sync_point();
  if (asymmetric_) {
    // relaxed: membarrier() below is a full fence in every running thread of the process,
    // peers included, between this store and the waiter's next loads.
    sleeping.store(1, std::memory_order_relaxed);
    internal::sync_point();
    PB_CHECK(::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0, "membarrier failed");
    return;
  }
  // seq_cst: the waiter's half of the symmetric handshake (see peer_sleeping()).
  (void)sleeping.exchange(1, std::memory_order_seq_cst);
}

bool Mailboxes::aborted() const noexcept { return aborted_.load(std::memory_order_acquire); }

template <class Ready>
void Mailboxes::await(std::atomic<std::uint32_t>& sleeping, std::atomic<std::uint32_t>& word, Ready&& ready) {
  // acquire on aborted_: whatever the aborting thread wrote before abort() is visible to the
  // catch handler.
  const auto done = [&] { return ready() || aborted_.load(std::memory_order_acquire); };
  bool raised = false;
  // Spin and yield with the flag down (the peer's fast path pays nothing); raise it only just
  // before blocking. ready() after the raise sees every publication the peer made before it
  // looked at the flag (the Dekker handshake in mailbox.hpp).
  (void)wait_until(options_.wait, word, done, [&] {
    raise(sleeping);
    raised = true;
  });
  // relaxed: only this thread raises or lowers the flag; a stale raised flag costs a peer
  // one spurious wake, never a lost one.
  internal::sync_point();
  if (raised) sleeping.store(0, std::memory_order_relaxed);
  internal::sync_point();
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
}

void Mailboxes::send(int src, int dst, std::span<const std::byte> message) {
  if (static_cast<unsigned>(src) >= static_cast<unsigned>(p_)) [[unlikely]] check_rank(src, "send: source");
  if (static_cast<unsigned>(dst) >= static_cast<unsigned>(p_)) [[unlikely]] check_rank(dst, "send: destination");
  PB_CHECK(message.size() <= kMaxMessageBytes,
           "mailbox message of " + std::to_string(message.size()) + " bytes exceeds kMaxMessageBytes");
  internal::sync_point();
  if (aborted_.load(std::memory_order_acquire)) [[unlikely]] throw_aborted();
  // relaxed: only the thread acting as src ever stores this slot.
  const std::uintptr_t v = slot_ref(inboxes_[dst].from[src]).load(std::memory_order_relaxed);
  if (!is_ring(v)) [[unlikely]] {
    send_unringed(src, dst, message, v);
    return;
  }
  send_ring(*internal::ring_of(v), src, dst, message);
}

[[gnu::always_inline]] inline void Mailboxes::send_ring(Ring& r, int src, int dst, std::span<const std::byte> message) {
  const std::uint64_t n = message.size();
  const std::uint64_t total = record_bytes(n);
  if (total > r.chunk) [[unlikely]] {
    send_streamed(r, src, dst, message);
    return;
  }
  const std::uint64_t h = r.write;
  const std::uint64_t end = h + total;
  // The record plus the zero word after it must fit before tail + capacity.
  if (end + kHeaderBytes - r.cached_tail > r.capacity()) [[unlikely]] await_room(r, src, dst, h, total, n);
  if (n != 0) copy_in(r, h + kHeaderBytes, message.data(), n);
  if (end + kHeaderBytes > r.zeroed) [[unlikely]] {
    // relaxed: published by the release store of the header below.
    header_word(r, end).store(0, std::memory_order_relaxed);
    r.zeroed = end + kHeaderBytes;
  }
  internal::sync_point();
  // release: the payload and the next slot's zero before the header the consumer polls.
  header_word(r, h).store(n | kHeaderValid, std::memory_order_release);
  r.write = end;
  if (peer_sleeping(inboxes_[dst].receiver_sleeping)) [[unlikely]] wake(inboxes_[dst].recv_word);
  if (r.zeroed < line_floor(end) + 2 * kCacheLine) [[unlikely]] zero_ahead(r, end);
}

void Mailboxes::zero_ahead(Ring& r, std::uint64_t end) noexcept {
  // Only bytes the consumer is done with: below line_floor(tail) + capacity.
  const std::uint64_t to = std::min(line_floor(end) + 2 * kCacheLine, r.cached_tail + r.capacity());
  // relaxed: each zero is published by a later header store of this thread (release).
  for (std::uint64_t i = std::max(r.zeroed, end); i < to; i += kHeaderBytes) {
    header_word(r, i).store(0, std::memory_order_relaxed);
  }
  r.zeroed = std::max(r.zeroed, to);
}

void Mailboxes::await_room(Ring& r, int src, int dst, std::uint64_t h, std::uint64_t len, std::uint64_t n) {
  const std::uint64_t cap = r.capacity();
  internal::sync_point();
  // acquire: the consumer finished reading the bytes before it advanced tail past them.
  r.cached_tail = line_floor(r.tail.load(std::memory_order_acquire));
  if (h + len + kHeaderBytes - r.cached_tail <= cap) return;
  // relaxed: this thread is the ring's consumer too (self-messages have one thread).
  if (src == dst) [[unlikely]] fail_self_send(cap, r.write - r.tail.load(std::memory_order_relaxed), src, n);
  const auto room = [&] {
    return h + len + kHeaderBytes - line_floor(r.tail.load(std::memory_order_acquire)) <= cap;
  };
  await(r.producer_sleeping, inboxes_[src].space_word, room);
  internal::sync_point();
  r.cached_tail = line_floor(r.tail.load(std::memory_order_acquire));
}

void Mailboxes::send_streamed(Ring& r, int src, int dst, std::span<const std::byte> message) {
  Inbox& box = inboxes_[dst];
  const std::uint64_t n = message.size();
  const std::uint64_t total = record_bytes(n);
  const std::uint64_t start = r.write;
  std::uint64_t h = start;
  std::uint64_t pos = 0;
  while (pos < total) {
    const std::uint64_t len = std::min(total - pos, r.chunk);
    // 8 bytes stay free past every chunk, for the zero word that marks the next header slot.
    if (h + len + kHeaderBytes - r.cached_tail > r.capacity()) await_room(r, src, dst, h, len, n);
    const PayloadSlice s = payload_slice(pos, len, n);
    if (s.n != 0) copy_in(r, h + s.record_off, message.data() + s.payload_off, s.n);
    if (pos + len == total) {
      // relaxed: published by the release store of the header or of head below.
      header_word(r, start + total).store(0, std::memory_order_relaxed);
      r.zeroed = std::max(r.zeroed, start + total + kHeaderBytes);
    }
    internal::sync_point();
    // release: the first chunk before the header the consumer polls.
    if (pos == 0) header_word(r, start).store(n | kHeaderValid, std::memory_order_release);
    h += len;
    pos += len;
    internal::sync_point();
    // release: later chunks are published by head (the consumer's acquire load in take_streamed).
    r.head.store(h, std::memory_order_release);
    if (peer_sleeping(box.receiver_sleeping)) [[unlikely]] wake(box.recv_word);
  }
  r.write = h;
}

[[gnu::always_inline]] inline std::uint64_t Mailboxes::header_at_tail(const Ring& r) noexcept {
  const std::uint64_t t = r.tail.load(std::memory_order_relaxed);  // relaxed: the consumer's own index
  internal::sync_point();
  // acquire: pairs with the producer's release store of the header; the first chunk is visible.
  return header_word(const_cast<Ring&>(r), t).load(std::memory_order_acquire);
}

void Mailboxes::take_queue(Inbox& box) noexcept {
  internal::sync_point();
  // relaxed: a look before the exchange. After the caller's acquire load of a slot showing a
  // ring, it reads the pair's last push or a later value (the push happens before it), so an
  // empty queue means this thread has taken that push already.
  if (box.queue.load(std::memory_order_relaxed) == nullptr) return;
  internal::sync_point();
  // acquire: pairs with each sender's release compare-exchange; the nodes are complete.
  Queued* m = box.queue.exchange(nullptr, std::memory_order_acquire);
  Queued* oldest = nullptr;
  while (m != nullptr) {  // newest first on the stack: reverse
    Queued* next = m->next;
    m->next = oldest;
    oldest = m;
    m = next;
  }
  while (oldest != nullptr) {
    Queued* next = oldest->next;
    QueuedPair& q = box.queued[oldest->src];
    if (q.last != nullptr) {
      oldest->next = q.last->next;
      q.last->next = oldest;
    } else {
      oldest->next = oldest;
    }
    q.last = oldest;
    ++box.pending;
    oldest = next;
  }
}

Mailboxes::Next Mailboxes::next_from(int dst, int src, bool block) {
  Inbox& box = inboxes_[dst];
  QueuedPair& q = box.queued[src];
  for (;;) {
    if (q.last != nullptr) return {q.last->next, nullptr, 0};
    Ring* r = ring_from(dst, src);
    if (r == nullptr || r->queued_first) {
      take_queue(box);  // after the slot's acquire load: see take_queue()
      if (q.last != nullptr) return {q.last->next, nullptr, 0};
      if (r != nullptr) r->queued_first = false;  // every queued message of the pair is delivered
    }
    if (r != nullptr) {
      if (const std::uint64_t w = header_at_tail(*r); w != 0) return {nullptr, r, w};
    }
    if (!block) return {nullptr, nullptr, 0};
    if (dst == src) [[unlikely]] fail_self_recv(dst, "recv");
    // Polls the header slot only once the ring is first in line: one line, which also holds the
    // payload of a small message. Before, a push on the queue or the ring's publication.
    const auto ready = [&] {
      if (r != nullptr) return header_at_tail(*r) != 0;
      internal::sync_point();
      // acquire (both): pairs with the push's release compare-exchange and with make_ring().
      return box.queue.load(std::memory_order_acquire) != nullptr ||
             is_ring(slot_ref(box.from[src]).load(std::memory_order_acquire));
    };
    await(box.receiver_sleeping, box.recv_word, ready);
  }
}

void Mailboxes::take_queued(int dst, int src, std::byte* out) {
  Inbox& box = inboxes_[dst];
  QueuedPair& q = box.queued[src];
  Queued* m = q.last->next;
  if (m == q.last) {
    q.last = nullptr;
  } else {
    q.last->next = m->next;
  }
  --box.pending;
  const std::uint64_t n = m->size;
  if (n != 0) std::memcpy(out, m->payload(), n);
  ::operator delete(m);
  std::atomic_ref<std::uint64_t> taken(q.taken);
  // relaxed: this thread is the only one storing it.
  const std::uint64_t t = taken.load(std::memory_order_relaxed) + record_bytes(n);
  internal::sync_point();
  // release: pairs with the sender's acquire load when it counts its room.
  taken.store(t, std::memory_order_release);
  if (peer_sleeping(inboxes_[src].queued_sender_sleeping)) [[unlikely]] wake(inboxes_[src].space_word);
}

[[gnu::always_inline]] inline void Mailboxes::take(Ring& r, int dst, int src, std::uint64_t n, std::byte* out) {
  const std::uint64_t total = record_bytes(n);
  if (total > r.chunk) [[unlikely]] {
    take_streamed(r, dst, src, n, out);
    return;
  }
  const std::uint64_t t = r.tail.load(std::memory_order_relaxed);  // relaxed: the consumer's own index
  // Each header's address depends on the previous header's value, so without help the
  // consumer of a stream misses on one line at a time. A prefetch a few lines ahead (its
  // address does not depend on any loaded value) overlaps those misses.
  __builtin_prefetch(r.buf + ((t + kPrefetchAhead) & r.mask));
  if (n != 0) copy_out(r, t + kHeaderBytes, out, n);
  internal::sync_point();
  // release: the payload is read before the producer may overwrite it.
  r.tail.store(t + total, std::memory_order_release);
  if (peer_sleeping(r.producer_sleeping)) [[unlikely]] wake(inboxes_[src].space_word);
}

void Mailboxes::take_streamed(Ring& r, int dst, int src, std::uint64_t n, std::byte* out) {
  Inbox& mine = inboxes_[dst];
  Inbox& sender = inboxes_[src];
  const std::uint64_t total = record_bytes(n);
  std::uint64_t t = r.tail.load(std::memory_order_relaxed);  // relaxed: the consumer's own index
  // The producer wrote the whole first chunk before the header: no need to read head for it.
  // cached_head may lag far behind t (head does not move for one-chunk records).
  std::uint64_t avail = t + r.chunk;
  std::uint64_t pos = 0;
  while (pos < total) {
    if (avail <= t) {
      internal::sync_point();
      // acquire: pairs with the producer's head store.
      r.cached_head = r.head.load(std::memory_order_acquire);
      if (r.cached_head <= t) {
        // The message has started, so its sender is mid-stream and will publish more.
        const auto more = [&] { return r.head.load(std::memory_order_acquire) > t; };
        await(mine.receiver_sleeping, mine.recv_word, more);
        internal::sync_point();
        r.cached_head = r.head.load(std::memory_order_acquire);
      }
      avail = r.cached_head;
    }
    const std::uint64_t len = std::min({avail - t, total - pos, r.chunk});
    const PayloadSlice s = payload_slice(pos, len, n);
    if (s.n != 0) copy_out(r, t + s.record_off, out + s.payload_off, s.n);
    t += len;
    pos += len;
    internal::sync_point();
    // release: the bytes are read before the producer may overwrite them.
    r.tail.store(t, std::memory_order_release);
    if (peer_sleeping(r.producer_sleeping)) [[unlikely]] wake(sender.space_word);
  }
}

std::size_t Mailboxes::recv(int dst, int src, std::span<std::byte> out) {
  if (static_cast<unsigned>(dst) >= static_cast<unsigned>(p_)) [[unlikely]] check_rank(dst, "recv: destination");
  if (static_cast<unsigned>(src) >= static_cast<unsigned>(p_)) [[unlikely]] check_rank(src, "recv: source");
  internal::sync_point();
  if (aborted_.load(std::memory_order_acquire)) [[unlikely]] throw_aborted();
  Ring* r = ring_from(dst, src);
  // queued_first is on the line of tail, which header_at_tail() reads anyway.
  std::uint64_t w = r != nullptr && !r->queued_first ? header_at_tail(*r) : 0;
  if (w == 0) [[unlikely]] {
    const Next next = next_from(dst, src, true);
    if (next.queued != nullptr) {
      if (next.queued->size > out.size()) fail_too_small(src, next.queued->size, out.size());
      const std::size_t n = next.queued->size;
      take_queued(dst, src, out.data());
      return n;
    }
    r = next.ring;
    w = next.header;
  }
  const std::uint64_t n = w & ~kHeaderValid;
  if (n > out.size()) [[unlikely]] fail_too_small(src, n, out.size());
  take(*r, dst, src, n, out.data());
  return n;
}

void Mailboxes::fail_self_send(std::uint64_t capacity, std::uint64_t undelivered, int rank, std::uint64_t n) {
  PB_CHECK(false, "mailbox send: rank " + std::to_string(rank) + " sends itself a message of " + std::to_string(n) +
                      " bytes that does not fit its ring to itself (" + std::to_string(capacity) + " bytes, " +
                      std::to_string(undelivered) + " of them undelivered): nobody else would drain it");
}

void Mailboxes::fail_self_recv(int rank, const char* what) {
  PB_CHECK(false, std::string("mailbox ") + what + ": rank " + std::to_string(rank) +
                      " waits for a message from itself and none is pending: nobody else can send it");
}

void Mailboxes::fail_too_small(int src, std::uint64_t n, std::size_t room) {
  PB_CHECK(n <= room, "mailbox recv: message of " + std::to_string(n) + " bytes from rank " + std::to_string(src) +
                          " does not fit the " + std::to_string(room) + "-byte buffer");
}

std::vector<std::byte> Mailboxes::recv(int dst, int src) {
  if (static_cast<unsigned>(dst) >= static_cast<unsigned>(p_)) [[unlikely]] check_rank(dst, "recv: destination");
  if (static_cast<unsigned>(src) >= static_cast<unsigned>(p_)) [[unlikely]] check_rank(src, "recv: source");
  internal::sync_point();
  if (aborted_.load(std::memory_order_acquire)) [[unlikely]] throw_aborted();
  const Next next = next_from(dst, src, true);
  if (next.queued != nullptr) {
    std::vector<std::byte> out(next.queued->size);
    take_queued(dst, src, out.data());
    return out;
  }
  std::vector<std::byte> out(next.header & ~kHeaderValid);
  take(*next.ring, dst, src, out.size(), out.data());
  return out;
}

bool Mailboxes::try_recv(int dst, int src, std::span<std::byte> out, std::size_t& size) {
  check_rank(dst, "try_recv: destination");
  check_rank(src, "try_recv: source");
  internal::sync_point();
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  const Next next = next_from(dst, src, false);
  if (next.queued == nullptr && next.header == 0) return false;
  size = recv(dst, src, out);
  return true;
}

int Mailboxes::try_recv_any(int dst, std::span<std::byte> out, std::size_t& size) {
  check_rank(dst, "try_recv_any: destination");
  internal::sync_point();
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  Inbox& box = inboxes_[dst];
  take_queue(box);
  for (int i = 0; i < p_; ++i) {
    int src = box.next_any + i;
    if (src >= p_) src -= p_;
    // A queued message of src, or a header on its ring (recv() delivers whichever comes first).
    bool has = box.pending != 0 && box.queued[src].last != nullptr;
    if (!has) {
      Ring* r = ring_from(dst, src);
      has = r != nullptr && header_at_tail(*r) != 0;
    }
    if (has) {
      box.next_any = src + 1 == p_ ? 0 : src + 1;
      size = recv(dst, src, out);
      return src;
    }
  }
  return -1;
}

int Mailboxes::recv_any(int dst, std::span<std::byte> out, std::size_t& size) {
  check_rank(dst, "recv_any: destination");
  Inbox& box = inboxes_[dst];
  for (;;) {
    const int src = try_recv_any(dst, out, size);
    if (src >= 0) return src;
    if (p_ == 1) [[unlikely]] fail_self_recv(dst, "recv_any");
    const auto ready = [&] {
      internal::sync_point();
      // acquire: pairs with the push's release compare-exchange.
      if (box.queue.load(std::memory_order_acquire) != nullptr) return true;
      for (int s = 0; s < p_; ++s) {
        // acquire: pairs with make_ring().
        Ring* q = as_ring(slot_ref(box.from[s]).load(std::memory_order_acquire));
        if (q != nullptr && header_at_tail(*q) != 0) return true;
      }
      return false;
    };
    await(box.receiver_sleeping, box.recv_word, ready);
  }
}

void Mailboxes::abort() noexcept {
  // seq_cst: before the word increments below, so a waiter that loaded its word before the
  // increment and then checked aborted_ either saw true or sleeps on a value that changed.
  internal::sync_point();
  aborted_.store(true, std::memory_order_seq_cst);
  for (int d = 0; d < p_; ++d) {
    wake(inboxes_[d].recv_word);
    wake(inboxes_[d].space_word);
  }
}

void Mailboxes::discard_queued() noexcept {
  for (int d = 0; d < p_; ++d) {
    Inbox& box = inboxes_[d];
    take_queue(box);
    for (int s = 0; box.pending != 0 && s < p_; ++s) {
      QueuedPair& q = box.queued[s];
      while (q.last != nullptr) {
        Queued* m = q.last->next;
        if (m == q.last) {
          q.last = nullptr;
        } else {
          q.last->next = m->next;
        }
        --box.pending;
        // relaxed: no concurrent caller; counted as delivered, so the sender's room is whole.
        std::atomic_ref<std::uint64_t>(q.taken).fetch_add(record_bytes(m->size), std::memory_order_relaxed);
        ::operator delete(m);
      }
    }
  }
}

void Mailboxes::reset() {
  discard_queued();
  // relaxed: no concurrent caller (reset()'s requirement).
  for (Ring* r = made_.load(std::memory_order_relaxed); r != nullptr; r = r->next_made) r->clear();
  for (int d = 0; d < p_; ++d) {
    Inbox& box = inboxes_[d];
    box.receiver_sleeping.store(0, std::memory_order_relaxed);
    box.queued_sender_sleeping.store(0, std::memory_order_relaxed);
    box.next_any = 0;
  }
  // release: a thread that later sees aborted() == false through an acquire load also sees the
  // cleared rings (callers must still order reset() before use, e.g. by a join).
  aborted_.store(false, std::memory_order_release);
}

}  // namespace postbox
