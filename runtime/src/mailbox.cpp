#include "postbox/runtime/mailbox.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <string>

#include "mailbox_ring.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox {

using internal::Inbox;
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
}

Ring::~Ring() { ::operator delete(buf, std::align_val_t{kCacheLine}); }

void Ring::clear() noexcept {
  head.store(0, std::memory_order_relaxed);
  tail.store(0, std::memory_order_relaxed);
  cached_tail = 0;
  cached_head = 0;
  producer_sleeping.store(0, std::memory_order_relaxed);
  std::memset(buf, 0, kHeaderBytes);
}

}  // namespace internal

namespace {

constexpr std::size_t kMinRingBytes = 4096;
constexpr std::size_t kMaxRingBytes = std::size_t{1} << 30;
// Yield budget of the first waiting stage: long enough that wait_until() never reaches its own
// block phase there (about 31 years); the stage ends on its own deadline instead.
constexpr std::int64_t kNeverNs = 1'000'000'000'000'000'000;

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

std::atomic_ref<std::uint64_t> header_word(Ring& r, std::uint64_t index) noexcept {
  // 8-aligned, so a header never wraps; the buffer is 64-aligned.
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(r.buf + (index & r.mask)));
}

void copy_in(Ring& r, std::uint64_t index, const std::byte* src, std::uint64_t n) noexcept {
  const std::uint64_t off = index & r.mask;
  const std::uint64_t first = std::min(n, r.capacity() - off);
  std::memcpy(r.buf + off, src, first);
  if (n > first) std::memcpy(r.buf, src + first, n - first);
}

void copy_out(const Ring& r, std::uint64_t index, std::byte* dst, std::uint64_t n) noexcept {
  const std::uint64_t off = index & r.mask;
  const std::uint64_t first = std::min(n, r.capacity() - off);
  std::memcpy(dst, r.buf + off, first);
  if (n > first) std::memcpy(dst + first, r.buf, n - first);
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

}  // namespace

Mailboxes::Mailboxes(int p, MailboxOptions options)
    : p_(p), options_(options), ring_capacity_(kMinRingBytes), asymmetric_(membarrier_ready()) {
  if (p < 1) throw InputError("mailboxes need at least 1 rank, got p = " + std::to_string(p));
  if (options_.ring_bytes > kMaxRingBytes) {
    throw InputError("mailbox ring_bytes must be at most 1 GiB, got " + std::to_string(options_.ring_bytes));
  }
  if (options_.wait.spin_ns < 0 || options_.wait.yield_ns < 0) {
    throw InputError("mailbox wait budgets must be non-negative");
  }
  while (ring_capacity_ < options_.ring_bytes) ring_capacity_ *= 2;
  inboxes_ = std::make_unique<Inbox[]>(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    inboxes_[d].from = new std::atomic<Ring*>[static_cast<std::size_t>(p)];
    for (int s = 0; s < p; ++s) inboxes_[d].from[s].store(nullptr, std::memory_order_relaxed);
  }
}

Mailboxes::~Mailboxes() {
  for (int d = 0; d < p_; ++d) {
    for (int s = 0; s < p_; ++s) delete inboxes_[d].from[s].load(std::memory_order_relaxed);
    delete[] inboxes_[d].from;
  }
}

void Mailboxes::check_rank(int rank, const char* what) const {
  PB_CHECK(rank >= 0 && rank < p_, std::string("mailbox ") + what + " rank " + std::to_string(rank) +
                                       " is outside 0.." + std::to_string(p_ - 1));
}

void Mailboxes::throw_aborted() { throw Aborted(); }

Ring& Mailboxes::ring_to(int src, int dst) {
  std::atomic<Ring*>& slot = inboxes_[dst].from[src];
  // relaxed: only the thread acting as src ever stores this slot.
  Ring* r = slot.load(std::memory_order_relaxed);
  if (r == nullptr) [[unlikely]] {
    r = new Ring(ring_capacity_);
    // seq_cst: release so the receiver's acquire load sees a constructed ring; and ordered
    // before this sender's first index publication, so the handshake on head also covers the
    // slot (a receiver that raised its flag and found the slot empty gets woken).
    slot.store(r, std::memory_order_seq_cst);
  }
  return *r;
}

Ring* Mailboxes::ring_from(int dst, int src) const noexcept {
  // acquire: pairs with the creating store in ring_to().
  return inboxes_[dst].from[src].load(std::memory_order_acquire);
}

bool Mailboxes::publish(std::atomic<std::uint64_t>& index, std::uint64_t value,
                        const std::atomic<std::uint32_t>& peer_sleeping) const noexcept {
  if (asymmetric_) [[likely]] {
    // release: publishes the ring bytes. The compiler barrier keeps the flag load after the
    // store in program order; the waiter's membarrier() makes that order hold in hardware.
    index.store(value, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return peer_sleeping.load(std::memory_order_relaxed) != 0;
  }
  // seq_cst store then seq_cst load: the symmetric Dekker handshake (a full fence per call).
  index.store(value, std::memory_order_seq_cst);
  return peer_sleeping.load(std::memory_order_seq_cst) != 0;
}

void Mailboxes::raise(std::atomic<std::uint32_t>& sleeping) const {
  // seq_cst: the waiter's half of the symmetric handshake; under membarrier the syscall below
  // is the full fence in every running thread of the process, peers included.
  sleeping.store(1, std::memory_order_seq_cst);
  if (asymmetric_) {
    PB_CHECK(::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0, "membarrier failed");
  }
}

bool Mailboxes::aborted() const noexcept { return aborted_.load(std::memory_order_acquire); }

template <class Fast, class Sure>
void Mailboxes::await(std::atomic<std::uint32_t>& sleeping, std::atomic<std::uint32_t>& word, Fast&& fast,
                      Sure&& sure) {
  // acquire on aborted_: whatever the aborting thread wrote before abort() is visible to the
  // catch handler.
  const auto done_fast = [&] { return fast() || aborted_.load(std::memory_order_acquire); };
  const auto done = [&] { return sure() || aborted_.load(std::memory_order_acquire); };
  const WaitPolicy& policy = options_.wait;
  if (policy.spin_ns > 0) {
    // A short poll before wait_until(), whose first act is a clock read (tens of ns, about
    // what a streaming peer needs to publish the next message). Part of the spin budget.
    for (int i = 0; i < 32; ++i) {
      cpu_relax();
      if (done_fast()) break;
    }
  }
  if (policy.spin_ns + policy.yield_ns > 0 && !done_fast()) {
    // Stage 1: spin, then yield, with the flag down: the peer's fast path pays nothing. The
    // predicate's call counter only thins out clock reads; it does not change its answer.
    // The deadline is taken on the 16th call, not up front: most waits end sooner, and a clock
    // read costs as much as several polls.
    using clock = std::chrono::steady_clock;
    const auto budget = std::chrono::nanoseconds(policy.spin_ns + policy.yield_ns);
    clock::time_point deadline{};
    unsigned calls = 0;
    const auto done_or_late = [&] {
      if (done_fast()) return true;
      if ((++calls & 15u) != 0) return false;
      if (calls == 16) deadline = clock::now() + budget;
      return clock::now() >= deadline;
    };
    (void)wait_until(WaitPolicy{policy.spin_ns, kNeverNs}, word, done_or_late);
  }
  if (!done()) {
    // Stage 2: raise the flag, then block. The predicate's seq_cst loads complete the waiter's
    // half of the handshake (see mailbox.hpp).
    raise(sleeping);
    (void)wait_until(WaitPolicy{0, 0}, word, done);
    // relaxed: only this thread raises or lowers the flag; a stale raised flag costs a peer
    // one spurious wake, never a lost one.
    sleeping.store(0, std::memory_order_relaxed);
  }
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
}

void Mailboxes::send(int src, int dst, std::span<const std::byte> message) {
  check_rank(src, "send: source");
  check_rank(dst, "send: destination");
  PB_CHECK(message.size() <= kMaxMessageBytes,
           "mailbox message of " + std::to_string(message.size()) + " bytes exceeds kMaxMessageBytes");
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  Ring& r = ring_to(src, dst);
  Inbox& box = inboxes_[dst];
  const std::uint64_t n = message.size();
  const std::uint64_t total = record_bytes(n);
  // 8 bytes stay free past every record, for the zero word that marks the next header slot.
  const std::uint64_t usable = r.capacity() - kHeaderBytes;
  std::uint64_t h = r.head.load(std::memory_order_relaxed);  // relaxed: the producer's own index
  const std::uint64_t start = h;
  std::uint64_t pos = 0;
  while (pos < total) {
    const std::uint64_t len = std::min(total - pos, r.chunk);
    const std::uint64_t need = len;
    if (usable - (h - r.cached_tail) < need) {
      // acquire: the consumer finished reading the bytes before it advanced tail past them.
      r.cached_tail = r.tail.load(std::memory_order_acquire);
      if (usable - (h - r.cached_tail) < need) {
        // seq_cst: the producer's half of the Dekker load (see mailbox.hpp).
        const auto room = [&] { return usable - (h - r.tail.load(std::memory_order_seq_cst)) >= need; };
        await(r.producer_sleeping, inboxes_[src].space_word, room, room);
        r.cached_tail = r.tail.load(std::memory_order_acquire);
      }
    }
    const PayloadSlice s = payload_slice(pos, len, n);
    if (s.n != 0) copy_in(r, h + s.record_off, message.data() + s.payload_off, s.n);
    // relaxed: published by the release store of the header or of head below.
    if (pos + len == total) header_word(r, start + total).store(0, std::memory_order_relaxed);
    // release: the payload (and the next slot's zero) before the header the consumer polls.
    if (pos == 0) header_word(r, start).store(n | kHeaderValid, std::memory_order_release);
    h += len;
    pos += len;
    if (publish(r.head, h, box.receiver_sleeping)) [[unlikely]] wake(box.recv_word);
  }
}

bool Mailboxes::header_ready(Ring& r) noexcept {
  const std::uint64_t t = r.tail.load(std::memory_order_relaxed);  // relaxed: the consumer's own index
  // acquire: pairs with the producer's release store of the header; the first chunk is visible.
  return header_word(r, t).load(std::memory_order_acquire) != 0;
}

std::uint64_t Mailboxes::await_header(int dst, int src, Ring*& r) {
  Inbox& box = inboxes_[dst];
  if (r == nullptr || !header_ready(*r)) {
    std::atomic<Ring*>& slot = box.from[src];
    // Spinning polls the header slot only (one line, with the payload of a small message);
    // before blocking, seq_cst loads of the slot and of head: the receiver's half of the handshake.
    // head may lag tail: a record is consumable once its header is out, before head moves.
    const auto fast = [&] {
      Ring* q = slot.load(std::memory_order_acquire);
      return q != nullptr && header_ready(*q);
    };
    const auto sure = [&] {
      Ring* q = slot.load(std::memory_order_seq_cst);
      return q != nullptr && (q->head.load(std::memory_order_seq_cst) > q->tail.load(std::memory_order_relaxed) ||
                              header_ready(*q));
    };
    await(box.receiver_sleeping, box.recv_word, fast, sure);
    r = ring_from(dst, src);
    PB_CHECK(header_ready(*r), "mailbox: woken without a header");
  }
  // relaxed: header_ready() loaded it with acquire; only the producer writes it.
  return header_word(*r, r->tail.load(std::memory_order_relaxed)).load(std::memory_order_relaxed) & ~kHeaderValid;
}

void Mailboxes::consume(Ring& r, int dst, int src, std::uint64_t n, std::byte* out) {
  Inbox& mine = inboxes_[dst];
  Inbox& sender = inboxes_[src];
  const std::uint64_t total = record_bytes(n);
  std::uint64_t t = r.tail.load(std::memory_order_relaxed);  // relaxed: the consumer's own index
  // The producer wrote the whole first chunk before the header: no need to read head for it.
  r.cached_head = std::max(r.cached_head, t + std::min(total, r.chunk));
  std::uint64_t pos = 0;
  while (pos < total) {
    if (r.cached_head == t) {
      // acquire: pairs with the producer's head store.
      r.cached_head = r.head.load(std::memory_order_acquire);
      if (r.cached_head == t) {
        // The message has started, so its sender is mid-stream and will publish more.
        // seq_cst: the receiver's half of the Dekker handshake.
        const auto more = [&] { return r.head.load(std::memory_order_seq_cst) > t; };
        await(mine.receiver_sleeping, mine.recv_word, more, more);
        r.cached_head = r.head.load(std::memory_order_acquire);
      }
    }
    const std::uint64_t len = std::min({r.cached_head - t, total - pos, r.chunk});
    const PayloadSlice s = payload_slice(pos, len, n);
    if (s.n != 0) copy_out(r, t + s.record_off, out + s.payload_off, s.n);
    t += len;
    pos += len;
    if (publish(r.tail, t, r.producer_sleeping)) [[unlikely]] wake(sender.space_word);
  }
}

std::size_t Mailboxes::recv(int dst, int src, std::span<std::byte> out) {
  check_rank(dst, "recv: destination");
  check_rank(src, "recv: source");
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  Ring* r = ring_from(dst, src);
  const std::uint64_t n = await_header(dst, src, r);
  PB_CHECK(n <= out.size(), "mailbox recv: message of " + std::to_string(n) + " bytes from rank " +
                                std::to_string(src) + " does not fit the " + std::to_string(out.size()) +
                                "-byte buffer");
  consume(*r, dst, src, n, out.data());
  return n;
}

std::vector<std::byte> Mailboxes::recv(int dst, int src) {
  check_rank(dst, "recv: destination");
  check_rank(src, "recv: source");
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  Ring* r = ring_from(dst, src);
  const std::uint64_t n = await_header(dst, src, r);
  std::vector<std::byte> out(n);
  consume(*r, dst, src, n, out.data());
  return out;
}

bool Mailboxes::try_recv(int dst, int src, std::span<std::byte> out, std::size_t& size) {
  check_rank(dst, "try_recv: destination");
  check_rank(src, "try_recv: source");
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  Ring* r = ring_from(dst, src);
  if (r == nullptr || !header_ready(*r)) return false;
  size = recv(dst, src, out);
  return true;
}

int Mailboxes::try_recv_any(int dst, std::span<std::byte> out, std::size_t& size) {
  check_rank(dst, "try_recv_any: destination");
  if (aborted_.load(std::memory_order_acquire)) throw_aborted();
  Inbox& box = inboxes_[dst];
  for (int i = 0; i < p_; ++i) {
    int src = box.next_any + i;
    if (src >= p_) src -= p_;
    Ring* r = ring_from(dst, src);
    if (r != nullptr && header_ready(*r)) {
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
    // seq_cst: the receiver's half of the Dekker handshake, on every slot and head.
    const auto fast = [&] {
      for (int s = 0; s < p_; ++s) {
        Ring* q = box.from[s].load(std::memory_order_acquire);
        if (q != nullptr && header_ready(*q)) return true;
      }
      return false;
    };
    const auto sure = [&] {
      for (int s = 0; s < p_; ++s) {
        Ring* q = box.from[s].load(std::memory_order_seq_cst);
        if (q != nullptr && (q->head.load(std::memory_order_seq_cst) > q->tail.load(std::memory_order_relaxed) ||
                             header_ready(*q))) {
          return true;
        }
      }
      return false;
    };
    await(box.receiver_sleeping, box.recv_word, fast, sure);
  }
}

void Mailboxes::abort() noexcept {
  // seq_cst: before the word increments below, so a waiter that loaded its word before the
  // increment and then checked aborted_ either saw true or sleeps on a value that changed.
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
