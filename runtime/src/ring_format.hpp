// The record format of a mailbox ring (mailbox_ring.hpp), the part of the mailboxes' layout that
// plan.cpp needs to size rings and to check that a plan fits them: the bytes a message takes in
// a ring and the bytes a sender can never count on.
#pragma once

#include <cstdint>

#include "postbox/runtime/internal/sync.hpp"  // kCacheLine

namespace postbox::internal {

// Record framing: an 8-byte header (payload size | kHeaderValid), the payload, then padding to
// 8 bytes, so indices stay multiples of 8 and a header never wraps around the buffer's end.
// The producer keeps the 8 bytes after its last record zero (it writes that zero before it
// publishes the record), so the consumer polls the next header slot itself: zero means "not
// yet", and stale payload bytes of an earlier lap never sit there. A small message then reaches
// the receiver in the one cache line that holds its header and payload, and every byte of the
// buffer is written by the producer only (a consumer that zeroed consumed headers would pull
// the line the producer is filling back and forth). The first chunk of a record (up to `chunk`
// bytes) is written before its header; later chunks of a streamed record are published by head.
inline constexpr std::uint64_t kHeaderBytes = 8;
inline constexpr std::uint64_t kHeaderValid = std::uint64_t{1} << 63;
constexpr std::uint64_t record_bytes(std::uint64_t payload) { return kHeaderBytes + ((payload + 7) & ~std::uint64_t{7}); }
// Bytes of a ring that a sender can never count on: the 8-byte end mark after its last record,
// and up to 56 bytes of the line the consumer is still reading (the producer counts tail down
// to its cache line). Records of undelivered messages totalling at most capacity - kRingReserve
// always fit without the receiver's help.
inline constexpr std::uint64_t kRingReserve = kCacheLine;

}  // namespace postbox::internal
