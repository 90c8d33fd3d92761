// The text forms of an emulated run's trace: the Chrome trace-event JSON of a SimResult and the
// names of a mesh's channels (its track names).
#pragma once

#include <iosfwd>
#include <string>

#include "postbox/emulator/schedule.hpp"
#include "postbox/emulator/simulator.hpp"

namespace postbox::sim {

// "+x", "-y", ... up to the sixth axis, then "+dN" with N the dim's index; empty for inject and
// eject.
std::string link_direction(const LinkPlace& place);
// "node 3 +x", "node 3 -y vc1" (the vc only where the mesh has more than one), "node 3 inject",
// "node 3 eject": the trace's track names.
std::string link_name(const LinkPlace& place);

// Chrome trace-event JSON (opens in Perfetto / chrome://tracing): process 1 has a track per
// rank, process 2 a track per link that carried traffic. Deterministic text.
void write_chrome_trace(std::ostream& out, const SimResult& result, const Schedule& schedule, const Machine& machine);
void write_chrome_trace(std::ostream& out, const SimResult& result, const Plan& plan, const Machine& machine);

}  // namespace postbox::sim
