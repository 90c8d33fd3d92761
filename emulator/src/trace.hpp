// Tracing as an observer of a run. The engine (simulator.cpp) reports each span a rank's CPU is
// busy, the mesh network (mesh_network.hpp) each span a packet holds a channel and, at the end,
// where each channel that carried traffic is. SimOptions::trace records them into SimResult
// (TraceRecorder); an untraced run has no observer, and each report point costs one test of a
// null pointer.
#pragma once

#include <cstdint>
#include <vector>

#include "postbox/emulator/simulator.hpp"
#include "postbox/runtime/ticks.hpp"

namespace postbox::sim::detail {

class Observer {
 public:
  virtual ~Observer() = default;
  // Rank `rank`'s CPU is busy over [begin, end]: what as Span::what (send, recv, reduce, copy,
  // calc), peer the message's other rank (-1 for local work).
  virtual void rank_span(int rank, Ticks begin, Ticks end, std::uint8_t what, int peer) = 0;
  // A packet of the message src → dst holds channel `link` over [begin, end].
  virtual void link_span(std::int64_t link, Ticks begin, Ticks end, int src, int dst) = 0;
  // Where channel `link` is; reported once per channel that carried traffic, after the run.
  virtual void link_place(std::int64_t link, const LinkPlace& place) = 0;
};

// Records the spans into SimResult's rank_spans, link_spans and links, in the order reported.
class TraceRecorder final : public Observer {
 public:
  void rank_span(int rank, Ticks begin, Ticks end, std::uint8_t what, int peer) override;
  void link_span(std::int64_t link, Ticks begin, Ticks end, int src, int dst) override;
  void link_place(std::int64_t link, const LinkPlace& place) override;
  // Moves what was recorded into `result`.
  void move_into(SimResult& result);

 private:
  std::vector<Span> rank_spans_;
  std::vector<Span> link_spans_;
  std::vector<LinkPlace> links_;  // link index → its place; unused where nothing crossed
};

}  // namespace postbox::sim::detail
