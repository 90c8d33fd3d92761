#include "postbox/runtime/mailbox.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "mailbox_ring.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/internal/inject.hpp"

namespace postbox {

using internal::Inbox;
using internal::kCacheLine;
using internal::kHeaderBytes;
using internal::kHeaderValid;
using internal::record_bytes;
using internal::Ring;

namespace internal {

Ring::Ring(std::size_t capacity)
    : buf(static_cast<std::byte*>(::operator new(capacity, std::align_val_t{kCacheLine}))),
      mask(capacity - 1),
      chunk(capacity / 4) {
  std::memset(buf, 0, capacity);  // the first header slot must read "not yet"
  zeroed = capacity;               // and so does every later one of the first lap
}

Ring::~Ring() { ::operator delete(buf, std::align_val_t{kCacheLine}); }

void Ring::clear() noexcept {
  head.store(0, std::memory_order_relaxed);
  write = 0;
  zeroed = kHeaderBytes;
  tail.store(0, std::memory_order_relaxed);
  cached_tail = 0;
  cached_head = 0;
  producer_sleeping.store(0, std::memory_order_relaxed);
  std::memset(buf, 0, kHeaderBytes);
}

}  // namespace internal

namespace {

constexpr std::size_t kMinRingBytes = 4096;
// How far ahead of tail the consumer prefetches: 8 lines, well inside the smallest ring.
constexpr std::uint64_t kPrefetchAhead = 8 * kCacheLine;
constexpr std::size_t kMaxRingBytes = std::size_t{1} << 30;
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

// Bytes of one inbox's slot array, rounded up to whole cache lines.
std::size_t slot_array_bytes(int p) noexcept {
  const std::size_t raw = static_cast<std::size_t>(p) * sizeof(std::atomic<Ring*>);
  return (raw + kCacheLine - 1) / kCacheLine * kCacheLine;
}

}  // namespace

static_assert(alignof(Mailboxes) == kCacheLine && sizeof(Mailboxes) == kCacheLine,
              "Mailboxes: the fields every call reads fill one cache line of their own");

Mailboxes::Mailboxes(int p, MailboxOptions options)
    : p_(p),
      asymmetric_(options.use_membarrier && membarrier_ready()),
      options_(options),
      ring_capacity_(kMinRingBytes) {
  if (p < 1) throw InputError("mailboxes need at least 1 rank, got p = " + std::to_string(p));
  if (options_.ring_bytes > kMaxRingBytes) {
    throw InputError("mailbox ring_bytes must be at most 1 GiB, got " + std::to_string(options_.ring_bytes));
  }
  if (options_.wait.spin_ns < 0 || options_.wait.yield_ns < 0) {
    throw InputError("mailbox wait budgets must be non-negative");
  }
  while (ring_capacity_ < options_.ring_bytes) ring_capacity_ *= 2;
  inboxes_ = std::make_unique<Inbox[]>(static_cast<std::size_t>(p));
  const std::size_t slots_bytes = slot_array_bytes(p);
  for (int d = 0; d < p; ++d) {
    void* raw = ::operator new(slots_bytes, std::align_val_t{kCacheLine});
    inboxes_[d].from = static_cast<std::atomic<Ring*>*>(raw);
    for (int s = 0; s < p; ++s) new (&inboxes_[d].from[s]) std::atomic<Ring*>(nullptr);
  }
}

Mailboxes::~Mailboxes() {
  for (int d = 0; d < p_; ++d) {
    for (int s = 0; s < p_; ++s) delete inboxes_[d].from[s].load(std::memory_order_relaxed);
    ::operator delete(static_cast<void*>(inboxes_[d].from), std::align_val_t{kCacheLine});
  }
}

void Mailboxes::check_rank(int rank, const char* what) const {
  PB_CHECK(rank >= 0 && rank < p_, std::string("mailbox ") + what + " rank " + std::to_string(rank) +
                                       " is outside 0.." + std::to_string(p_ - 1));
}

void Mailboxes::throw_aborted() { throw Aborted(); }

[[gnu::always_inline]] inline Ring& Mailboxes::ring_to(int src, int dst) {
  std::atomic<Ring*>& slot = inboxes_[dst].from[src];
  // relaxed: only the thread acting as src ever stores this slot.
  Ring* r = slot.load(std::memory_order_relaxed);
  if (r == nullptr) [[unlikely]] r = create_ring(slot);
  return *r;
}

Ring* Mailboxes::create_ring(std::atomic<Ring*>& slot) {
  auto* r = new Ring(ring_capacity_);
  // release: the receiver's acquire load sees a constructed ring. Program order puts it before
  // the record's header store and the wake-up handshake after it, so a receiver that raised its
  // flag and found the slot empty is woken (see mailbox.hpp).
  internal::sync_point();
  slot.store(r, std::memory_order_release);
  return r;
}

[[gnu::always_inline]] inline Ring* Mailboxes::ring_from(int dst, int src) const noexcept {
  internal::sync_point();
  // acquire: pairs with the creating store in create_ring().
  return inboxes_[dst].from[src].load(std::memory_order_acquire);
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
  Ring& r = ring_to(src, dst);
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
  if (src == dst) [[unlikely]] fail_self_send(r, src, n);
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

std::uint64_t Mailboxes::await_header(int dst, int src, Ring*& r) {
  if (dst == src) [[unlikely]] fail_self_recv(dst, "recv");
  Inbox& box = inboxes_[dst];
  std::atomic<Ring*>& slot = box.from[src];
  // Polls the header slot only: one line, which also holds the payload of a small message.
  // A record is consumable once its header is out, whatever head says.
  const auto ready = [&] {
    Ring* q = slot.load(std::memory_order_acquire);  // acquire: pairs with create_ring()
    return q != nullptr && header_at_tail(*q) != 0;
  };
  await(box.receiver_sleeping, box.recv_word, ready);
  r = ring_from(dst, src);
  const std::uint64_t w = header_at_tail(*r);
  PB_CHECK(w != 0, "mailbox: woken without a header");
  return w;
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
  std::uint64_t w = r != nullptr ? header_at_tail(*r) : 0;
  if (w == 0) [[unlikely]] w = await_header(dst, src, r);
  const std::uint64_t n = w & ~kHeaderValid;
  if (n > out.size()) [[unlikely]] fail_too_small(src, n, out.size());
  take(*r, dst, src, n, out.data());
  return n;
}

void Mailboxes::fail_self_send(const Ring& r, int rank, std::uint64_t n) {
  // relaxed: this thread is the ring's consumer too (self-messages have one thread).
  const std::uint64_t undelivered = r.write - r.tail.load(std::memory_order_relaxed);
  PB_CHECK(false, "mailbox send: rank " + std::to_string(rank) + " sends itself a message of " + std::to_string(n) +
                      " bytes that does not fit its ring to itself (" + std::to_string(r.capacity()) + " bytes, " +
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
  Ring* r = ring_from(dst, src);
  std::uint64_t w = r != nullptr ? header_at_tail(*r) : 0;
  if (w == 0) w = await_header(dst, src, r);
  std::vector<std::byte> out(w & ~kHeaderValid);
  take(*r, dst, src, out.size(), out.data());
  return out;
}

bool Mailboxes::try_recv(int dst, int src, std::span<std::byte> out, std::size_t& size) {
  check_rank(dst, "try_recv: destination");
  check_rank(src, "try_recv: source");
  internal::sync_point();
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  Ring* r = ring_from(dst, src);
  if (r == nullptr || header_at_tail(*r) == 0) return false;
  size = recv(dst, src, out);
  return true;
}

int Mailboxes::try_recv_any(int dst, std::span<std::byte> out, std::size_t& size) {
  check_rank(dst, "try_recv_any: destination");
  internal::sync_point();
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  Inbox& box = inboxes_[dst];
  for (int i = 0; i < p_; ++i) {
    int src = box.next_any + i;
    if (src >= p_) src -= p_;
    Ring* r = ring_from(dst, src);
    if (r != nullptr && header_at_tail(*r) != 0) {
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
      for (int s = 0; s < p_; ++s) {
        Ring* q = box.from[s].load(std::memory_order_acquire);  // acquire: pairs with create_ring()
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

void Mailboxes::reset() {
  for (int d = 0; d < p_; ++d) {
    Inbox& box = inboxes_[d];
    for (int s = 0; s < p_; ++s) {
      if (Ring* r = box.from[s].load(std::memory_order_relaxed)) r->clear();
    }
    box.receiver_sleeping.store(0, std::memory_order_relaxed);
    box.next_any = 0;
  }
  // release: a thread that later sees aborted() == false through an acquire load also sees the
  // cleared rings (callers must still order reset() before use, e.g. by a join).
  aborted_.store(false, std::memory_order_release);
}

}  // namespace postbox
