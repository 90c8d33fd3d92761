// The trace observer (trace.hpp) and the Chrome trace written from what it recorded.
#include "trace.hpp"

#include <utility>

namespace postbox::sim {
namespace detail {

void TraceRecorder::rank_span(int rank, Ticks begin, Ticks end, std::uint8_t what, int peer) {
  rank_spans_.push_back(Span{rank, to_units(begin), to_units(end), what, peer, -1});
}

void TraceRecorder::link_span(std::int64_t link, Ticks begin, Ticks end, int src, int dst) {
  link_spans_.push_back(Span{static_cast<int>(link), to_units(begin), to_units(end), 4, src, dst});
}

void TraceRecorder::link_place(std::int64_t link, const LinkPlace& place) {
  const auto l = static_cast<std::size_t>(link);
  if (links_.size() <= l) links_.resize(l + 1);
  links_[l] = place;
}

void TraceRecorder::move_into(SimResult& result) {
  result.rank_spans = std::move(rank_spans_);
  result.link_spans = std::move(link_spans_);
  result.links = std::move(links_);
}

}  // namespace detail

}  // namespace postbox::sim
